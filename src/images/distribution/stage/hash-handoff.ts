// The blob digest of a worker's download computed on the daemon's main thread. A stage worker
// (stage-worker.ts) is a pull's critical path: it receives, writes, gunzips, hashes twice and
// extracts, while the main thread mostly waits. Profiled on a 210 MB pull with one worker, the
// blob's SHA-256 was ~18 % of the worker's CPU; here it runs beside the rest, on the main thread,
// without a copy: the blob file's pooled write buffers (pooled-writes.ts) are shared memory, and
// as each goes to its write it is also handed to the main thread, which hashes it and raises the
// flag stored after its bytes. A buffer is reused once written and hashed. Messages of one worker
// arrive in order, so a job's bytes are all hashed once its 'done' arrives.
import type { Hash } from 'node:crypto';

/** What the worker posts for each buffer of a blob file: the next `bytes` of job `id`'s blob. */
export interface HashMessage {
  type: 'hash';
  buf: SharedArrayBuffer;
  bytes: number;
}

/** A blob file's side of the handoff (PooledFile). */
export interface HashHandoff {
  /** `buf[0, len)` are the blob's next bytes. */
  send(buf: Buffer, len: number): void;
  /** Once the main thread hashed what `send` gave it (undefined: it already has). */
  hashed(buf: Buffer): Promise<void> | undefined;
}

/** The hashed flag after a shared buffer's bytes: 0 sent, 1 hashed. */
const flagOf = (sab: SharedArrayBuffer) => new Int32Array(sab, sab.byteLength - 4, 1);

/** A buffer of `size` bytes (a multiple of 4) over shared memory, with room for its flag after them. */
export function sharedBuffer(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size + 4), 0, size);
}

/** The worker's handoff for one job: `post` sends a message of the job to the main thread. */
export function handoffTo(post: (m: HashMessage) => void): HashHandoff {
  return {
    send(buf, len) {
      const sab = buf.buffer as SharedArrayBuffer;
      Atomics.store(flagOf(sab), 0, 0);
      post({ type: 'hash', buf: sab, bytes: len });
    },
    hashed(buf) {
      const w = Atomics.waitAsync(flagOf(buf.buffer as SharedArrayBuffer), 0, 0);
      return w.async ? w.value.then(() => undefined) : undefined;
    },
  };
}

/** The main thread's side: hashes the message's bytes into `hash` (none: a job no longer followed) and frees the buffer. */
export function takeHashed(m: HashMessage, hash: Hash | undefined): void {
  hash?.update(new Uint8Array(m.buf, 0, m.bytes));
  const flag = flagOf(m.buf);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
