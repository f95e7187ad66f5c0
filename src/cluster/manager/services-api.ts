// A manager's services and tasks on the replicated store: create/list/inspect/update/remove of
// services (version compare-and-swap, rollback to PreviousSpec, `service` events of scope swarm),
// list/inspect of tasks, and the agents' sync (task states reported by a node, its tasks answered).
import { createHash } from 'node:crypto';
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
import {
  checkNameFree,
  checkServiceSpec,
  filterServices,
  findService,
  modeOf,
  replicasOf,
  serviceView,
  tasksChanged,
  type ServiceCounts,
  type ServiceRecord,
} from './service-spec.ts';
import type { FileObjectHooks, TaskPayloads } from './secrets-api.ts';
import type { ClusterStore, Stored } from '../store/store.ts';
import { filterTasks, findTask, isTerminal, stateRank, taskView, type TaskRecord, type TaskStatus } from './tasks.ts';

export const serviceKey = (id: string) => `services/${id}`;
export const taskKey = (id: string) => `tasks/${id}`;

/** A state change a node's agent reports for one of its tasks. */
export interface TaskReport {
  id: string;
  status: TaskStatus;
}

/**
 * What a node's agent sends: its reports, the digest of the tasks it last got (to wait for a
 * change) and the revision of that answer (to get only what changed since).
 */
export interface AgentSyncRequest {
  reports: TaskReport[];
  known?: string;
  /** host:port of the node's endpoint, where managers ask for its tasks' logs (log-forward.ts). */
  logAddr?: string;
  since?: number;
}

/** Where a node's endpoint is (`agents/<node id>`), written when its agent first syncs with a manager. */
export const agentKey = (nodeId: string) => `agents/${nodeId}`;

/**
 * What a node's agent gets back: its tasks and their digest. With `ids` (an answer to `since`),
 * `tasks` are only those changed since and `ids` all the node's tasks (the others are gone);
 * without, `tasks` are all of them. `rev`: what to send as `since` next time.
 */
export interface SyncAnswer {
  tasks: TaskRecord[];
  digest: string;
  ids?: string[];
  rev?: number;
  /** The data of exactly the secrets and configs the node's live tasks use. */
  payloads?: TaskPayloads;
}

/** Longest an agent's sync waits for a change of its tasks before answering the same (a worker's call times out at 10 s). */
export const SYNC_WAIT_MS = 5000;

export class ServicesApi {
  /** Log addresses already written to the store, by node. */
  private readonly logAddrs = new Map<string, string>();
  /** The watch-fed copy the orchestrator and the agents' syncs read (cluster-cache.ts). */
  readonly cache: ClusterCache;

  constructor(
    private readonly store: ClusterStore,
    private readonly events: EventPublisher | undefined,
    private readonly files?: FileObjectHooks,
    log?: Logger,
  ) {
    this.cache = new ClusterCache(store, log);
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

  private counts(s: ServiceRecord, tasks: TaskRecord[]): ServiceCounts {
    const mine = tasks.filter((t) => t.ServiceID === s.ID);
    const live = mine.filter((t) => t.DesiredState === 'running');
    const mode = modeOf(s.Spec);
    return {
      running: live.filter((t) => t.Status.State === 'running').length,
      desired:
        mode === 'replicated' || mode === 'replicated-job' ? replicasOf(s.Spec) : live.filter((t) => !isTerminal(t.Status.State)).length,
      completed: mine.filter((t) => t.Status.State === 'complete' && (t.JobIteration ?? 0) === (s.JobIteration ?? 0)).length,
    };
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
      .map((s) => serviceView(s.value, s.version, status ? { counts: this.counts(s.value, tasks) } : {}));
  }

  async inspect(ref: string, insertDefaults: boolean): Promise<ClusterObject> {
    const s = await this.find(ref);
    return serviceView(s.value, s.version, { insertDefaults });
  }

  async update(ref: string, body: ClusterObject, opts: ObjectUpdateOptions): Promise<{ Warnings: string[] }> {
    const s = await this.find(ref);
    const cur = s.value;
    if (opts.registryAuthFrom !== undefined && !['spec', 'previous-spec', ''].includes(opts.registryAuthFrom))
      throw invalidParameter(`invalid registryAuthFrom: ${JSON.stringify(opts.registryAuthFrom)}: "spec" or "previous-spec" expected`);
    if (opts.rollback !== undefined && opts.rollback !== '' && opts.rollback !== 'previous')
      throw invalidParameter(`invalid rollback: ${JSON.stringify(opts.rollback)}: only "previous" is allowed`);
    const now = new Date().toISOString();
    let next: ServiceRecord;
    if (opts.rollback === 'previous') {
      if (!cur.PreviousSpec)
        throw invalidParameter(`rpc error: code = FailedPrecondition desc = service ${cur.ID} does not have a previous spec`);
      next = {
        ...cur,
        Spec: cur.PreviousSpec,
        PreviousSpec: cur.Spec,
        UpdatedAt: now,
        SpecVersion: cur.SpecVersion + 1,
        UpdateStatus: { State: 'rollback_started', StartedAt: now, Message: 'manually requested rollback' },
      };
    } else {
      dropClientPullOptions(body);
      const spec = checkServiceSpec(body);
      setPullAuth(spec, updatedPullAuth(opts.registryAuth, opts.registryAuthFrom, cur));
      parseConstraints(((spec.TaskTemplate as ClusterObject).Placement as ClusterObject | undefined)?.Constraints);
      parsePreferences(((spec.TaskTemplate as ClusterObject).Placement as ClusterObject | undefined)?.Preferences);
      await this.files?.checkRefs(spec.TaskTemplate as ClusterObject);
      await resolveNetworkTargets(this.store, spec);
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

  async listTasks(filters: Map<string, string[]>, nodes: NodeRecord[]): Promise<ClusterObject[]> {
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

  async inspectTask(ref: string): Promise<ClusterObject> {
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

  /** A node's agent: applies its reports (states only move forward), answers its tasks. */
  async sync(
    nodeId: string,
    reports: TaskReport[],
    known?: string,
    waitMs = SYNC_WAIT_MS,
    opts: { since?: number; logAddr?: string } = {},
  ): Promise<SyncAnswer> {
    const { since, logAddr } = opts;
    if (logAddr && this.logAddrs.get(nodeId) !== logAddr) {
      await this.store.put(agentKey(nodeId), { addr: logAddr });
      this.logAddrs.set(nodeId, logAddr);
    }
    let written = 0;
    // All of a sync's reports in one transaction when the cached versions hold; else one by one.
    let rest = reports;
    if (this.cache.ready && reports.length > 1) {
      const now = new Date().toISOString();
      const writes = reports.flatMap((r) => {
        const cur = this.cache.task(r.id);
        return cur && newsFor(nodeId, cur.value, r)
          ? [{ key: taskKey(r.id), value: { ...cur.value, Status: r.status, UpdatedAt: now }, version: cur.version }]
          : [];
      });
      try {
        for (let i = 0; i < writes.length; i += 100) written = Math.max(written, await this.store.batch(writes.slice(i, i + 100)));
        rest = [];
      } catch (err) {
        if ((err as { code?: string }).code !== 'CONFLICT') throw err;
      }
    }
    await inParallel(rest, REPORT_WIDTH, async (r) => {
      written = Math.max(written, await this.report(nodeId, r));
    });
    const cache = this.cache.ready ? this.cache : undefined;
    // The answer reflects the reports just written (the watch has applied them).
    if (cache && written) await cache.waitFor('tasks', written, 2000);
    const answer = async (): Promise<SyncAnswer> => {
      const rev = cache?.tasks.rev;
      const tasks = cache ? cache.tasksOf(nodeId) : (await this.tasks()).filter((t) => t.value.NodeID === nodeId);
      const digest = tasksDigest(tasks);
      const mine = tasks.map((t) => t.value);
      // Only tasks the node is to run need their files (secrets stay off nodes that merely held them).
      const live = mine.filter((t) => t.DesiredState === 'running' && !isTerminal(t.Status.State));
      const payloads = this.files ? await this.files.payloads(live) : undefined;
      const delta = cache && since !== undefined && since <= rev!;
      return {
        tasks: delta ? tasks.filter((t) => t.version > since).map((t) => t.value) : mine,
        digest,
        ...(delta ? { ids: mine.map((t) => t.ID) } : {}),
        ...(rev !== undefined ? { rev } : {}),
        ...(payloads ? { payloads } : {}),
      };
    };
    const first = await answer();
    // Nothing new for the agent: hold the answer until its node's tasks change (a long poll). The
    // wait is registered before the tasks are looked at again: a change the watch applied while
    // the first answer was made (its payloads are awaited) ends it at once, not after the wait.
    if (!reports.length && known !== undefined && first.digest === known && cache) {
      const changed = cache.nodeChange(nodeId, Math.min(waitMs, SYNC_WAIT_MS));
      if (tasksDigest(cache.tasksOf(nodeId)) === known) await changed;
      return answer();
    }
    return first;
  }

  /**
   * Writes one report (compare-and-swap on the version known); returns the revision written, or 0.
   * With the cache, one attempt: a report that lost a race is dropped, and the agent, which derives
   * its reports from its containers and the tasks it is sent, sends it again if still news.
   */
  private async report(nodeId: string, r: TaskReport): Promise<number> {
    let cur: Stored<TaskRecord> | null | undefined = this.cache.ready ? this.cache.task(r.id) : undefined;
    for (let attempt = 0; attempt < (cur ? 1 : 3); attempt++) {
      cur ??= await this.store.get<TaskRecord>(taskKey(r.id));
      if (!cur || !newsFor(nodeId, cur.value, r)) return 0;
      try {
        return await this.store.update(taskKey(r.id), { ...cur.value, Status: r.status, UpdatedAt: new Date().toISOString() }, cur.version);
      } catch (err) {
        if ((err as { code?: string }).code !== 'CONFLICT') throw err;
        cur = undefined; // changed meanwhile (or the copy was behind): read it from the store
      }
    }
    return 0;
  }
}

/** What an agent sends back as `known`: its node's tasks at their versions. */
function tasksDigest(tasks: Array<Stored<TaskRecord>>): string {
  return createHash('sha1')
    .update(
      tasks
        .map((t) => `${t.value.ID}:${t.version}`)
        .sort()
        .join(','),
    )
    .digest('hex');
}

/** Whether a report changes the task: the node's own, and its state moves forward (or its container). */
function newsFor(nodeId: string, t: TaskRecord, r: TaskReport): boolean {
  if (t.NodeID !== nodeId) return false;
  const [to, from] = [stateRank(r.status.State), stateRank(t.Status.State)];
  return to > from || (to === from && JSON.stringify(r.status.ContainerStatus) !== JSON.stringify(t.Status.ContainerStatus));
}

/** Reports of one sync written at once (etcd batches concurrent proposals). */
const REPORT_WIDTH = 16;

export async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
