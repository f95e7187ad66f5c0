// Typed wrappers of containerd's services, one factory per service: each returns the object of
// bound calls SupervisorClient exposes under the service's name (client.tasks.wait(…) …), made over
// the client's raw call surface (calls.ts) so that they never import the client back.

import { randomBytes } from 'node:crypto';
import type { CallOptions, SupervisorCalls } from './calls.ts';
import { fromGrpc } from './errors.ts';
import type { AnyMessage } from './protos.ts';
import type {
  ContainerRecord,
  CreateTaskRequest,
  DeleteTaskResult,
  Descriptor,
  ExecProcessRequest,
  ExitResult,
  ImageRecord,
  Lease,
  Mount,
  Namespace,
  NewContainer,
  PidInfo,
  Plugin,
  SnapshotInfo,
  TaskMetric,
  TaskProcess,
} from './types.ts';

export const GC_EXPIRE_LABEL = 'containerd.io/gc.expire';

/** Content.Read: a blob (or a range of it: size 0 = to the end) as a stream of chunks. */
export async function* readContent(
  rpc: SupervisorCalls,
  digest: string,
  o: { offset?: number; size?: number } = {},
  opts?: CallOptions,
): AsyncIterable<Buffer> {
  const stream = rpc.serverStream<{ offset: string; data: Buffer }>(
    'content',
    'Read',
    { digest, offset: o.offset ?? 0, size: o.size ?? 0 },
    opts,
  );
  try {
    for await (const msg of stream) yield msg.data;
  } catch (err) {
    throw fromGrpc(err);
  } finally {
    stream.cancel(); // no-op once the stream has ended; stops the server if the consumer broke early
  }
}

/** containerd namespaces (list, get, delete; creation is SupervisorClient.ensureNamespace). */
export function namespacesCalls(rpc: SupervisorCalls) {
  return {
    list: async (): Promise<Namespace[]> => (await rpc.call('namespaces', 'List', {}, { namespace: null })).namespaces,
    get: async (name: string): Promise<Namespace> => (await rpc.call('namespaces', 'Get', { name }, { namespace: name })).namespace,
    delete: async (name: string): Promise<void> => {
      await rpc.call('namespaces', 'Delete', { name }, { namespace: name });
    },
  };
}

/** Leases: what a lease references is kept from containerd's garbage collection. */
export function leasesCalls(rpc: SupervisorCalls) {
  return {
    /** A lease that containerd's GC drops by itself after expireMs if we never delete it. */
    create: async (o: { id?: string; expireMs?: number; labels?: Record<string, string> } = {}, opts?: CallOptions): Promise<Lease> => {
      const id = o.id ?? `engine-${randomBytes(8).toString('hex')}`;
      const expire = new Date(Date.now() + (o.expireMs ?? 3600_000)).toISOString();
      return (await rpc.call('leases', 'Create', { id, labels: { [GC_EXPIRE_LABEL]: expire, ...o.labels } }, opts)).lease;
    },
    /** sync runs a GC pass before returning, so what only the lease held is gone afterwards. */
    delete: async (id: string, o: { sync?: boolean } = {}, opts?: CallOptions): Promise<void> => {
      await rpc.call('leases', 'Delete', { id, sync: !!o.sync }, opts);
    },
    list: async (filters: string[] = [], opts?: CallOptions): Promise<Lease[]> =>
      (await rpc.call('leases', 'List', { filters }, opts)).leases,
  };
}

/** The snapshots service, on the client's default snapshotter unless a call names another. */
export function snapshotsCalls(rpc: SupervisorCalls) {
  return {
    prepare: async (
      o: { key: string; parent?: string; labels?: Record<string, string>; snapshotter?: string },
      opts?: CallOptions,
    ): Promise<Mount[]> => (await rpc.call('snapshots', 'Prepare', { snapshotter: rpc.snapshotter, ...o }, opts)).mounts,
    view: async (
      o: { key: string; parent: string; labels?: Record<string, string>; snapshotter?: string },
      opts?: CallOptions,
    ): Promise<Mount[]> => (await rpc.call('snapshots', 'View', { snapshotter: rpc.snapshotter, ...o }, opts)).mounts,
    mounts: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<Mount[]> =>
      (await rpc.call('snapshots', 'Mounts', { snapshotter: opts?.snapshotter ?? rpc.snapshotter, key }, opts)).mounts,
    commit: async (
      o: { name: string; key: string; labels?: Record<string, string>; snapshotter?: string },
      opts?: CallOptions,
    ): Promise<void> => {
      await rpc.call('snapshots', 'Commit', { snapshotter: rpc.snapshotter, ...o }, opts);
    },
    remove: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<void> => {
      await rpc.call('snapshots', 'Remove', { snapshotter: opts?.snapshotter ?? rpc.snapshotter, key }, opts);
    },
    stat: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<SnapshotInfo> =>
      (await rpc.call('snapshots', 'Stat', { snapshotter: opts?.snapshotter ?? rpc.snapshotter, key }, opts)).info,
    update: async (
      info: { name: string; labels?: Record<string, string> },
      paths: string[],
      opts?: CallOptions & { snapshotter?: string },
    ): Promise<SnapshotInfo> =>
      (
        await rpc.call(
          'snapshots',
          'Update',
          { snapshotter: opts?.snapshotter ?? rpc.snapshotter, info: { labels: {}, ...info }, update_mask: { paths } },
          opts,
        )
      ).info,
    list: async (filters: string[] = [], opts?: CallOptions & { snapshotter?: string }): Promise<SnapshotInfo[]> =>
      (
        await rpc.collect<{ info: SnapshotInfo[] }>(
          'snapshots',
          'List',
          { snapshotter: opts?.snapshotter ?? rpc.snapshotter, filters },
          opts,
        )
      ).flatMap((m) => m.info),
    usage: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<{ size: string; inodes: string }> =>
      rpc.call('snapshots', 'Usage', { snapshotter: opts?.snapshotter ?? rpc.snapshotter, key }, opts),
  };
}

/** The diff service: layers applied onto mounts and made from two mount sets. */
export function diffCalls(rpc: SupervisorCalls) {
  return {
    /** Unpacks a layer blob onto mounts; returns the uncompressed descriptor (digest = diffID). */
    apply: async (layer: Descriptor, mounts: Mount[], opts?: CallOptions): Promise<Descriptor> =>
      (await rpc.call('diff', 'Apply', { diff: layer, mounts }, opts)).applied,
    /** Writes the difference lower→upper as a layer blob into the content store. */
    diff: async (
      o: { left: Mount[]; right: Mount[]; media_type?: string; ref?: string; labels?: Record<string, string> },
      opts?: CallOptions,
    ): Promise<Descriptor> => (await rpc.call('diff', 'Diff', o, opts)).diff,
  };
}

/** containerd container records. */
export function containersCalls(rpc: SupervisorCalls) {
  return {
    create: async (container: NewContainer, opts?: CallOptions): Promise<ContainerRecord> =>
      (await rpc.call('containers', 'Create', { container }, opts)).container,
    get: async (id: string, opts?: CallOptions): Promise<ContainerRecord> => (await rpc.call('containers', 'Get', { id }, opts)).container,
    list: async (filters: string[] = [], opts?: CallOptions): Promise<ContainerRecord[]> =>
      (await rpc.call('containers', 'List', { filters }, opts)).containers,
    /** paths like ['labels', 'spec', 'labels.<key>']; an empty list replaces every updatable field. */
    update: async (container: Partial<ContainerRecord> & { id: string }, paths: string[], opts?: CallOptions): Promise<ContainerRecord> =>
      (await rpc.call('containers', 'Update', { container, update_mask: { paths } }, opts)).container,
    delete: async (id: string, opts?: CallOptions): Promise<void> => {
      await rpc.call('containers', 'Delete', { id }, opts);
    },
  };
}

/** Tasks and their processes (create, start, wait, kill, exec, metrics, update …). */
export function tasksCalls(rpc: SupervisorCalls) {
  return {
    /** The stdio FIFOs must already be open for reading (see notes §4), or this hangs. */
    create: async (req: CreateTaskRequest, opts?: CallOptions): Promise<{ container_id: string; pid: number }> =>
      rpc.call('tasks', 'Create', req, opts),
    start: async (containerId: string, execId = '', opts?: CallOptions): Promise<number> =>
      (await rpc.call('tasks', 'Start', { container_id: containerId, exec_id: execId }, opts)).pid,
    /** Resolves when the process exits; issue it before start. Fails with UNAVAILABLE if containerd goes away. */
    wait: async (containerId: string, execId = '', opts?: CallOptions): Promise<ExitResult> =>
      rpc.call('tasks', 'Wait', { container_id: containerId, exec_id: execId }, opts),
    kill: async (containerId: string, signal: number, o: { execId?: string; all?: boolean } = {}, opts?: CallOptions): Promise<void> => {
      await rpc.call('tasks', 'Kill', { container_id: containerId, exec_id: o.execId ?? '', signal, all: !!o.all }, opts);
    },
    delete: async (containerId: string, opts?: CallOptions): Promise<DeleteTaskResult> =>
      rpc.call('tasks', 'Delete', { container_id: containerId }, opts),
    exec: async (req: ExecProcessRequest, opts?: CallOptions): Promise<void> => {
      await rpc.call('tasks', 'Exec', req, opts);
    },
    deleteProcess: async (containerId: string, execId: string, opts?: CallOptions): Promise<DeleteTaskResult> =>
      rpc.call('tasks', 'DeleteProcess', { container_id: containerId, exec_id: execId }, opts),
    resizePty: async (containerId: string, size: { width: number; height: number }, execId = '', opts?: CallOptions): Promise<void> => {
      await rpc.call('tasks', 'ResizePty', { container_id: containerId, exec_id: execId, ...size }, opts);
    },
    closeIO: async (containerId: string, execId = '', opts?: CallOptions): Promise<void> => {
      await rpc.call('tasks', 'CloseIO', { container_id: containerId, exec_id: execId, stdin: true }, opts);
    },
    pause: async (containerId: string, opts?: CallOptions): Promise<void> => {
      await rpc.call('tasks', 'Pause', { container_id: containerId }, opts);
    },
    resume: async (containerId: string, opts?: CallOptions): Promise<void> => {
      await rpc.call('tasks', 'Resume', { container_id: containerId }, opts);
    },
    get: async (containerId: string, execId = '', opts?: CallOptions): Promise<TaskProcess> =>
      (await rpc.call('tasks', 'Get', { container_id: containerId, exec_id: execId }, opts)).process,
    list: async (filter = '', opts?: CallOptions): Promise<TaskProcess[]> => (await rpc.call('tasks', 'List', { filter }, opts)).tasks,
    listPids: async (containerId: string, opts?: CallOptions): Promise<PidInfo[]> =>
      (await rpc.call('tasks', 'ListPids', { container_id: containerId }, opts)).processes,
    /** filters like ['id==<container id>']; data is decoded when the cgroups protos are available. */
    metrics: async (filters: string[], opts?: CallOptions): Promise<TaskMetric[]> => {
      const res = await rpc.call<{ metrics: { id: string; timestamp: TaskMetric['timestamp']; data: AnyMessage | null }[] }>(
        'tasks',
        'Metrics',
        { filters },
        opts,
      );
      return res.metrics.map((m) => ({ id: m.id, timestamp: m.timestamp, raw: m.data, data: rpc.protos.decodeAny(m.data) }));
    },
    /** resources: an Any of the OCI LinuxResources as JSON (types.containerd.io/opencontainers/runtime-spec/1/LinuxResources). */
    update: async (
      containerId: string,
      resources: AnyMessage | null,
      annotations: Record<string, string> = {},
      opts?: CallOptions,
    ): Promise<void> => {
      await rpc.call('tasks', 'Update', { container_id: containerId, resources, annotations }, opts);
    },
  };
}

/** containerd image records. */
export function imagesCalls(rpc: SupervisorCalls) {
  return {
    create: async (image: ImageRecord, opts?: CallOptions): Promise<ImageRecord> =>
      (await rpc.call('images', 'Create', { image }, opts)).image,
    get: async (name: string, opts?: CallOptions): Promise<ImageRecord> => (await rpc.call('images', 'Get', { name }, opts)).image,
    list: async (filters: string[] = [], opts?: CallOptions): Promise<ImageRecord[]> =>
      (await rpc.call('images', 'List', { filters }, opts)).images,
    update: async (image: ImageRecord, paths: string[] = [], opts?: CallOptions): Promise<ImageRecord> =>
      (await rpc.call('images', 'Update', { image, update_mask: { paths } }, opts)).image,
    /** sync runs a GC pass, so the image's now unreferenced blobs and snapshots are gone on return. */
    delete: async (name: string, o: { sync?: boolean } = {}, opts?: CallOptions): Promise<void> => {
      await rpc.call('images', 'Delete', { name, sync: !!o.sync }, opts);
    },
  };
}

/** Introspection: the loaded plugins and the server's UUID. */
export function introspectionCalls(rpc: SupervisorCalls) {
  return {
    plugins: async (filters: string[] = [], opts?: CallOptions): Promise<Plugin[]> =>
      (await rpc.call('introspection', 'Plugins', { filters }, { namespace: null, ...opts })).plugins,
    server: async (opts?: CallOptions): Promise<{ uuid: string }> => rpc.call('introspection', 'Server', {}, { namespace: null, ...opts }),
  };
}
