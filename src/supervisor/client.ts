// The one gRPC client to containerd: a single channel to its unix socket shared by every service,
// the containerd-namespace / containerd-lease metadata, errors mapped to the daemon's error table,
// and typed wrappers for the calls the daemon makes. Message shapes: ./types.ts.

import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { CallOptions, SupervisorCalls } from './calls.ts';
import { loadProtos, type AnyMessage, type Protos, type RuncOptions, type ServiceName } from './protos.ts';
import { fromGrpc, grpcCode, GrpcStatus } from './errors.ts';
import { writeContent, type ContentWriteOptions, type ContentWriteResult } from './content-write.ts';
import { EventSubscription, type SubscribeOptions } from './events.ts';
import type {
  ContainerRecord,
  ContentInfo,
  CreateTaskRequest,
  DeleteTaskResult,
  Descriptor,
  ExecProcessRequest,
  ExitResult,
  ImageRecord,
  IngestStatus,
  Lease,
  Mount,
  Namespace,
  NewContainer,
  PidInfo,
  Plugin,
  SnapshotInfo,
  SupervisorEvent,
  TaskMetric,
  TaskProcess,
} from './types.ts';

export type { CallOptions } from './calls.ts';

export interface ClientOptions {
  namespace: string;
  /** Default snapshotter for the snapshot calls. */
  snapshotter?: string;
}

export const SPEC_TYPE_URL = 'types.containerd.io/opencontainers/runtime-spec/1/Spec';
export const PROCESS_TYPE_URL = 'types.containerd.io/opencontainers/runtime-spec/1/Process';
export const GC_EXPIRE_LABEL = 'containerd.io/gc.expire';

// Local socket: reconnect quickly after a containerd restart (grpc-js defaults to 1 s growing to 120 s).
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.max_receive_message_length': 64 << 20,
  'grpc.max_send_message_length': 16 << 20,
};

/** Accepts `unix:///path`, `unix:/path` or a bare socket path. */
export function grpcTarget(address: string): string {
  if (address.startsWith('unix:')) return address;
  if (address.startsWith('/')) return `unix://${address}`;
  throw new Error(`unsupported supervisor address ${JSON.stringify(address)} (want a unix socket path)`);
}

/** Any carrying JSON, the way containerd stores OCI specs and exec processes. */
export function jsonAny(typeUrl: string, value: unknown): AnyMessage {
  return { type_url: typeUrl, value: Buffer.from(JSON.stringify(value)) };
}

interface Core {
  address: string;
  channel: grpc.Channel;
  raw: grpc.Client;
  protos: Protos;
  closed: boolean;
}

export class SupervisorClient implements SupervisorCalls {
  readonly namespace: string;
  readonly snapshotter: string;
  private readonly core: Core;

  constructor(address: string, opts: ClientOptions);
  constructor(core: Core, opts: ClientOptions);
  constructor(addressOrCore: string | Core, opts: ClientOptions) {
    this.namespace = opts.namespace;
    this.snapshotter = opts.snapshotter ?? 'overlayfs';
    if (typeof addressOrCore === 'string') {
      const protos = loadProtos();
      const target = grpcTarget(addressOrCore);
      const creds = grpc.credentials.createInsecure();
      const channel = new grpc.Channel(target, creds, CHANNEL_OPTIONS);
      const raw = new grpc.Client(target, creds, { channelOverride: channel });
      this.core = { address: addressOrCore, channel, raw, protos, closed: false };
    } else {
      this.core = addressOrCore;
    }
  }

  get address(): string {
    return this.core.address;
  }

  get protos(): Protos {
    return this.core.protos;
  }

  /** Same channel, another default namespace (e.g. the plugins namespace). */
  withNamespace(namespace: string): SupervisorClient {
    return new SupervisorClient(this.core, { namespace, snapshotter: this.snapshotter });
  }

  /** Same channel, another default snapshotter (the storage driver's, known only after containerd is up). */
  withSnapshotter(snapshotter: string): SupervisorClient {
    return snapshotter === this.snapshotter ? this : new SupervisorClient(this.core, { namespace: this.namespace, snapshotter });
  }

  /** Whether close() was called (on this client or any view sharing its channel). */
  get closed(): boolean {
    return this.core.closed;
  }

  /** Closes the shared channel (for every view made by withNamespace); subscriptions end with it. */
  close(): void {
    if (this.core.closed) return;
    this.core.closed = true;
    this.core.raw.close();
    this.core.channel.close();
  }

  metadata(opts: CallOptions = {}): grpc.Metadata {
    const md = new grpc.Metadata(opts.waitForReady ? { waitForReady: true } : undefined);
    const ns = opts.namespace === undefined ? this.namespace : opts.namespace;
    if (ns) md.set('containerd-namespace', ns);
    if (opts.lease) md.set('containerd-lease', opts.lease);
    return md;
  }

  private callOptions(opts: CallOptions): grpc.CallOptions {
    return opts.deadlineMs !== undefined ? { deadline: Date.now() + opts.deadlineMs } : {};
  }

  /** A unary call; rejects with an EngineError mapped from the gRPC status. */
  call<Res = any>(service: ServiceName, method: string, req: object, opts: CallOptions = {}): Promise<Res> {
    const m = this.protos.method(service, method);
    return new Promise<Res>((resolve, reject) => {
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      const call = this.core.raw.makeUnaryRequest<object, Res>(
        m.path,
        m.serialize,
        m.deserialize,
        req,
        this.metadata(opts),
        this.callOptions(opts),
        (err, res) => {
          opts.signal?.removeEventListener('abort', onAbort);
          if (err) reject(fromGrpc(err));
          else resolve(res as Res);
        },
      );
      const onAbort = () => call.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A server-streaming call; the caller consumes the stream and maps errors (see collect). */
  serverStream<Res = any>(service: ServiceName, method: string, req: object, opts: CallOptions = {}): grpc.ClientReadableStream<Res> {
    const m = this.protos.method(service, method);
    return this.core.raw.makeServerStreamRequest<object, Res>(
      m.path,
      m.serialize,
      m.deserialize,
      req,
      this.metadata(opts),
      this.callOptions(opts),
    );
  }

  bidiStream<Req extends object = any, Res = any>(
    service: ServiceName,
    method: string,
    opts: CallOptions = {},
  ): grpc.ClientDuplexStream<Req, Res> {
    const m = this.protos.method(service, method);
    return this.core.raw.makeBidiStreamRequest<Req, Res>(m.path, m.serialize, m.deserialize, this.metadata(opts), this.callOptions(opts));
  }

  /** Reads a whole server stream into an array. */
  async collect<Res = any>(service: ServiceName, method: string, req: object, opts: CallOptions = {}): Promise<Res[]> {
    const out: Res[] = [];
    try {
      for await (const msg of this.serverStream<Res>(service, method, req, opts)) out.push(msg);
    } catch (err) {
      throw fromGrpc(err);
    }
    return out;
  }

  // ---- version, namespaces, leases -------------------------------------------------------------

  version(opts: CallOptions = {}): Promise<{ version: string; revision: string }> {
    return this.call('version', 'Version', {}, { namespace: null, ...opts });
  }

  /** Creates the namespace if missing (the Create carries the namespace header, see notes §2). */
  async ensureNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    try {
      await this.call('namespaces', 'Create', { namespace: { name, labels } }, { namespace: name });
    } catch (err) {
      if (grpcCode(err) !== GrpcStatus.ALREADY_EXISTS) throw err;
    }
  }

  readonly namespaces = {
    list: async (): Promise<Namespace[]> => (await this.call('namespaces', 'List', {}, { namespace: null })).namespaces,
    get: async (name: string): Promise<Namespace> => (await this.call('namespaces', 'Get', { name }, { namespace: name })).namespace,
    delete: async (name: string): Promise<void> => {
      await this.call('namespaces', 'Delete', { name }, { namespace: name });
    },
  };

  readonly leases = {
    /** A lease that containerd's GC drops by itself after expireMs if we never delete it. */
    create: async (o: { id?: string; expireMs?: number; labels?: Record<string, string> } = {}, opts?: CallOptions): Promise<Lease> => {
      const id = o.id ?? `engine-${randomBytes(8).toString('hex')}`;
      const expire = new Date(Date.now() + (o.expireMs ?? 3600_000)).toISOString();
      return (await this.call('leases', 'Create', { id, labels: { [GC_EXPIRE_LABEL]: expire, ...o.labels } }, opts)).lease;
    },
    /** sync runs a GC pass before returning, so what only the lease held is gone afterwards. */
    delete: async (id: string, o: { sync?: boolean } = {}, opts?: CallOptions): Promise<void> => {
      await this.call('leases', 'Delete', { id, sync: !!o.sync }, opts);
    },
    list: async (filters: string[] = [], opts?: CallOptions): Promise<Lease[]> =>
      (await this.call('leases', 'List', { filters }, opts)).leases,
  };

  /** Runs fn under a fresh lease (pass it on as `lease`), deleting the lease afterwards either way. */
  async withLease<T>(
    fn: (lease: string) => Promise<T>,
    o: { expireMs?: number; sync?: boolean; labels?: Record<string, string> } = {},
  ): Promise<T> {
    const lease = await this.leases.create(o);
    try {
      return await fn(lease.id);
    } finally {
      await this.leases.delete(lease.id, { sync: o.sync });
    }
  }

  // ---- content ---------------------------------------------------------------------------------

  /**
   * Content.Write following the notes' protocol; an already present blob counts as success.
   * Pass a lease (or a gc.root / gc.ref label path to it): unreferenced content goes at the next GC.
   */
  contentWrite(
    ref: string,
    data: Buffer | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    o: ContentWriteOptions = {},
  ): Promise<ContentWriteResult> {
    return writeContent(this, ref, data, o);
  }

  /** Streams a blob (or a range of it: size 0 = to the end). */
  async *contentRead(digest: string, o: { offset?: number; size?: number } = {}, opts?: CallOptions): AsyncIterable<Buffer> {
    const stream = this.serverStream<{ offset: string; data: Buffer }>(
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

  async contentReadAll(digest: string, opts?: CallOptions): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of this.contentRead(digest, {}, opts)) chunks.push(c);
    return Buffer.concat(chunks);
  }

  async contentInfo(digest: string, opts?: CallOptions): Promise<ContentInfo> {
    return (await this.call('content', 'Info', { digest }, opts)).info;
  }

  /** Updates fields named by paths, e.g. ['labels.containerd.io/gc.root'] (a label absent from info is removed). */
  async contentUpdate(
    info: { digest: string; labels?: Record<string, string> },
    paths: string[],
    opts?: CallOptions,
  ): Promise<ContentInfo> {
    return (await this.call('content', 'Update', { info: { labels: {}, ...info }, update_mask: { paths } }, opts)).info;
  }

  async contentDelete(digest: string, opts?: CallOptions): Promise<void> {
    await this.call('content', 'Delete', { digest }, opts);
  }

  async contentList(filters: string[] = [], opts?: CallOptions): Promise<ContentInfo[]> {
    return (await this.collect<{ info: ContentInfo[] }>('content', 'List', { filters }, opts)).flatMap((m) => m.info);
  }

  async contentStatus(ref: string, opts?: CallOptions): Promise<IngestStatus | null> {
    return (await this.call('content', 'Status', { ref }, opts)).status;
  }

  async contentAbort(ref: string, opts?: CallOptions): Promise<void> {
    await this.call('content', 'Abort', { ref }, opts);
  }

  // ---- snapshots, diff -------------------------------------------------------------------------

  readonly snapshots = {
    prepare: async (
      o: { key: string; parent?: string; labels?: Record<string, string>; snapshotter?: string },
      opts?: CallOptions,
    ): Promise<Mount[]> => (await this.call('snapshots', 'Prepare', { snapshotter: this.snapshotter, ...o }, opts)).mounts,
    view: async (
      o: { key: string; parent: string; labels?: Record<string, string>; snapshotter?: string },
      opts?: CallOptions,
    ): Promise<Mount[]> => (await this.call('snapshots', 'View', { snapshotter: this.snapshotter, ...o }, opts)).mounts,
    mounts: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<Mount[]> =>
      (await this.call('snapshots', 'Mounts', { snapshotter: opts?.snapshotter ?? this.snapshotter, key }, opts)).mounts,
    commit: async (
      o: { name: string; key: string; labels?: Record<string, string>; snapshotter?: string },
      opts?: CallOptions,
    ): Promise<void> => {
      await this.call('snapshots', 'Commit', { snapshotter: this.snapshotter, ...o }, opts);
    },
    remove: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<void> => {
      await this.call('snapshots', 'Remove', { snapshotter: opts?.snapshotter ?? this.snapshotter, key }, opts);
    },
    stat: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<SnapshotInfo> =>
      (await this.call('snapshots', 'Stat', { snapshotter: opts?.snapshotter ?? this.snapshotter, key }, opts)).info,
    update: async (
      info: { name: string; labels?: Record<string, string> },
      paths: string[],
      opts?: CallOptions & { snapshotter?: string },
    ): Promise<SnapshotInfo> =>
      (
        await this.call(
          'snapshots',
          'Update',
          { snapshotter: opts?.snapshotter ?? this.snapshotter, info: { labels: {}, ...info }, update_mask: { paths } },
          opts,
        )
      ).info,
    list: async (filters: string[] = [], opts?: CallOptions & { snapshotter?: string }): Promise<SnapshotInfo[]> =>
      (
        await this.collect<{ info: SnapshotInfo[] }>(
          'snapshots',
          'List',
          { snapshotter: opts?.snapshotter ?? this.snapshotter, filters },
          opts,
        )
      ).flatMap((m) => m.info),
    usage: async (key: string, opts?: CallOptions & { snapshotter?: string }): Promise<{ size: string; inodes: string }> =>
      this.call('snapshots', 'Usage', { snapshotter: opts?.snapshotter ?? this.snapshotter, key }, opts),
  };

  readonly diff = {
    /** Unpacks a layer blob onto mounts; returns the uncompressed descriptor (digest = diffID). */
    apply: async (layer: Descriptor, mounts: Mount[], opts?: CallOptions): Promise<Descriptor> =>
      (await this.call('diff', 'Apply', { diff: layer, mounts }, opts)).applied,
    /** Writes the difference lower→upper as a layer blob into the content store. */
    diff: async (
      o: { left: Mount[]; right: Mount[]; media_type?: string; ref?: string; labels?: Record<string, string> },
      opts?: CallOptions,
    ): Promise<Descriptor> => (await this.call('diff', 'Diff', o, opts)).diff,
  };

  // ---- containers, tasks -----------------------------------------------------------------------

  readonly containers = {
    create: async (container: NewContainer, opts?: CallOptions): Promise<ContainerRecord> =>
      (await this.call('containers', 'Create', { container }, opts)).container,
    get: async (id: string, opts?: CallOptions): Promise<ContainerRecord> => (await this.call('containers', 'Get', { id }, opts)).container,
    list: async (filters: string[] = [], opts?: CallOptions): Promise<ContainerRecord[]> =>
      (await this.call('containers', 'List', { filters }, opts)).containers,
    /** paths like ['labels', 'spec', 'labels.<key>']; an empty list replaces every updatable field. */
    update: async (container: Partial<ContainerRecord> & { id: string }, paths: string[], opts?: CallOptions): Promise<ContainerRecord> =>
      (await this.call('containers', 'Update', { container, update_mask: { paths } }, opts)).container,
    delete: async (id: string, opts?: CallOptions): Promise<void> => {
      await this.call('containers', 'Delete', { id }, opts);
    },
  };

  readonly tasks = {
    /** The stdio FIFOs must already be open for reading (see notes §4), or this hangs. */
    create: async (req: CreateTaskRequest, opts?: CallOptions): Promise<{ container_id: string; pid: number }> =>
      this.call('tasks', 'Create', req, opts),
    start: async (containerId: string, execId = '', opts?: CallOptions): Promise<number> =>
      (await this.call('tasks', 'Start', { container_id: containerId, exec_id: execId }, opts)).pid,
    /** Resolves when the process exits; issue it before start. Fails with UNAVAILABLE if containerd goes away. */
    wait: async (containerId: string, execId = '', opts?: CallOptions): Promise<ExitResult> =>
      this.call('tasks', 'Wait', { container_id: containerId, exec_id: execId }, opts),
    kill: async (containerId: string, signal: number, o: { execId?: string; all?: boolean } = {}, opts?: CallOptions): Promise<void> => {
      await this.call('tasks', 'Kill', { container_id: containerId, exec_id: o.execId ?? '', signal, all: !!o.all }, opts);
    },
    delete: async (containerId: string, opts?: CallOptions): Promise<DeleteTaskResult> =>
      this.call('tasks', 'Delete', { container_id: containerId }, opts),
    exec: async (req: ExecProcessRequest, opts?: CallOptions): Promise<void> => {
      await this.call('tasks', 'Exec', req, opts);
    },
    deleteProcess: async (containerId: string, execId: string, opts?: CallOptions): Promise<DeleteTaskResult> =>
      this.call('tasks', 'DeleteProcess', { container_id: containerId, exec_id: execId }, opts),
    resizePty: async (containerId: string, size: { width: number; height: number }, execId = '', opts?: CallOptions): Promise<void> => {
      await this.call('tasks', 'ResizePty', { container_id: containerId, exec_id: execId, ...size }, opts);
    },
    closeIO: async (containerId: string, execId = '', opts?: CallOptions): Promise<void> => {
      await this.call('tasks', 'CloseIO', { container_id: containerId, exec_id: execId, stdin: true }, opts);
    },
    pause: async (containerId: string, opts?: CallOptions): Promise<void> => {
      await this.call('tasks', 'Pause', { container_id: containerId }, opts);
    },
    resume: async (containerId: string, opts?: CallOptions): Promise<void> => {
      await this.call('tasks', 'Resume', { container_id: containerId }, opts);
    },
    get: async (containerId: string, execId = '', opts?: CallOptions): Promise<TaskProcess> =>
      (await this.call('tasks', 'Get', { container_id: containerId, exec_id: execId }, opts)).process,
    list: async (filter = '', opts?: CallOptions): Promise<TaskProcess[]> => (await this.call('tasks', 'List', { filter }, opts)).tasks,
    listPids: async (containerId: string, opts?: CallOptions): Promise<PidInfo[]> =>
      (await this.call('tasks', 'ListPids', { container_id: containerId }, opts)).processes,
    /** filters like ['id==<container id>']; data is decoded when the cgroups protos are available. */
    metrics: async (filters: string[], opts?: CallOptions): Promise<TaskMetric[]> => {
      const res = await this.call<{ metrics: { id: string; timestamp: TaskMetric['timestamp']; data: AnyMessage | null }[] }>(
        'tasks',
        'Metrics',
        { filters },
        opts,
      );
      return res.metrics.map((m) => ({ id: m.id, timestamp: m.timestamp, raw: m.data, data: this.protos.decodeAny(m.data) }));
    },
    /** resources: an Any of the OCI LinuxResources as JSON (types.containerd.io/opencontainers/runtime-spec/1/LinuxResources). */
    update: async (
      containerId: string,
      resources: AnyMessage | null,
      annotations: Record<string, string> = {},
      opts?: CallOptions,
    ): Promise<void> => {
      await this.call('tasks', 'Update', { container_id: containerId, resources, annotations }, opts);
    },
  };

  // ---- images, introspection, events -----------------------------------------------------------

  readonly images = {
    create: async (image: ImageRecord, opts?: CallOptions): Promise<ImageRecord> =>
      (await this.call('images', 'Create', { image }, opts)).image,
    get: async (name: string, opts?: CallOptions): Promise<ImageRecord> => (await this.call('images', 'Get', { name }, opts)).image,
    list: async (filters: string[] = [], opts?: CallOptions): Promise<ImageRecord[]> =>
      (await this.call('images', 'List', { filters }, opts)).images,
    update: async (image: ImageRecord, paths: string[] = [], opts?: CallOptions): Promise<ImageRecord> =>
      (await this.call('images', 'Update', { image, update_mask: { paths } }, opts)).image,
    /** sync runs a GC pass, so the image's now unreferenced blobs and snapshots are gone on return. */
    delete: async (name: string, o: { sync?: boolean } = {}, opts?: CallOptions): Promise<void> => {
      await this.call('images', 'Delete', { name, sync: !!o.sync }, opts);
    },
  };

  readonly introspection = {
    plugins: async (filters: string[] = [], opts?: CallOptions): Promise<Plugin[]> =>
      (await this.call('introspection', 'Plugins', { filters }, { namespace: null, ...opts })).plugins,
    server: async (opts?: CallOptions): Promise<{ uuid: string }> => this.call('introspection', 'Server', {}, { namespace: null, ...opts }),
  };

  /**
   * Subscribes to events (containerd filter syntax, ORed: 'namespace==engine', 'topic~="/tasks/"').
   * Re-subscribes by itself after containerd restarts and then calls onResubscribed, from which point
   * no event is missed: reconcile state there (events during the outage are lost).
   */
  subscribe(filters: string[], onEvent: (e: SupervisorEvent) => void, o: SubscribeOptions = {}): EventSubscription {
    return new EventSubscription(this, filters, onEvent, o);
  }

  /** `containerd.runc.v1.Options` as the Any for Container.runtime.options. */
  runcOptions(opts: RuncOptions): AnyMessage {
    return this.protos.encodeRuncOptions(opts);
  }
}
