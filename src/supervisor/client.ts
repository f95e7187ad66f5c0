// The one gRPC client to containerd: a single channel to its unix socket shared by every view
// (grpc-channel.ts: the metadata, errors mapped to the daemon's error table), a default namespace
// and snapshotter per view, and typed wrappers for the calls the daemon makes (the services' in
// service-calls.ts, content here). Message shapes: ./types.ts.

import type * as grpc from '@grpc/grpc-js';
import type { CallOptions, SupervisorCalls } from './calls.ts';
import { type AnyMessage, type Protos, type RuncOptions, type ServiceName } from './protos.ts';
import { fromGrpc, grpcCode, GrpcStatus } from './errors.ts';
import { callMetadata, ContainerdChannel } from './grpc-channel.ts';
import { writeContent, type ContentWriteOptions, type ContentWriteResult } from './content-write.ts';
import { EventSubscription, type SubscribeOptions } from './events.ts';
import {
  containersCalls,
  diffCalls,
  imagesCalls,
  introspectionCalls,
  leasesCalls,
  namespacesCalls,
  readContent,
  snapshotsCalls,
  tasksCalls,
} from './service-calls.ts';
import type { ContentInfo, IngestStatus, SupervisorEvent } from './types.ts';

export type { CallOptions } from './calls.ts';
export { GC_EXPIRE_LABEL } from './service-calls.ts';

export interface ClientOptions {
  namespace: string;
  /** Default snapshotter for the snapshot calls. */
  snapshotter?: string;
}

export const SPEC_TYPE_URL = 'types.containerd.io/opencontainers/runtime-spec/1/Spec';
export const PROCESS_TYPE_URL = 'types.containerd.io/opencontainers/runtime-spec/1/Process';

/** Any carrying JSON, the way containerd stores OCI specs and exec processes. */
export function jsonAny(typeUrl: string, value: unknown): AnyMessage {
  return { type_url: typeUrl, value: Buffer.from(JSON.stringify(value)) };
}

export class SupervisorClient implements SupervisorCalls {
  readonly namespace: string;
  readonly snapshotter: string;
  private readonly core: ContainerdChannel;

  constructor(address: string, opts: ClientOptions);
  constructor(core: ContainerdChannel, opts: ClientOptions);
  constructor(addressOrCore: string | ContainerdChannel, opts: ClientOptions) {
    this.namespace = opts.namespace;
    this.snapshotter = opts.snapshotter ?? 'overlayfs';
    this.core = typeof addressOrCore === 'string' ? new ContainerdChannel(addressOrCore) : addressOrCore;
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
    this.core.close();
  }

  metadata(opts: CallOptions = {}): grpc.Metadata {
    return callMetadata(this.namespace, opts);
  }

  /** A unary call; rejects with an EngineError mapped from the gRPC status. */
  call<Res = any>(service: ServiceName, method: string, req: object, opts: CallOptions = {}): Promise<Res> {
    return this.core.unary<Res>(service, method, req, this.metadata(opts), opts);
  }

  /** A server-streaming call; the caller consumes the stream and maps errors (see collect). */
  serverStream<Res = any>(service: ServiceName, method: string, req: object, opts: CallOptions = {}): grpc.ClientReadableStream<Res> {
    return this.core.serverStream<Res>(service, method, req, this.metadata(opts), opts);
  }

  bidiStream<Req extends object = any, Res = any>(
    service: ServiceName,
    method: string,
    opts: CallOptions = {},
  ): grpc.ClientDuplexStream<Req, Res> {
    return this.core.bidiStream<Req, Res>(service, method, this.metadata(opts), opts);
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

  readonly namespaces = namespacesCalls(this);

  readonly leases = leasesCalls(this);

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
  contentRead(digest: string, o: { offset?: number; size?: number } = {}, opts?: CallOptions): AsyncIterable<Buffer> {
    return readContent(this, digest, o, opts);
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

  readonly snapshots = snapshotsCalls(this);

  readonly diff = diffCalls(this);

  // ---- containers, tasks -----------------------------------------------------------------------

  readonly containers = containersCalls(this);

  readonly tasks = tasksCalls(this);

  // ---- images, introspection, events -----------------------------------------------------------

  readonly images = imagesCalls(this);

  readonly introspection = introspectionCalls(this);

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
