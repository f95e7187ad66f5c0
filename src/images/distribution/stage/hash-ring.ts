// The blob digest of a worker's download computed on the daemon's main thread. A stage worker
// (stage-worker.ts) is a pull's critical path: it receives, writes, gunzips, hashes twice and
// extracts, while the main thread mostly waits. Profiled on a 210 MB pull with one worker, the
// blob's SHA-256 was ~18 % of the worker's CPU; here it runs beside the rest, on the main thread.
// The worker copies each received chunk into a ring of shared memory and tells the main thread
// how many bytes of which job it holds; the main thread hashes them in order and advances the
// ring's read position, which the worker waits on (Atomics) when the ring is full. Messages of one
// worker arrive in order, so a job's bytes are all hashed once its 'done' arrives.
import type { Hash } from 'node:crypto';

/** The ring as both threads hold it: its bytes, and the count of bytes the reader consumed. */
export interface HashRingMemory {
  data: SharedArrayBuffer;
  /** BigInt64Array[1]: bytes consumed since the ring was made. */
  consumed: SharedArrayBuffer;
}

export function createHashRing(bytes: number): HashRingMemory {
  return { data: new SharedArrayBuffer(bytes), consumed: new SharedArrayBuffer(8) };
}

/** Bytes of one job told to the reader at once (fewer messages); less at the job's end or a full ring. */
const TELL_EVERY = 256 * 1024;
/** A wait for the reader is this long at most, then repeated: a thread being terminated gets out of it. */
const WAIT_MS = 50;

/** The worker's side: copies bytes in, tells the reader through `tell(id, bytes)`. */
export class HashRingWriter {
  private readonly data: Uint8Array;
  private readonly consumed: BigInt64Array;
  private written = 0;
  private pendingId = 0;
  private pending = 0;

  constructor(
    memory: HashRingMemory,
    private readonly tell: (id: number, bytes: number) => void,
  ) {
    this.data = new Uint8Array(memory.data);
    this.consumed = new BigInt64Array(memory.consumed);
  }

  /** Bytes of job `id` for the reader to hash; returns once they are in the ring. */
  write(id: number, c: Uint8Array): void {
    if (this.pendingId !== id) this.flush();
    this.pendingId = id;
    const size = this.data.length;
    for (let off = 0; off < c.length;) {
      let free = size - (this.written - Number(Atomics.load(this.consumed, 0)));
      if (free === 0) {
        // What is copied but untold must be told first, or the reader never frees its place.
        this.flush();
        this.pendingId = id;
        while ((free = size - (this.written - Number(Atomics.load(this.consumed, 0)))) === 0)
          Atomics.wait(this.consumed, 0, BigInt(this.written - size), WAIT_MS);
      }
      const at = this.written % size;
      const n = Math.min(free, size - at, c.length - off);
      this.data.set(c.subarray(off, off + n), at);
      off += n;
      this.written += n;
      this.pending += n;
      if (this.pending >= TELL_EVERY) this.flush();
    }
  }

  /** Tells the reader what is copied and not yet told: before a job's end is posted. */
  flush(): void {
    if (!this.pending) return;
    this.tell(this.pendingId, this.pending);
    this.pending = 0;
  }
}

/** The main thread's side: hashes what the writer told, in order. */
export class HashRingReader {
  private readonly data: Buffer;
  private readonly consumed: BigInt64Array;
  private read = 0;

  constructor(memory: HashRingMemory) {
    this.data = Buffer.from(memory.data);
    this.consumed = new BigInt64Array(memory.consumed);
  }

  /** The next `bytes` of the ring into `hash` (none: a job no longer followed, the bytes are skipped). */
  take(bytes: number, hash: Hash | undefined): void {
    const size = this.data.length;
    for (let left = bytes; left > 0;) {
      const at = this.read % size;
      const n = Math.min(left, size - at);
      hash?.update(this.data.subarray(at, at + n));
      this.read += n;
      left -= n;
    }
    Atomics.store(this.consumed, 0, BigInt(this.read));
    Atomics.notify(this.consumed, 0);
  }
}
