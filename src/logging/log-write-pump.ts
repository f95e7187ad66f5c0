// The writing half of a LogFile: pieces of the encoders' output buffers and rotation cuts queue
// here, and a pump writes the pieces to the current generation with one writev per batch and
// performs each cut between batches. Full-size output buffers come back as spares once written.

import type { FileHandle } from 'node:fs/promises';
import type { Segment } from './log-segments.ts';

/** An output buffer and how many of its queued pieces are not written yet. */
export interface OutBuf {
  buf: Buffer;
  pending: number;
}

/** The size of a full output buffer (the only size kept as a spare). */
export const MAX_BUF = 1024 * 1024;

/** What the pump writes into: the LogFile's current generation and its rotation. */
export interface PumpTarget {
  /** False while the file is being opened: what is queued waits for it. */
  ready(): boolean;
  /** The generation to append to, or null when the file is not open (the batch is dropped). */
  segment(): Segment | null;
  /** A cut reached the head of the queue. */
  rotate(lastTs: bigint): Promise<void>;
  /** After each batch written (readers wake). */
  wrote(): void;
  /** The pump stopped with nothing left to write. */
  idle(): void;
  /** The output buffer the encoders are filling (never taken as a spare). */
  filling(): OutBuf;
  onError(err: unknown): void;
}

type QueueItem = { data: Buffer; owner: OutBuf } | { rotate: true; lastTs: bigint };

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

export class WritePump {
  private queue: QueueItem[] = [];
  private qHead = 0;
  /** Bytes queued and not written yet. */
  queuedBytes = 0;
  private pumping: Promise<void> | null = null;
  /** flush() calls waiting: the pump writes everything queued without pausing to coalesce. */
  private flushing = 0;
  private coalescing: NodeJS.Timeout | null = null;
  /** When the last write ended (performance.now()); -Infinity before the first. */
  private lastWriteEnd = -Infinity;
  private drainWaiters: Array<() => void> = [];
  /** Written-out full-size buffers, reused so a flood does not churn through fresh memory. */
  private spare: Buffer[] = [];

  constructor(private readonly target: PumpTarget) {}

  /** A write is queued or in progress. */
  get writing(): boolean {
    return this.pumping !== null;
  }

  /** Queues a piece of an output buffer. */
  push(data: Buffer, owner: OutBuf): void {
    owner.pending++;
    this.queue.push({ data, owner });
    this.queuedBytes += data.length;
  }

  /** Queues a cut: the pieces queued so far end the current file. */
  pushCut(lastTs: bigint): void {
    this.queue.push({ rotate: true, lastTs });
  }

  /** Starts writing what is queued (within COALESCE_MS when little is queued). */
  commit(): void {
    if (this.pumping || this.qHead >= this.queue.length) return;
    if (this.queuedBytes >= COALESCE_BYTES || performance.now() - this.lastWriteEnd > QUIET_MS) this.start();
    else this.coalescing ??= setTimeout(() => this.start(), COALESCE_MS);
  }

  /** Starts the pump now, unless it runs or the file is still being opened. */
  start(): void {
    if (this.coalescing) clearTimeout(this.coalescing);
    this.coalescing = null;
    // Records may be encoded before the file is open (the FIFO readers start first): they wait.
    if (!this.target.ready()) return;
    if (this.qHead < this.queue.length && !this.pumping) this.pumping = this.pump();
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

  /** Resolves when everything queued has been written. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      this.start();
      while (this.pumping) await this.pumping;
    } finally {
      this.flushing--;
    }
  }

  /** A spare full-size buffer, if one was kept. */
  takeSpare(): Buffer | undefined {
    return this.spare.pop();
  }

  /** Lets the spares go (an idle stream, a closed file). */
  dropSpares(): void {
    this.spare = [];
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
          await this.target.rotate(head.lastTs);
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
        const seg = this.target.segment();
        if (seg?.handle) {
          try {
            await writeAll(seg.handle, bufs, bytes);
            seg.size += bytes;
          } catch (err) {
            this.target.onError(err); // dockerd drops what it cannot write, and so do we
          }
        }
        this.queuedBytes -= bytes;
        this.lastWriteEnd = performance.now();
        const filling = this.target.filling();
        for (const o of owners) {
          if (--o.pending === 0 && o !== filling && o.buf.length === MAX_BUF && this.spare.length < SPARE_BUFS) this.spare.push(o.buf);
        }
        if (this.qHead > 1024 && this.qHead * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.qHead);
          this.qHead = 0;
        }
        this.target.wrote();
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
      if (this.qHead < this.queue.length) this.coalescing ??= setTimeout(() => this.start(), COALESCE_MS);
      else this.target.idle();
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
