// A rotating log file, format-agnostic: encoders append whole records to an output buffer, a pump
// writes the queued buffers with one writev per batch, and rotation happens between records when
// the file has reached max-size (dockerd's rule: check before each record). Its parts: the write
// queue and pump (log-write-pump.ts), the files on disk and their rotation (log-rotation.ts), and
// the readers' side, followers and snapshots across rotations (log-segments.ts).

import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FileRotation } from './log-rotation.ts';
import { maxLagFor, Segment, SegmentReaders, type Snapshot } from './log-segments.ts';
import { MAX_BUF, WritePump, type OutBuf } from './log-write-pump.ts';

export interface LogFileOptions {
  path: string;
  /** Bytes before rotating; Infinity = never. */
  maxSize: number;
  /** Files kept including the current one (1 = the rotated file is deleted). */
  maxFiles: number;
  compress: boolean;
  onError?: (err: unknown) => void;
}

const MIN_BUF = 64 * 1024;

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
  pos = 0;
  private pieceStart = 0;
  /** Size of the current file counting everything queued for it. */
  fileBytes = 0;
  /** Timestamp of the chunk being encoded (upper bound of the file's last entry at a cut). */
  chunkTs = 0n;

  // --- writing and rotation ---
  private readonly pump: WritePump;
  private readonly rotation: FileRotation;
  private trimTimer: NodeJS.Timeout | null = null;

  // --- file and readers ---
  private state: 'idle' | 'opening' | 'open' | 'closed' = 'idle';
  private openPromise: Promise<void> | null = null;
  /** The generation being written (null before the file is open). */
  private current: Segment | null = null;
  /** Followers and snapshots (reader.ts moves and ends its followers there). */
  readonly readers: SegmentReaders;

  constructor(opts: LogFileOptions) {
    this.path = opts.path;
    this.maxSize = opts.maxSize;
    this.maxFiles = Math.max(1, opts.maxFiles);
    this.compress = opts.compress && this.maxFiles >= 2 && opts.maxSize !== Infinity;
    this.onError = opts.onError ?? (() => {});
    this.rotation = new FileRotation(this.path, this.maxFiles, this.compress, this.onError);
    this.readers = new SegmentReaders(this.path, this.maxFiles, maxLagFor(opts.maxSize));
    this.pump = new WritePump({
      ready: () => this.state !== 'opening',
      segment: () => (this.state !== 'idle' ? this.current : null),
      rotate: (lastTs) => this.rotate(lastTs),
      wrote: () => this.readers.notify(),
      idle: () => this.scheduleTrim(),
      filling: () => this.out,
      onError: this.onError,
    });
  }

  /** A write is queued or in progress. */
  get writing(): boolean {
    return this.pump.writing;
  }

  /** Bytes queued and not written yet. */
  get queuedBytes(): number {
    return this.pump.queuedBytes;
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

  /** Makes room for n more bytes at `pos` and returns the buffer to write into (per record: hot…, codec.ts). */
  hotReserve(n: number): Buffer {
    if (this.pos + n <= this.buf.length) return this.buf;
    this.flushPiece();
    const grew = this.buf.length > 0;
    const size = Math.max(n, grew ? Math.min(this.buf.length * 2, MAX_BUF) : MIN_BUF);
    this.buf = (size === MAX_BUF ? this.pump.takeSpare() : undefined) ?? Buffer.allocUnsafeSlow(size);
    this.out = { buf: this.buf, pending: 0 };
    this.pos = 0;
    this.pieceStart = 0;
    return this.buf;
  }

  /** Ends the current file after the records written so far; the next record starts a new file. */
  cut(): void {
    this.flushPiece();
    this.pump.pushCut(this.chunkTs);
    this.fileBytes = 0;
  }

  /** Hands everything encoded so far to the writer (within COALESCE_MS when little is queued). */
  commit(): void {
    this.flushPiece();
    this.pump.commit();
  }

  private flushPiece(): void {
    if (this.pos > this.pieceStart) {
      this.pump.push(this.buf.subarray(this.pieceStart, this.pos), this.out);
      this.pieceStart = this.pos;
    }
  }

  /** Resolves once less than `below` bytes wait to be written. */
  waitForRoom(below: number): Promise<void> {
    return this.pump.waitForRoom(below);
  }

  /** Resolves when everything committed has been written. */
  async flush(): Promise<void> {
    this.flushPiece();
    await this.pump.flush();
  }

  /** A quiet container should not keep megabytes of output buffers: drop them after a second idle. */
  private scheduleTrim(): void {
    if (this.trimTimer) return;
    this.trimTimer = setTimeout(() => {
      this.trimTimer = null;
      if (this.pump.writing) return;
      this.pump.dropSpares();
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
    await this.readers.rotating(async () => {
      try {
        const seg = new Segment(old.gen + 1, await this.rotation.shift(), 0);
        seg.refs = 1;
        this.readers.pin(seg);
        old.next = seg;
        old.complete = true;
        this.current = seg;
        old.release();
        this.rotation.compressNewest(lastTs);
      } catch (err) {
        // Keep appending to the old file rather than lose lines.
        this.onError(err);
      }
    });
  }

  /** Writes what is queued, then closes the file; followers drain and end. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'opening') await this.openPromise?.catch(() => {}); // A failed open was already reported to the writer that triggered it; close only waits for it.
    await this.flush();
    await this.rotation.settled();
    this.state = 'closed';
    const seg = this.current;
    if (seg && !seg.complete) {
      seg.complete = true;
      seg.release();
    }
    this.buf = Buffer.alloc(0);
    this.out = { buf: this.buf, pending: 0 };
    this.pump.dropSpares();
    this.pos = this.pieceStart = 0;
    if (this.trimTimer) clearTimeout(this.trimTimer);
    this.trimTimer = null;
    this.readers.notify();
  }

  // ---------------------------------------------------------------- reader API

  /**
   * Opens the rotated files (unless `history` is false) and pins the current generation,
   * consistently: rotations wait while a snapshot is being taken. With follow on a live file, also
   * registers a follower. On an idle or closed file, reads what is on disk.
   */
  async snapshot(follow: boolean, history = true): Promise<Snapshot> {
    if (follow && this.state === 'idle') await this.open().catch(() => {}); // A file that cannot be opened yet is read from disk as it is; the writer reports the open failure.
    if (this.state === 'opening') await this.openPromise?.catch(() => {}); // See above: only waiting for an open in progress, whose failure the writer reports.
    return this.readers.snapshot(() => (this.state === 'open' ? this.current : null), follow, history);
  }
}
