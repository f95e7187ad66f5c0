// Content.Write, the way containerd 1.6's server needs it (notes §3):
// - STAT first (with total and expected when known): answers the resume offset; a blob already in
//   this namespace fails right there with ALREADY_EXISTS, which we count as success; a blob shared
//   from the backend answers offset == total, and then a bare COMMIT is all that is left.
// - every WRITE carries its explicit offset (offset 0 on a non-empty ingest truncates it; we rely on
//   that to restart an ingest we cannot resume).
// - exactly one reply per request, plus one echo of the COMMIT reply before the server ends the call.
// Writes are pipelined (a few 1 MiB chunks in flight): the server handles them in order, and each
// reply's offset is checked against what we have sent.

import { createHash } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { internal } from '../errors.ts';
import { fromGrpc, grpcCode, GrpcStatus } from './errors.ts';
import type { CallOptions, SupervisorCalls } from './calls.ts';

export const CONTENT_CHUNK = 1 << 20;
const WINDOW = 4;

export interface ContentWriteOptions {
  /** Digest the blob must have; computed for Buffers when omitted. */
  expected?: string;
  /** Size in bytes; taken from Buffers, required for a resumable stream upload. */
  total?: number;
  /** Labels set on commit (and merged into an already present blob's labels). */
  labels?: Record<string, string>;
  lease?: string;
  deadlineMs?: number;
  chunkSize?: number;
}

export interface ContentWriteResult {
  digest: string;
  size: number;
  /** True when the blob was already there (nothing was uploaded). */
  existed: boolean;
}

interface WriteReply {
  action: string;
  offset: string;
  total: string;
  digest: string;
}

/** Turns stream events into an awaitable queue of replies (one per request). */
class Replies {
  private readonly queue: WriteReply[] = [];
  private waiter: { resolve: (r: WriteReply) => void; reject: (e: unknown) => void } | null = null;
  failure: unknown = null;
  private ended = false;
  readonly finished: Promise<void>;

  constructor(stream: grpc.ClientDuplexStream<object, WriteReply>) {
    stream.on('data', (r: WriteReply) => {
      if (this.waiter) {
        this.waiter.resolve(r);
        this.waiter = null;
      } else this.queue.push(r);
    });
    stream.on('error', (e) => this.fail(e));
    // 'status' may come before 'error': build the failure from it so the gRPC code is never lost.
    this.finished = new Promise((resolve) =>
      stream.on('status', (s: grpc.StatusObject) => {
        this.ended = true;
        this.fail(
          s.code === 0
            ? new Error('content write stream ended early')
            : Object.assign(new Error(`${s.code}: ${s.details}`), { code: s.code, details: s.details, metadata: s.metadata }),
        );
        resolve();
      }),
    );
  }

  private fail(e: unknown): void {
    this.failure ??= e;
    if (this.waiter) {
      this.waiter.reject(this.failure);
      this.waiter = null;
    }
  }

  next(): Promise<WriteReply> {
    if (this.queue.length) return Promise.resolve(this.queue.shift()!);
    if (this.failure || this.ended) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }
}

async function* rechunk(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, size: number): AsyncIterable<Buffer> {
  let pending: Buffer[] = [];
  let pendingLen = 0;
  for await (const piece of source) {
    let buf = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    while (pendingLen + buf.length >= size) {
      const take = size - pendingLen;
      pending.push(buf.subarray(0, take));
      yield Buffer.concat(pending, size);
      buf = buf.subarray(take);
      pending = [];
      pendingLen = 0;
    }
    if (buf.length) {
      pending.push(buf);
      pendingLen += buf.length;
    }
  }
  if (pendingLen) yield Buffer.concat(pending, pendingLen);
}

export async function writeContent(
  client: SupervisorCalls,
  ref: string,
  data: Buffer | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  o: ContentWriteOptions = {},
): Promise<ContentWriteResult> {
  const isBuffer = Buffer.isBuffer(data);
  const total = isBuffer ? data.length : o.total;
  const expected = o.expected ?? (isBuffer ? `sha256:${createHash('sha256').update(data).digest('hex')}` : undefined);
  const chunkSize = o.chunkSize ?? CONTENT_CHUNK;
  const callOpts: CallOptions = { lease: o.lease, deadlineMs: o.deadlineMs };
  const stream = client.bidiStream<object, WriteReply>('content', 'Write', callOpts);
  const replies = new Replies(stream);

  const send = (req: object): Promise<void> => {
    if (replies.failure) return Promise.reject(replies.failure);
    return new Promise((resolve) => (stream.write(req) ? resolve() : stream.once('drain', resolve)));
  };
  let offset = 0;
  const expectOffset = async (want: number) => {
    const r = await replies.next();
    if (Number(r.offset) !== want) throw internal(`content write ${ref}: server at offset ${r.offset}, expected ${want}`);
    return r;
  };

  try {
    await send({ action: 'STAT', ref, total: total ?? 0, expected: expected ?? '' });
    const stat = await replies.next();
    const resumeAt = Number(stat.offset);
    let lastDigest = stat.digest;

    if (!(total !== undefined && expected && resumeAt === total)) {
      // Resume only what we can skip to; otherwise our first WRITE at offset 0 truncates the ingest.
      if (resumeAt > 0 && (total === undefined || resumeAt > total || !isBuffer)) offset = 0;
      else offset = resumeAt;
      const source = isBuffer ? rechunk([data.subarray(offset)], chunkSize) : rechunk(data, chunkSize);
      let inFlight: number[] = [];
      for await (const chunk of source) {
        await send({ action: 'WRITE', ref, offset, data: chunk });
        offset += chunk.length;
        inFlight.push(offset);
        if (inFlight.length >= WINDOW) lastDigest = (await expectOffset(inFlight.shift()!)).digest;
      }
      for (const want of inFlight) lastDigest = (await expectOffset(want)).digest;
      inFlight = [];
      if (total !== undefined && offset !== total) throw internal(`content write ${ref}: got ${offset} bytes, expected ${total}`);
    } else {
      offset = resumeAt;
    }

    await send({ action: 'COMMIT', ref, offset, total: total ?? offset, expected: expected ?? '', labels: o.labels ?? {} });
    const committed = await expectOffset(offset);
    stream.end();
    await replies.finished; // the server's echo of the COMMIT reply, then OK
    return { digest: committed.digest || lastDigest, size: offset, existed: false };
  } catch (err) {
    stream.cancel();
    if (grpcCode(err) !== GrpcStatus.ALREADY_EXISTS) throw fromGrpc(err);
    // Already committed in this namespace (at STAT when we knew the digest, or at COMMIT).
    const digest = expected ?? /"?(sha256:[0-9a-f]{64})/.exec((err as grpc.ServiceError).details)?.[1];
    if (!digest) throw fromGrpc(err);
    const labels = o.labels ?? {};
    if (Object.keys(labels).length) {
      await client.contentUpdate(
        { digest, labels },
        Object.keys(labels).map((k) => `labels.${k}`),
        callOpts,
      );
    }
    const size = total ?? Number((await client.contentInfo(digest, callOpts)).size);
    return { digest, size, existed: true };
  }
}
