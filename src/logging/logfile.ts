// A rotating log file, format-agnostic: encoders append whole records to an output buffer, a pump
// writes the queued buffers with one writev per batch, and rotation happens between records when
// the file has reached max-size (dockerd's rule: check before each record). Files rotate as
// x → x.1 → x.2 … (x.N.gz when compressed), never by truncating in place.
//
// Followers never lose lines across rotation: every file generation is a Segment that owns an open
// handle, and a follower holds a reference on its segment and on every newer one, so a rotated (or
// already deleted) file stays readable until the follower has drained it. A follower that falls
// absurdly far behind (see maxLag) stops pinning new segments and may skip some.

import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { compressLogFile } from './gzip.ts';

export interface LogFileOptions {
  path: string;
  /** Bytes before rotating; Infinity = never. */
  maxSize: number;
  /** Files kept including the current one (1 = the rotated file is deleted). */
  maxFiles: number;
  compress: boolean;
  onError?: (err: unknown) => void;
}

/** One generation of the current file. */
export class Segment {
  refs = 0;
  /** No more bytes will be written (rotated or closed). */
  complete = false;
  next: Segment | null = null;
  constructor(
    readonly gen: number,
    public handle: FileHandle | null,
    /** Bytes written and readable. */
    public size: number,
  ) {}

  release(): void {
    if (--this.refs === 0 && this.handle) {
      const h = this.handle;
      this.handle = null;
      h.close().catch(() => {}); // The last reader let go of the handle: a failed close loses nothing (it was opened read-only).
    }
  }
}

/** A reader that keeps up with the writer. */
export interface Follower {
  seg: Segment;
  /** Newest generation this follower holds a reference on. */
  heldUntil: number;
}

/** A rotated file opened for a read. */
export interface HistoryFile {
  handle: FileHandle;
  gz: boolean;
  size: number;
}

export interface Snapshot {
  /** Rotated files, oldest first. */
  history: HistoryFile[];
  /** The current generation and how much of it existed at snapshot time. */
  current: Segment;
  limit: number;
  follower: Follower | null;
}

/** An output buffer and how many of its queued pieces are not written yet. */
interface OutBuf {
  buf: Buffer;
  pending: number;
}

type QueueItem = { data: Buffer; owner: OutBuf } | { rotate: true; lastTs: bigint };

const MIN_BUF = 64 * 1024;
const MAX_BUF = 1024 * 1024;
const SPARE_BUFS = 4;
const WRITE_BATCH_BYTES = 8 * 1024 * 1024;
const WRITE_BATCH_BUFS = 512;
/**
 * Output committed while no write is under way (the last one has finished within QUIET_MS)
 * waits up to COALESCE_MS for more (or until COALESCE_BYTES are queued) before it is written: a
 * container's output arrives in pieces of a few KiB (the shim's writes), and a write each cost a
 * thread-pool round trip and a syscall, more than encoding the piece (measured: 8 KiB pieces at
 * 40 MB/s, ~60 µs of main thread per piece; a 256 MiB flood went out in 13 000 writes of ~20 KiB
 * when only an idle pump waited, ~1 000 now). flush() writes everything at once.
 */
const COALESCE_MS = 2;
const COALESCE_BYTES = 256 * 1024;
/**
 * Output arriving when the last write ended longer ago than this is written at once: a quiet
 * container (a line now and then) gains nothing from waiting, and a line held in memory is lost
 * to a `kill -9` of the daemon, while a flood is written to back to back and still coalesces.
 */
const QUIET_MS = 20;

export class LogFile {
  readonly path: string;
  readonly maxSize: number;
  readonly maxFiles: number;
  readonly compress: boolean;
  private readonly onError: (err: unknown) => void;

  // --- encoder side (synchronous) ---
  /** Output buffer the encoders write records into at `pos`. */
  buf: Buffer = Buffer.alloc(0);
  private out: OutBuf = { buf: this.buf, pending: 0 };
  /** Written-out full-size buffers, reused so a flood does not churn through fresh memory. */
  private spare: Buffer[] = [];
  pos = 0;
  private pieceStart = 0;
  /** Size of the current file counting everything queued for it. */
  fileBytes = 0;
  /** Timestamp of the chunk being encoded (upper bound of the file's last entry at a cut). */
  chunkTs = 0n;

  // --- pump side ---
  private queue: QueueItem[] = [];
  private qHead = 0;
  queuedBytes = 0;
  private pumping: Promise<void> | null = null;
  /** flush() calls waiting: the pump writes everything queued without pausing to coalesce. */
  private flushing = 0;
  private coalescing: NodeJS.Timeout | null = null;
  /** When the last write ended (performance.now()); -Infinity before the first. */
  private lastWriteEnd = -Infinity;
  private drainWaiters: Array<() => void> = [];
  private compressing: Promise<void> = Promise.resolve();

  // --- reader side ---
  private state: 'idle' | 'opening' | 'open' | 'closed' = 'idle';
  private openPromise: Promise<void> | null = null;
  private current: Segment | null = null;
  private followers = new Set<Follower>();
  private changed = deferred();
  /** Odd while a rotation renames files. */
  private epoch = 0;
  private rotationDone = deferred();
  /** Snapshots in progress; rotations wait for them. */
  private holds = 0;
  private holdsReleased = deferred();
  private readonly maxLag: number;

  constructor(opts: LogFileOptions) {
    this.path = opts.path;
    this.maxSize = opts.maxSize;
    this.maxFiles = Math.max(1, opts.maxFiles);
    this.compress = opts.compress && this.maxFiles >= 2 && opts.maxSize !== Infinity;
    this.onError = opts.onError ?? (() => {});
    this.maxLag = opts.maxSize === Infinity ? 1 : Math.min(1024, Math.max(8, Math.ceil((64 * 1024 * 1024) / opts.maxSize)));
  }

  /** A write is queued or in progress. */
  get writing(): boolean {
    return this.pumping !== null;
  }

  /** Opens (creating or appending to) the current file for writing. */
  open(): Promise<void> {
    if (this.state === 'closed') return Promise.reject(new Error('log file is closed'));
    this.openPromise ??= (async () => {
      this.state = 'opening';
      await mkdir(dirname(this.path), { recursive: true });
      const handle = await open(this.path, 'a+', 0o640);
      const { size } = await handle.stat();
      const seg = new Segment(0, handle, size);
      seg.refs = 1; // the writer's
      this.current = seg;
      this.fileBytes += size; // plus what was encoded while it opened
      this.state = 'open';
      this.commit(); // records encoded while the file was opening
    })();
    return this.openPromise;
  }

  // ---------------------------------------------------------------- encoder API

  /** Makes room for n more bytes at `pos` and returns the buffer to write into. */
  reserve(n: number): Buffer {
    if (this.pos + n <= this.buf.length) return this.buf;
    this.flushPiece();
    const grew = this.buf.length > 0;
    const size = Math.max(n, grew ? Math.min(this.buf.length * 2, MAX_BUF) : MIN_BUF);
    this.buf = size === MAX_BUF && this.spare.length > 0 ? this.spare.pop()! : Buffer.allocUnsafeSlow(size);
    this.out = { buf: this.buf, pending: 0 };
    this.pos = 0;
    this.pieceStart = 0;
    return this.buf;
  }

  /** Ends the current file after the records written so far; the next record starts a new file. */
  cut(): void {
    this.flushPiece();
    this.queue.push({ rotate: true, lastTs: this.chunkTs });
    this.fileBytes = 0;
  }

  /** Hands everything encoded so far to the writer (within COALESCE_MS when little is queued). */
  commit(): void {
    this.flushPiece();
    if (this.pumping || this.qHead >= this.queue.length) return;
    if (this.queuedBytes >= COALESCE_BYTES || performance.now() - this.lastWriteEnd > QUIET_MS) this.startPump();
    else this.coalescing ??= setTimeout(() => this.startPump(), COALESCE_MS);
  }

  private startPump(): void {
    if (this.coalescing) clearTimeout(this.coalescing);
    this.coalescing = null;
    // Records may be encoded before the file is open (the FIFO readers start first): they wait.
    if (this.state === 'opening') return;
    if (this.qHead < this.queue.length && !this.pumping) this.pumping = this.pump();
  }

  private flushPiece(): void {
    if (this.pos > this.pieceStart) {
      this.out.pending++;
      this.queue.push({ data: this.buf.subarray(this.pieceStart, this.pos), owner: this.out });
      this.queuedBytes += this.pos - this.pieceStart;
      this.pieceStart = this.pos;
    }
  }

  /** Resolves once less than `below` bytes wait to be written. */
  waitForRoom(below: number): Promise<void> {
    if (this.queuedBytes < below || !this.pumping) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.queuedBytes < below || !this.pumping) resolve();
        else this.drainWaiters.push(check);
      };
      this.drainWaiters.push(check);
    });
  }

  /** Resolves when everything committed has been written. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      this.flushPiece();
      this.startPump();
      while (this.pumping) await this.pumping;
    } finally {
      this.flushing--;
    }
  }

  private wakeDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  private async pump(): Promise<void> {
    try {
      while (this.qHead < this.queue.length) {
        const head = this.queue[this.qHead]!;
        if ('rotate' in head) {
          this.qHead++;
          await this.rotate(head.lastTs);
          continue;
        }
        const bufs: Buffer[] = [];
        const owners: OutBuf[] = [];
        let bytes = 0;
        while (this.qHead < this.queue.length && bufs.length < WRITE_BATCH_BUFS && bytes < WRITE_BATCH_BYTES) {
          const item = this.queue[this.qHead]!;
          if ('rotate' in item) break;
          bufs.push(item.data);
          owners.push(item.owner);
          bytes += item.data.length;
          this.qHead++;
        }
        const seg = this.current;
        if (seg?.handle && this.state !== 'idle') {
          try {
            await writeAll(seg.handle, bufs, bytes);
            seg.size += bytes;
          } catch (err) {
            this.onError(err); // dockerd drops what it cannot write, and so do we
          }
        }
        this.queuedBytes -= bytes;
        this.lastWriteEnd = performance.now();
        for (const o of owners) {
          if (--o.pending === 0 && o !== this.out && o.buf.length === MAX_BUF && this.spare.length < SPARE_BUFS) this.spare.push(o.buf);
        }
        if (this.qHead > 1024 && this.qHead * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.qHead);
          this.qHead = 0;
        }
        this.notify();
        this.wakeDrainWaiters();
        // What arrived during the write waits to coalesce too (a flood would otherwise go out in
        // as many small writes as there were reads while each write ran).
        if (this.flushing === 0 && this.queuedBytes < COALESCE_BYTES) break;
      }
    } finally {
      if (this.qHead >= this.queue.length) {
        this.queue = [];
        this.qHead = 0;
      }
      this.pumping = null;
      this.wakeDrainWaiters();
      if (this.qHead < this.queue.length) this.coalescing ??= setTimeout(() => this.startPump(), COALESCE_MS);
      else this.scheduleTrim();
    }
  }

  private trimTimer: NodeJS.Timeout | null = null;

  /** A quiet container should not keep megabytes of output buffers: drop them after a second idle. */
  private scheduleTrim(): void {
    if (this.trimTimer) return;
    this.trimTimer = setTimeout(() => {
      this.trimTimer = null;
      if (this.pumping) return;
      this.spare = [];
      if (this.pos === this.pieceStart && this.buf.length > MIN_BUF) {
        this.buf = Buffer.alloc(0);
        this.out = { buf: this.buf, pending: 0 };
        this.pos = this.pieceStart = 0;
      }
    }, 1000);
    this.trimTimer.unref();
  }

  private async rotate(lastTs: bigint): Promise<void> {
    const old = this.current;
    if (!old?.handle || this.state !== 'open') return;
    while (this.holds > 0) await this.holdsReleased.promise; // a reader is taking a snapshot
    this.epoch++;
    try {
      await this.compressing;
      const base = this.path;
      if (this.maxFiles >= 2) {
        const ext = this.compress ? '.gz' : '';
        await rm(`${base}.${this.maxFiles - 1}${ext}`, { force: true });
        for (let i = this.maxFiles - 1; i > 1; i--) await renameIfExists(`${base}.${i - 1}${ext}`, `${base}.${i}${ext}`);
        await renameIfExists(base, `${base}.1`);
      } else {
        await rm(base, { force: true });
      }
      const handle = await open(base, 'a+', 0o640);
      const seg = new Segment(old.gen + 1, handle, 0);
      seg.refs = 1;
      for (const f of this.followers) {
        if (seg.gen - f.seg.gen <= this.maxLag) {
          seg.refs++;
          f.heldUntil = seg.gen;
        }
      }
      old.next = seg;
      old.complete = true;
      this.current = seg;
      old.release();
      if (this.compress) {
        this.compressing = compressLogFile(`${base}.1`, `${base}.1.gz`, lastTs).catch((err: unknown) => this.onError(err));
      }
    } catch (err) {
      // Keep appending to the old file rather than lose lines.
      this.onError(err);
    } finally {
      this.epoch++;
      const done = this.rotationDone;
      this.rotationDone = deferred();
      done.resolve();
      this.notify();
    }
  }

  /** Writes what is queued, then closes the file; followers drain and end. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'opening') await this.openPromise?.catch(() => {}); // A failed open was already reported to the writer that triggered it; close only waits for it.
    await this.flush();
    await this.compressing;
    this.state = 'closed';
    const seg = this.current;
    if (seg && !seg.complete) {
      seg.complete = true;
      seg.release();
    }
    this.buf = Buffer.alloc(0);
    this.out = { buf: this.buf, pending: 0 };
    this.spare = [];
    this.pos = this.pieceStart = 0;
    if (this.trimTimer) clearTimeout(this.trimTimer);
    this.trimTimer = null;
    this.notify();
  }

  // ---------------------------------------------------------------- reader API

  private notify(): void {
    const d = this.changed;
    this.changed = deferred();
    d.resolve();
  }

  /** Resolves on the next write, rotation or close (or when the signal aborts). */
  changedOrAborted(signal: AbortSignal | undefined): Promise<void> {
    const p = this.changed.promise;
    if (!signal) return p;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /**
   * Opens the rotated files (unless `history` is false) and pins the current generation,
   * consistently: rotations wait while a snapshot is being taken. With follow on a live file, also
   * registers a follower. On an idle or closed file, reads what is on disk.
   */
  async snapshot(follow: boolean, history = true): Promise<Snapshot> {
    if (follow && this.state === 'idle') await this.open().catch(() => {}); // A file that cannot be opened yet is read from disk as it is; the writer reports the open failure.
    if (this.state === 'opening') await this.openPromise?.catch(() => {}); // See above: only waiting for an open in progress, whose failure the writer reports.
    this.holds++;
    try {
      while (this.epoch & 1) await this.rotationDone.promise;
      if (this.state !== 'open') return await this.diskSnapshot(history);
      const files = history ? await this.openHistory() : [];
      if (this.state !== 'open') {
        await closeAll(files);
        return await this.diskSnapshot(history);
      }
      const current = this.current!;
      current.refs++;
      let follower: Follower | null = null;
      if (follow) {
        follower = { seg: current, heldUntil: current.gen };
        this.followers.add(follower);
      }
      return { history: files, current, limit: current.size, follower };
    } finally {
      if (--this.holds === 0) {
        const released = this.holdsReleased;
        this.holdsReleased = deferred();
        released.resolve();
      }
    }
  }

  private async diskSnapshot(withHistory: boolean): Promise<Snapshot> {
    const history = withHistory ? await this.openHistory() : [];
    let handle: FileHandle | null = null;
    let size = 0;
    try {
      handle = await open(this.path, 'r');
      size = (await handle.stat()).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        await closeAll(history);
        throw err;
      }
    }
    const current = new Segment(0, handle, size);
    current.refs = 1;
    current.complete = true;
    return { history, current, limit: size, follower: null };
  }

  private async openHistory(): Promise<HistoryFile[]> {
    const files: HistoryFile[] = [];
    try {
      for (let i = this.maxFiles - 1; i >= 1; i--) {
        const f = (await openIfExists(`${this.path}.${i}`, false)) ?? (await openIfExists(`${this.path}.${i}.gz`, true));
        if (f) files.push(f);
      }
    } catch (err) {
      await closeAll(files);
      throw err;
    }
    return files;
  }

  /** Moves a follower from its finished segment to the next one; false when there is none. */
  advance(f: Follower): boolean {
    const next = f.seg.next;
    if (!next) return false;
    if (next.gen <= f.heldUntil) {
      f.seg.release();
      f.seg = next;
      return true;
    }
    // Fell more than maxLag behind: take whatever is still open from here on.
    let s: Segment | null = next;
    while (s && !s.handle) s = s.next;
    if (!s) return false;
    for (let x: Segment | null = s; x; x = x.next) {
      x.refs++;
      f.heldUntil = x.gen;
    }
    f.seg.release();
    f.seg = s;
    return true;
  }

  /** Drops a follower's references. */
  endFollow(f: Follower): void {
    if (!this.followers.delete(f)) return;
    let s: Segment | null = f.seg;
    while (s && s.gen <= f.heldUntil) {
      const next: Segment | null = s.next;
      s.release();
      s = next;
    }
  }
}

async function writeAll(handle: FileHandle, bufs: Buffer[], total: number): Promise<void> {
  let { bytesWritten } = await handle.writev(bufs);
  while (bytesWritten < total) {
    // Short write (rare on regular files): drop what went out and retry the rest.
    let skip = bytesWritten;
    total -= bytesWritten;
    while (skip > 0 && bufs.length) {
      const first = bufs[0]!;
      if (first.length <= skip) {
        skip -= first.length;
        bufs.shift();
      } else {
        bufs[0] = first.subarray(skip);
        skip = 0;
      }
    }
    ({ bytesWritten } = await handle.writev(bufs));
    if (bytesWritten === 0) throw new Error('log write made no progress');
  }
}

async function renameIfExists(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

async function openIfExists(path: string, gz: boolean): Promise<HistoryFile | null> {
  try {
    const handle = await open(path, 'r');
    const { size } = await handle.stat();
    return { handle, gz, size };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export async function closeAll(files: HistoryFile[]): Promise<void> {
  await Promise.all(files.map((f) => f.handle.close().catch(() => {}))); // Read handles of a reader that is done: a failed close loses nothing.
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
