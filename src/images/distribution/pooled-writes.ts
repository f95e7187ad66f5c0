// File writes of a stage worker (stage-worker.ts) handed to libuv's thread pool. Profiled on a 210 MB
// pull with one worker, half of the worker thread's CPU was the kernel copying the blob file's and
// the extracted files' bytes into the page cache inside write(2); on the pool those copies run on
// threads the process already has, beside the worker's hashing and parsing, so a pull is no
// longer one thread's work: under CPU contention each runnable thread is a share of the cores.
// The bytes go out of a few reused buffers (a fixed number: the memory does not grow with the
// pull); when none is free the caller writes synchronously itself, which also paces it to the pool.
// A staged layer's regular files (StagedFiles, for staged-unpack.ts) are opened as their tar
// entries come, written synchronously or pooled, and get their metadata and close after their last write.
import { closeSync, write, writeSync } from 'node:fs';
import type { TarHeader } from '../tar-reader.ts';
import { applyFileMeta, openNewFile, writeChunkSync } from '../tar-disk.ts';

/** Buffers of the pool's writes in flight, at most `max` of `size` bytes each (one set per worker thread). */
export class WriteBuffers {
  private readonly free: Buffer[] = [];
  private made = 0;

  constructor(
    readonly size: number,
    private readonly max: number,
  ) {}

  /** A buffer for the next write, or null when `max` are in flight (write synchronously then). */
  take(): Buffer | null {
    const b = this.free.pop();
    if (b) return b;
    if (this.made >= this.max) return null;
    this.made++;
    return Buffer.allocUnsafeSlow(this.size);
  }

  give(b: Buffer): void {
    this.free.push(b);
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

  /** `written`: told the length of the file's written prefix as it grows (for a reader following the file). */
  constructor(
    private readonly fd: number,
    private readonly buffers: WriteBuffers,
    private readonly written?: (bytes: number) => void,
  ) {}

  /** Takes `c` (copied: the caller may reuse it). */
  push(c: Buffer): void {
    for (let off = 0; off < c.length;) {
      if (!this.cur) {
        this.cur = this.buffers.take();
        if (!this.cur) {
          // Every buffer in flight: written here, in its place.
          for (; off < c.length;) {
            const n = writeSync(this.fd, c, off, c.length - off, this.pos);
            off += n;
            this.pos += n;
          }
          this.order.push({ end: this.pos, done: true });
          this.advance();
          return;
        }
      }
      const n = c.copy(this.cur, this.fill, off);
      this.fill += n;
      this.pos += n;
      off += n;
      if (this.fill === this.cur.length) this.flush();
    }
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
    writeAt(this.fd, buf, len, this.pos - len, (err) => {
      this.buffers.give(buf);
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

/**
 * A regular file being written. With pooled writes its bytes go out on the pool from `cur` once it
 * is full (or at the entry's end); its owner, mode and times (and those of hard links to it, the
 * same inode) are applied, and it is closed, once its last write is done.
 */
interface OpenFile {
  fd: number;
  h: TarHeader;
  /** The file offset of the next byte. */
  pos: number;
  cur: { buf: Buffer; start: number; fill: number } | null;
  pending: number;
  /** Its entry ended: close when `pending` drops to 0. */
  closing: boolean;
  links: TarHeader[];
  names: string[];
}

export class StagedFiles {
  /** The file whose content is being written. */
  private file: OpenFile | null = null;
  /** Files (by each of their names) with writes still in flight. */
  private readonly open = new Map<string, OpenFile>();
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];

  /** `fail`: a write or a file's metadata failed; `failed`: the stage has failed (metadata no longer applied). */
  constructor(
    private readonly writes: WriteBuffers | null,
    private readonly fail: (err: Error) => void,
    private readonly failed: () => boolean,
  ) {}

  /** A regular file's entry: the file made at `abs`, its content to follow. */
  begin(abs: string, rel: string, h: TarHeader): void {
    this.file = { fd: openNewFile(abs), h, pos: 0, cur: null, pending: 0, closing: false, links: [], names: [rel] };
  }

  /** The name replaced by a later entry: a link to it now means the new one. */
  forget(rel: string): void {
    this.open.delete(rel);
  }

  /** A hard link `rel` to `target` just made: true when its metadata waits for the target's writes in flight. */
  linkDeferred(target: string, rel: string, h: TarHeader): boolean {
    const f = this.open.get(target);
    if (!f) return false;
    f.links.push({ ...h, kind: 'file' });
    f.names.push(rel);
    this.open.set(rel, f);
    return true;
  }

  data(c: Buffer): void {
    const f = this.file;
    if (!f) return;
    if (!this.writes) return writeChunkSync(f.fd, c);
    for (let off = 0; off < c.length;) {
      if (!f.cur) {
        const buf = this.writes.take();
        if (!buf) {
          // Every buffer in flight: this piece written here, at its place in the file.
          for (; off < c.length;) {
            const n = writeSync(f.fd, c, off, c.length - off, f.pos);
            off += n;
            f.pos += n;
          }
          return;
        }
        f.cur = { buf, start: f.pos, fill: 0 };
      }
      const n = c.copy(f.cur.buf, f.cur.fill, off);
      f.cur.fill += n;
      f.pos += n;
      off += n;
      if (f.cur.fill === f.cur.buf.length) this.submit(f);
    }
  }

  /** The entry's end: the file's metadata and close, now or after its last write. */
  end(): void {
    const f = this.file;
    if (!f) return;
    this.file = null;
    if (f.cur) this.submit(f);
    if (!f.pending) {
      try {
        applyFileMeta(f.fd, f.h, f.h);
      } finally {
        closeSync(f.fd);
      }
      return;
    }
    f.closing = true;
    for (const n of f.names) this.open.set(n, f);
  }

  /** The stage failed: the current file closed (once its writes are done: its descriptor could be reused meanwhile). */
  abort(): void {
    const f = this.file;
    if (!f) return;
    this.file = null;
    if (f.cur) this.writes!.give(f.cur.buf);
    f.cur = null;
    if (f.pending) f.closing = true;
    else closeQuietly(f.fd);
  }

  /** Once no write is in flight. */
  drained(): Promise<void> {
    if (!this.inFlight) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  /** The file's filled buffer written on the pool. */
  private submit(f: OpenFile): void {
    const cur = f.cur!;
    f.cur = null;
    f.pending++;
    this.inFlight++;
    writeAt(f.fd, cur.buf, cur.fill, cur.start, (err) => {
      this.writes!.give(cur.buf);
      f.pending--;
      this.inFlight--;
      if (err) this.fail(err);
      if (!f.pending && f.closing) this.finalize(f);
      if (!this.inFlight) for (const w of this.waiters.splice(0)) w();
    });
  }

  /** After the file's last write: its metadata and its hard links', then closed; a failure fails the stage. */
  private finalize(f: OpenFile): void {
    for (const n of f.names) if (this.open.get(n) === f) this.open.delete(n);
    if (this.failed()) return closeQuietly(f.fd);
    try {
      applyFileMeta(f.fd, f.h, f.h);
      // As containerd's applier: each link entry's owner, mode and time go to the shared inode, in order.
      for (const l of f.links) applyFileMeta(f.fd, l, l);
    } catch (err) {
      this.fail(err as Error);
    } finally {
      closeQuietly(f.fd);
    }
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already failing: the staged tree is removed anyway.
  }
}
