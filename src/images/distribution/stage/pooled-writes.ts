// File writes of a stage worker (stage-worker.ts) handed to libuv's thread pool. Profiled on a 210 MB
// pull with one worker, half of the worker thread's CPU was the kernel copying the blob file's and
// the extracted files' bytes into the page cache inside write(2); on the pool those copies run on
// threads the process already has, beside the worker's hashing and parsing, so a pull is no
// longer one thread's work: under CPU contention each runnable thread is a share of the cores.
// The bytes go out of a few reused buffers (a fixed number: the memory does not grow with the
// pull); when none is free the caller writes synchronously itself, which also paces it to the pool
// (a blob file whose buffers are also hashed on the main thread waits for one instead: its bytes
// must reach that hash in order, hash-handoff.ts).
import { write, writeSync } from 'node:fs';
import type { HashHandoff } from './hash-handoff.ts';

/** Buffers of the pool's writes in flight, at most `max` of `size` bytes each (one set per worker thread). */
export class WriteBuffers {
  private readonly free: Buffer[] = [];
  private made = 0;
  private readonly waiters: Array<() => void> = [];

  /** `alloc`: how a buffer is made (shared memory for a blob file's: hash-handoff.ts). */
  constructor(
    readonly size: number,
    private readonly max: number,
    private readonly alloc: (size: number) => Buffer = Buffer.allocUnsafeSlow,
  ) {}

  /** A buffer for the next write, or null when `max` are in flight (write synchronously then, or wait: `freed`). */
  take(): Buffer | null {
    const b = this.free.pop();
    if (b) return b;
    if (this.made >= this.max) return null;
    this.made++;
    return this.alloc(this.size);
  }

  give(b: Buffer): void {
    this.free.push(b);
    this.waiters.shift()?.();
  }

  /** Once a buffer was given back. */
  freed(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }
}

/** Writes `buf[0, len)` at `position` of `fd` on the pool (all of it: a short write is continued); `done` once written or failed. */
export function writeAt(fd: number, buf: Buffer, len: number, position: number, done: (err: Error | null) => void): void {
  let off = 0;
  const step = () =>
    write(fd, buf, off, len - off, position + off, (err, n) => {
      if (err) return done(err);
      off += n;
      if (off < len && n > 0) return step();
      done(off < len ? new Error(`write of ${len} bytes stopped at ${off}`) : null);
    });
  step();
}

/** One file written front to back through the pool (a blob file): bytes gathered into pool buffers, each written once full. */
export class PooledFile {
  private cur: Buffer | null = null;
  private fill = 0;
  /** The file offset of the next byte taken. */
  private pos = 0;
  private pending = 0;
  private readonly waiters: Array<() => void> = [];
  /** Writes sent, in file order: their end offsets, and whether done. */
  private readonly order: Array<{ end: number; done: boolean }> = [];
  /** The first write that failed. */
  error: Error | null = null;

  /**
   * `written`: told the length of the file's written prefix as it grows (for a reader following
   * the file). `handoff`: each buffer is also handed to the main thread to hash, and reused only
   * once hashed; with all buffers in flight, `push` then waits for one (the bytes must reach the
   * hash in order, so none are written in place).
   */
  constructor(
    private readonly fd: number,
    private readonly buffers: WriteBuffers,
    private readonly written?: (bytes: number) => void,
    private readonly handoff?: HashHandoff,
  ) {}

  /** Takes `c` (copied: the caller may reuse it once this returns, or the promise it returns settles). */
  push(c: Buffer): Promise<void> | undefined {
    for (let off = 0; off < c.length;) {
      if (!this.cur) {
        this.cur = this.buffers.take();
        if (!this.cur && this.handoff) {
          const rest = c.subarray(off);
          return this.buffers.freed().then(() => this.push(rest));
        }
        if (!this.cur) {
          // Every buffer in flight: written here, in its place.
          for (; off < c.length;) {
            const n = writeSync(this.fd, c, off, c.length - off, this.pos);
            off += n;
            this.pos += n;
          }
          this.order.push({ end: this.pos, done: true });
          this.advance();
          return undefined;
        }
      }
      const n = c.copy(this.cur, this.fill, off);
      this.fill += n;
      this.pos += n;
      off += n;
      if (this.fill === this.cur.length) this.flush();
    }
    return undefined;
  }

  /** Sends what is gathered; `drained()` then waits for it. */
  flush(): void {
    const buf = this.cur;
    if (!buf) return;
    const len = this.fill;
    this.cur = null;
    this.fill = 0;
    if (!len) return this.buffers.give(buf);
    this.pending++;
    const w = { end: this.pos, done: false };
    this.order.push(w);
    this.handoff?.send(buf, len);
    writeAt(this.fd, buf, len, this.pos - len, (err) => {
      const hashed = this.handoff?.hashed(buf);
      if (hashed) void hashed.then(() => this.buffers.give(buf));
      else this.buffers.give(buf);
      this.error ??= err;
      w.done = true;
      if (!err) this.advance();
      if (!--this.pending) for (const f of this.waiters.splice(0)) f();
    });
  }

  /** The written prefix told, past every write done in order. */
  private advance(): void {
    let end = -1;
    while (this.order[0]?.done) end = this.order.shift()!.end;
    if (end >= 0) this.written?.(end);
  }

  /** Once every write sent is done (check `error` after). */
  drained(): Promise<void> {
    if (!this.pending) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }
}
