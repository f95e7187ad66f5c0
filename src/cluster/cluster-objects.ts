// The objects of a cluster (nodes, services, tasks, secrets, configs, volumes) behind ClusterService's
// list/inspect/create/update/remove/logs: each call goes to the manager's part that holds the kind;
// services get dockerd's digest pinning (pull-options.ts) and logs from every node that runs them.
import { invalidParameter, unavailable } from '../errors.ts';
import type {
  ClusterLogOptions,
  ClusterObject,
  ClusterObjectKind,
  CreatableKind,
  MutableKind,
  ObjectUpdateOptions,
} from '../types/cluster.ts';
import type { LogsRequest } from '../types/logs.ts';
import type { Logger } from '../util/log.ts';
import type { NodeCerts } from './node/local-state.ts';
import { remoteTaskLogs, toRemote, type TaskLogLine } from './agent/log-forward.ts';
import type { Manager } from './manager/manager.ts';
import { digestWarning, pinnedReference } from './manager/pull-options.ts';
import type { FileObjectsApi } from './manager/secrets-api.ts';
import type { ClusterVolumesApi } from './manager/volumes-api.ts';
import { serviceLogs } from './agent/service-logs.ts';
import type { TaskRuntime } from './agent/task-runtime.ts';

export interface ClusterObjectsDeps {
  /** The running manager, or the refusal a worker or an inactive node answers with. */
  manager: () => Manager;
  /** dockerd's IsManager: an active node that is a manager. */
  isManager: () => boolean;
  runtime?: () => TaskRuntime | undefined;
  localLogs: (taskIds: string[], req: LogsRequest, signal: AbortSignal) => Promise<AsyncIterable<TaskLogLine>>;
  certs: () => NodeCerts;
  log: Logger;
}

export class ClusterObjects {
  constructor(private readonly deps: ClusterObjectsDeps) {}

  async list(kind: ClusterObjectKind, filters: Map<string, string[]>, opts: { status?: boolean } = {}): Promise<ClusterObject[]> {
    const m = this.deps.manager();
    if (kind === 'nodes') return m.nodes.list(filters);
    if (kind === 'services') return m.services.list(filters, !!opts.status);
    if (kind === 'tasks') return m.services.listTasks(filters, await m.nodes.nodesList());
    return fileObjects(m, kind).list(filters);
  }

  async inspect(kind: ClusterObjectKind, id: string, opts: { insertDefaults?: boolean } = {}): Promise<ClusterObject> {
    const m = this.deps.manager();
    if (kind === 'nodes') return m.nodes.inspect(id);
    if (kind === 'services') return m.services.inspect(id, !!opts.insertDefaults);
    if (kind === 'tasks') return m.services.inspectTask(id);
    return fileObjects(m, kind).inspect(id);
  }

  /**
   * X-Registry-Auth is kept with the spec (pull-options.ts) for the nodes' pulls. With
   * `queryRegistry` (dockerd: API < 1.30) the manager pins the image to the digest its tag has now.
   */
  async create(
    kind: CreatableKind,
    spec: ClusterObject = {},
    opts: { registryAuth?: string; queryRegistry?: boolean } = {},
  ): Promise<{ ID: string; Warnings?: string[] }> {
    const m = this.deps.manager();
    if (kind !== 'services') return fileObjects(m, kind).create(spec);
    const warning = opts.queryRegistry ? await this.pinImage(spec, opts.registryAuth) : undefined;
    const r = await m.services.create(spec, opts.registryAuth);
    m.kick();
    return warning ? { ...r, Warnings: [...r.Warnings, warning] } : r;
  }

  /** Pins ContainerSpec.Image to a digest as dockerd does; a registry that cannot be asked gives its warning. */
  private async pinImage(spec: ClusterObject, auth: string | undefined): Promise<string | undefined> {
    const cs = (spec.TaskTemplate as ClusterObject | undefined)?.ContainerSpec as ClusterObject | undefined;
    if (!cs || typeof cs.Image !== 'string' || !cs.Image) return undefined; // the spec check answers
    const image = cs.Image;
    let pin;
    try {
      pin = pinnedReference(image);
    } catch {
      return undefined; // an invalid reference: the node's create refuses it
    }
    if (!pin) return undefined;
    const rt = this.deps.runtime?.();
    try {
      if (!rt) throw new Error('the local engine is not ready');
      cs.Image = pin.pinned(await rt.resolveDigest(pin.ref, auth));
      return undefined;
    } catch (err) {
      this.deps.log.warn(`unable to pin image ${image} to digest: ${(err as Error).message}`);
      return digestWarning(image);
    }
  }

  async update(kind: MutableKind, id: string, spec: ClusterObject, opts: ObjectUpdateOptions): Promise<{ Warnings?: string[] }> {
    const m = this.deps.manager();
    if (kind === 'services') {
      const warning = opts.queryRegistry && opts.rollback !== 'previous' ? await this.pinImage(spec, opts.registryAuth) : undefined;
      const r = await m.services.update(id, spec, opts);
      m.kick();
      return warning ? { ...r, Warnings: [...r.Warnings, warning] } : r;
    }
    if (kind !== 'nodes') {
      await fileObjects(m, kind).update(id, spec, opts.version);
      return {};
    }
    await m.nodes.update(id, spec, opts.version);
    m.kick();
    return {};
  }

  async remove(kind: MutableKind, id: string, opts: { force: boolean }): Promise<void> {
    const m = this.deps.manager();
    if (kind === 'services') return m.services.remove(id);
    if (kind !== 'nodes') return fileObjects(m, kind).remove(id);
    await m.nodes.remove(id, opts.force);
  }

  isManager(): boolean {
    return this.deps.isManager();
  }

  /** Cluster volumes (manager/volumes-api.ts); a worker or an inactive node answers dockerd's 503. */
  volumes(): ClusterVolumesApi {
    return this.deps.manager().volumes;
  }

  /** Logs of a service's or task's tasks, read on the nodes that run them (service-logs.ts). */
  async logs(kind: 'services' | 'tasks', id: string, opts: ClusterLogOptions): Promise<AsyncIterable<Buffer>> {
    const m = this.deps.manager();
    const tasks = kind === 'services' ? await m.services.serviceTasks(id) : [await m.services.findTask(id)];
    return serviceLogs(
      tasks,
      {
        localNode: m.state.nodeId,
        local: (ids, req, signal) => this.deps.localLogs(ids, req, signal),
        remote: async (nodeId, ids, req, signal) => {
          const addr = await m.services.agentAddr(nodeId);
          if (!addr) throw unavailable(`node ${nodeId} has not told where it serves its logs yet`);
          return remoteTaskLogs(addr, this.deps.certs(), toRemote(ids, req), signal);
        },
        warn: (message, fields) => this.deps.log.warn(message, fields),
      },
      opts,
    );
  }
}

function fileObjects(m: Manager, kind: ClusterObjectKind): FileObjectsApi {
  if (kind === 'secrets') return m.secrets;
  if (kind === 'configs') return m.configs;
  throw invalidParameter(`no such object kind ${kind}`);
}
