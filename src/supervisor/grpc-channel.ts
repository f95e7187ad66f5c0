// The one gRPC channel to containerd's unix socket that every SupervisorClient view shares, and
// the raw calls made on it: each carries the containerd-namespace / containerd-lease metadata and
// an optional deadline, and a unary call's gRPC status becomes an error of the daemon's table.

import * as grpc from '@grpc/grpc-js';
import type { CallOptions } from './calls.ts';
import { fromGrpc } from './errors.ts';
import { loadProtos, type Protos, type ServiceName } from './protos.ts';

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

/** The metadata of a call: the namespace (the client's default unless opts names one; null: none) and lease. */
export function callMetadata(namespace: string, opts: CallOptions): grpc.Metadata {
  const md = new grpc.Metadata(opts.waitForReady ? { waitForReady: true } : undefined);
  const ns = opts.namespace === undefined ? namespace : opts.namespace;
  if (ns) md.set('containerd-namespace', ns);
  if (opts.lease) md.set('containerd-lease', opts.lease);
  return md;
}

function callOptions(opts: CallOptions): grpc.CallOptions {
  return opts.deadlineMs !== undefined ? { deadline: Date.now() + opts.deadlineMs } : {};
}

export class ContainerdChannel {
  readonly protos: Protos;
  /** Whether close() was called. */
  closed = false;
  private readonly channel: grpc.Channel;
  private readonly raw: grpc.Client;

  constructor(readonly address: string) {
    this.protos = loadProtos();
    const target = grpcTarget(address);
    const creds = grpc.credentials.createInsecure();
    this.channel = new grpc.Channel(target, creds, CHANNEL_OPTIONS);
    this.raw = new grpc.Client(target, creds, { channelOverride: this.channel });
  }

  /** Closes the channel; subscriptions end with it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.raw.close();
    this.channel.close();
  }

  /** A unary call; rejects with an EngineError mapped from the gRPC status. */
  unary<Res>(service: ServiceName, method: string, req: object, md: grpc.Metadata, opts: CallOptions): Promise<Res> {
    const m = this.protos.method(service, method);
    return new Promise<Res>((resolve, reject) => {
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      const call = this.raw.makeUnaryRequest<object, Res>(m.path, m.serialize, m.deserialize, req, md, callOptions(opts), (err, res) => {
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) reject(fromGrpc(err));
        else resolve(res as Res);
      });
      const onAbort = () => call.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A server-streaming call; the caller consumes the stream and maps errors. */
  serverStream<Res>(
    service: ServiceName,
    method: string,
    req: object,
    md: grpc.Metadata,
    opts: CallOptions,
  ): grpc.ClientReadableStream<Res> {
    const m = this.protos.method(service, method);
    return this.raw.makeServerStreamRequest<object, Res>(m.path, m.serialize, m.deserialize, req, md, callOptions(opts));
  }

  bidiStream<Req extends object, Res>(
    service: ServiceName,
    method: string,
    md: grpc.Metadata,
    opts: CallOptions,
  ): grpc.ClientDuplexStream<Req, Res> {
    const m = this.protos.method(service, method);
    return this.raw.makeBidiStreamRequest<Req, Res>(m.path, m.serialize, m.deserialize, md, callOptions(opts));
  }
}
