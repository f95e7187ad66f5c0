// A manager's services and tasks on the replicated store: create/list/inspect/update/remove of
// services (version compare-and-swap, rollback to PreviousSpec, `service` events of scope swarm),
// list/inspect of tasks; the agents' sync (task states reported by a node, its tasks answered) is
// agent-sync.ts's, reached as `agents`.
import { invalidParameter } from '../../errors.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { ClusterObject, ObjectUpdateOptions } from '../../types/cluster.ts';
import type { Logger } from '../../util/log.ts';
import { ClusterCache } from '../store/cluster-cache.ts';
import { newId } from '../ids.ts';
import { dropClientPullOptions, setPullAuth, updatedPullAuth } from './pull-options.ts';
import { notAppliedWarnings } from './spec-warnings.ts';
import { allocatePorts, freePorts } from './published-ports.ts';
import { claimServiceVips, freeServiceVips, resolveNetworkTargets, type VirtualIP } from './service-vips.ts';
import type { NodeRecord } from './nodes.ts';
import { parseConstraints, parsePreferences } from './scheduler.ts';
import { AgentSync, agentKey } from './agent-sync.ts';
import {
  checkNameFree,
  checkServiceSpec,
  filterServices,
  findService,
  modeOf,
  rolledBack,
  serviceKey,
  serviceCounts,
  serviceView,
  tasksChanged,
  type ServiceRecord,
} from './service-spec.ts';
import type { FileObjectHooks } from './secrets-api.ts';
import type { ClusterStore, Stored } from '../store/store.ts';
import { filterTasks, findTask, taskKey, taskView, type TaskRecord, type TaskView } from './tasks.ts';

export { serviceKey } from './service-spec.ts';
export { taskKey } from './tasks.ts';
export { inParallel } from './in-parallel.ts';
export { agentKey, SYNC_WAIT_MS, type AgentSyncRequest, type SyncAnswer, type TaskReport } from './agent-sync.ts';

export class ServicesApi {
  /** The watch-fed copy the orchestrator and the agents' syncs read (cluster-cache.ts). */
  readonly cache: ClusterCache;
  /** The agents' syncs: their task reports in, their tasks out (agent-sync.ts). */
  readonly agents: AgentSync;

  constructor(
    private readonly store: ClusterStore,
    private readonly events: EventPublisher | undefined,
    private readonly files?: FileObjectHooks,
    log?: Logger,
  ) {
    this.cache = new ClusterCache(store, log);
    this.agents = new AgentSync(store, this.cache, () => this.tasks(), files);
  }

  /** Reads and follows services, tasks and nodes, so agents and the orchestrator hear of changes at once. */
  async watch(): Promise<void> {
    await this.cache.start();
  }

  onChange(fn: () => void): void {
    this.cache.onChange(fn);
  }

  async close(): Promise<void> {
    await this.cache.close().catch(() => undefined); // A watch whose store connection is already gone has nothing left to cancel.
  }

  async services(): Promise<Stored<ServiceRecord>[]> {
    return this.store.list<ServiceRecord>('services/');
  }

  async tasks(): Promise<Stored<TaskRecord>[]> {
    return this.store.list<TaskRecord>('tasks/');
  }

  private publish(action: string, s: ServiceRecord, extra: Record<string, string> = {}): void {
    this.events?.publish({
      Type: 'service',
      Action: action,
      Actor: { ID: s.ID, Attributes: { name: String(s.Spec.Name ?? ''), ...extra } },
      scope: 'swarm',
    });
  }

  async create(body: ClusterObject, registryAuth?: string): Promise<{ ID: string; Warnings: string[] }> {
    dropClientPullOptions(body);
    const spec = checkServiceSpec(body);
    setPullAuth(spec, registryAuth);
    parseConstraints(((spec.TaskTemplate as ClusterObject).Placement as ClusterObject | undefined)?.Constraints);
    parsePreferences(((spec.TaskTemplate as ClusterObject).Placement as ClusterObject | undefined)?.Preferences);
    await this.files?.checkRefs(spec.TaskTemplate as ClusterObject);
    const id = newId();
    if (!spec.Name) spec.Name = `service-${id.slice(0, 8)}`;
    checkNameFree(
      (await this.services()).map((s) => s.value),
      String(spec.Name),
    );
    const now = new Date().toISOString();
    await resolveNetworkTargets(this.store, spec);
    const rec: ServiceRecord = { ID: id, CreatedAt: now, UpdatedAt: now, Spec: spec, SpecVersion: 1 };
    if (modeOf(spec).endsWith('-job')) rec.JobIteration = 0;
    const { ports } = await allocatePorts(this.store, id, spec, []);
    if (ports.length) rec.Ports = ports;
    let vips: VirtualIP[] = [];
    try {
      vips = (await claimServiceVips(this.store, id, spec, [], ports)).vips;
      if (vips.length) rec.VirtualIPs = vips;
      await this.store.create(serviceKey(id), rec);
    } catch (err) {
      await freeServiceVips(this.store, id, vips).catch(() => undefined); // the store failing too: the create's own error is the one reported
      await freePorts(this.store, ports).catch(() => undefined); // the store failing too, as above
      throw err;
    }
    this.publish('create', rec);
    return { ID: id, Warnings: notAppliedWarnings(spec) };
  }

  private async find(ref: string): Promise<Stored<ServiceRecord>> {
    const all = await this.services();
    const rec = findService(
      all.map((s) => s.value),
      ref,
    );
    return all.find((s) => s.value.ID === rec.ID)!;
  }

  async list(filters: Map<string, string[]>, status: boolean): Promise<ClusterObject[]> {
    const all = await this.services();
    const keep = new Set(
      filterServices(
        all.map((s) => s.value),
        filters,
      ).map((s) => s.ID),
    );
    // Counts from the watch-fed copy when there is one (no listing of every task per request).
    const cached = this.cache.ready ? this.cache.taskList() : undefined;
    const tasks = status ? (cached ?? (await this.tasks())).map((t) => t.value) : [];
    return all
      .filter((s) => keep.has(s.value.ID))
      .map((s) => serviceView(s.value, s.version, status ? { counts: serviceCounts(s.value, tasks) } : {}));
  }

  async inspect(ref: string, insertDefaults: boolean): Promise<ClusterObject> {
    const s = await this.find(ref);
    return serviceView(s.value, s.version, { insertDefaults });
  }

  async update(ref: string, body: ClusterObject, opts: ObjectUpdateOptions): Promise<{ Warnings: string[] }> {
    const s = await this.find(ref);
    const cur = s.value;
    const next = await updatedRecord(cur, body, opts, this.store, this.files);
    // VIPs follow the networks: new ones claimed before the write (freed again if it fails, e.g. a
    // stale version), those of networks left freed after it.
    // Published ports likewise: a port the service held stays (a dynamic one too).
    const pa = await allocatePorts(this.store, cur.ID, next.Spec, cur.Ports ?? []);
    if (pa.ports.length) next.Ports = pa.ports;
    else delete next.Ports;
    let va: Awaited<ReturnType<typeof claimServiceVips>>;
    try {
      va = await claimServiceVips(this.store, cur.ID, next.Spec, cur.VirtualIPs ?? [], pa.ports);
    } catch (err) {
      await freePorts(this.store, pa.claimed).catch(() => undefined); // the store failing too: the VIP claim's own error is the one reported
      throw err;
    }
    if (va.vips.length) next.VirtualIPs = va.vips;
    else delete next.VirtualIPs;
    await this.store.update(serviceKey(cur.ID), next, opts.version).catch(async (err: Error) => {
      await freeServiceVips(this.store, cur.ID, va.claimed).catch(() => undefined); // the store failing too: the update's own error is the one reported
      await freePorts(this.store, pa.claimed).catch(() => undefined); // the store failing too, as above
      throw err;
    });
    await freeServiceVips(this.store, cur.ID, va.unused);
    await freePorts(this.store, pa.unused);
    this.publish('update', next);
    return { Warnings: notAppliedWarnings(next.Spec) };
  }

  async remove(ref: string): Promise<void> {
    const s = await this.find(ref);
    await this.store.delete(serviceKey(s.value.ID));
    await freeServiceVips(this.store, s.value.ID, s.value.VirtualIPs ?? []);
    await freePorts(this.store, s.value.Ports ?? []);
    // The tasks go with the service; each node's agent then removes their containers.
    for (const t of await this.tasks()) if (t.value.ServiceID === s.value.ID) await this.store.delete(taskKey(t.value.ID));
    this.publish('remove', s.value);
  }

  async listTasks(filters: Map<string, string[]>, nodes: NodeRecord[]): Promise<TaskView[]> {
    const [tasks, services] = await Promise.all([this.tasks(), this.services()]);
    const svc = services.map((s) => s.value);
    const keep = new Set(
      filterTasks(
        tasks.map((t) => t.value),
        filters,
        {
          serviceIds: (ref) => svc.filter((s) => s.ID === ref || s.Spec.Name === ref || s.ID.startsWith(ref)).map((s) => s.ID),
          upToDate: (t) => svc.find((s) => s.ID === t.ServiceID)?.SpecVersion === t.SpecVersion,
          serviceLabels: (t) => (svc.find((s) => s.ID === t.ServiceID)?.Spec.Labels as Record<string, string> | undefined) ?? {},
          nodeIds: (ref) => nodes.filter((n) => n.ID === ref || n.Description.Hostname === ref || n.ID.startsWith(ref)).map((n) => n.ID),
        },
      ).map((t) => t.ID),
    );
    return tasks.filter((t) => keep.has(t.value.ID)).map((t) => taskView(t.value, t.version));
  }

  async inspectTask(ref: string): Promise<TaskView> {
    const all = await this.tasks();
    const t = findTask(
      all.map((x) => x.value),
      ref,
    );
    const s = all.find((x) => x.value.ID === t.ID)!;
    return taskView(s.value, s.version);
  }

  /** The endpoint address of a node's agent, for its tasks' logs. */
  async agentAddr(nodeId: string): Promise<string | undefined> {
    return (await this.store.get<{ addr?: string }>(agentKey(nodeId)))?.value.addr;
  }

  /** The service and its tasks (for logs). */
  async serviceTasks(ref: string): Promise<TaskRecord[]> {
    const s = await this.find(ref);
    return (await this.tasks()).map((t) => t.value).filter((t) => t.ServiceID === s.value.ID);
  }

  async findTask(ref: string): Promise<TaskRecord> {
    return findTask(
      (await this.tasks()).map((t) => t.value),
      ref,
    );
  }
}

/**
 * What an update makes of a service record: the previous spec back (`rollback`), or the new spec
 * checked (pull auth kept or taken from the request, placement, secret and config references,
 * network targets, name and mode unchanged) with a new spec version when its tasks change.
 */
async function updatedRecord(
  cur: ServiceRecord,
  body: ClusterObject,
  opts: ObjectUpdateOptions,
  store: ClusterStore,
  files: FileObjectHooks | undefined,
): Promise<ServiceRecord> {
  if (opts.registryAuthFrom !== undefined && !['spec', 'previous-spec', ''].includes(opts.registryAuthFrom))
    throw invalidParameter(`invalid registryAuthFrom: ${JSON.stringify(opts.registryAuthFrom)}: "spec" or "previous-spec" expected`);
  if (opts.rollback !== undefined && opts.rollback !== '' && opts.rollback !== 'previous')
    throw invalidParameter(`invalid rollback: ${JSON.stringify(opts.rollback)}: only "previous" is allowed`);
  const now = new Date().toISOString();
  let next: ServiceRecord;
  if (opts.rollback === 'previous') {
    next = rolledBack(cur, now);
  } else {
    dropClientPullOptions(body);
    const spec = checkServiceSpec(body);
    setPullAuth(spec, updatedPullAuth(opts.registryAuth, opts.registryAuthFrom, cur));
    parseConstraints(((spec.TaskTemplate as ClusterObject).Placement as ClusterObject | undefined)?.Constraints);
    parsePreferences(((spec.TaskTemplate as ClusterObject).Placement as ClusterObject | undefined)?.Preferences);
    await files?.checkRefs(spec.TaskTemplate as ClusterObject);
    await resolveNetworkTargets(store, spec);
    if (!spec.Name) spec.Name = cur.Spec.Name;
    if (spec.Name !== cur.Spec.Name) throw invalidParameter('rpc error: code = Unimplemented desc = renaming services is not supported');
    if (modeOf(spec) !== modeOf(cur.Spec))
      throw invalidParameter('rpc error: code = InvalidArgument desc = service mode change is not allowed');
    const tasksChange = tasksChanged(spec, cur.Spec);
    next = { ...cur, Spec: spec, PreviousSpec: cur.Spec, UpdatedAt: now };
    if (tasksChange) {
      next.SpecVersion = cur.SpecVersion + 1;
      next.UpdateStatus = { State: 'updating', StartedAt: now, Message: 'update in progress' };
    }
    if (modeOf(spec).endsWith('-job')) next.JobIteration = (cur.JobIteration ?? 0) + 1;
  }
  return next;
}
