// The raw call surface of the containerd client, declared apart from the client so that the helpers
// the client is built from (content writes, the event subscription) can take it without importing
// client.ts back. SupervisorClient implements it.
import type * as grpc from '@grpc/grpc-js';
import type { Protos, ServiceName } from './protos.ts';
import type { ContentInfo } from './types.ts';

export interface CallOptions {
  /** Overrides the client's namespace; null sends no namespace header. */
  namespace?: string | null;
  lease?: string;
  deadlineMs?: number;
  /** Queue the call while the channel is (re)connecting instead of failing fast with UNAVAILABLE. */
  waitForReady?: boolean;
  signal?: AbortSignal;
}

export interface SupervisorCalls {
  readonly namespace: string;
  /** The default snapshotter of the snapshot calls. */
  readonly snapshotter: string;
  readonly closed: boolean;
  readonly protos: Protos;
  call<Res = any>(service: ServiceName, method: string, req: object, opts?: CallOptions): Promise<Res>;
  serverStream<Res = any>(service: ServiceName, method: string, req: object, opts?: CallOptions): grpc.ClientReadableStream<Res>;
  /** Reads a whole server stream into an array (errors mapped). */
  collect<Res = any>(service: ServiceName, method: string, req: object, opts?: CallOptions): Promise<Res[]>;
  bidiStream<Req extends object = any, Res = any>(
    service: ServiceName,
    method: string,
    opts?: CallOptions,
  ): grpc.ClientDuplexStream<Req, Res>;
  contentInfo(digest: string, opts?: CallOptions): Promise<ContentInfo>;
  contentUpdate(info: { digest: string; labels?: Record<string, string> }, paths: string[], opts?: CallOptions): Promise<ContentInfo>;
}
