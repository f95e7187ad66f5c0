// Reading a rotating log file back: tail (counted from the end across rotated files, reading plain
// files backwards in blocks), since/until, stream selection, then following the live file across
// rotations until the writer closes or the signal aborts.

import type { FileHandle } from 'node:fs/promises';
import { CorruptLogError, ReadSink, type EntrySink, type LogCodec } from './codec.ts';
import { gunzipChunks, gzipLastTime } from './gzip.ts';
import type { LogFile } from './logfile.ts';
import { closeAll, type Follower } from './log-segments.ts';
import type { LogMessage, LogReadOptions } from './types.ts';

const BLOCK = 256 * 1024;
/** Blocks of a read whose consumer hands them back (readFrames, files and the live one followed): larger, fewer writes. */
const POOLED_BLOCK = 1024 * 1024;

/**
 * The read blocks of one frames read, reused: the consumer is done with a batch's buffers once it
 * asks for the batch after the next (it keeps at most one batch in flight on the socket). Fresh
 * blocks cost more than parsing them: page faults on new memory, and the collector running for the
 * external memory (~40% of the read's CPU for 435 MiB of json-file).
 */
export class BlockPool {
  private free: ArrayBuffer[] = [];
  private readonly mine = new WeakSet<ArrayBufferLike>();
  /** Blocks in the batch before the last one handed out, and in the last one. */
  private older: ArrayBuffer[] = [];
  private newer: ArrayBuffer[] = [];
  private parsed: ArrayBuffer[] = [];

  get(): Buffer {
    let ab = this.free.pop();
    if (!ab) {
      ab = Buffer.allocUnsafeSlow(POOLED_BLOCK).buffer as ArrayBuffer;
      this.mine.add(ab);
    }
    return Buffer.from(ab, 0, POOLED_BLOCK);
  }

  /** The parse of chunk is over: its block goes with the next batch handed out. */
  parsedChunk(chunk: Buffer): void {
    if (this.mine.has(chunk.buffer)) this.parsed.push(chunk.buffer as ArrayBuffer);
  }

  /** A batch is handed out (with nothing: every parsed block is free at once). */
  handedOut(withBlocks: boolean): void {
    if (withBlocks) this.newer.push(...this.parsed);
    else this.free.push(...this.parsed);
    this.parsed = [];
  }

  /** The consumer asks for the next batch: the batch before the one it holds is flushed. */
  resumed(): void {
    this.free.push(...this.older);
    this.older = this.newer;
    this.newer = [];
  }

  /**
   * Lets every block go (a follow gone quiet): none is reused after this, so those still being
   * written by the consumer stay whole, and the collector takes them once written.
   */
  forget(): void {
    this.free = [];
    this.older = [];
    this.newer = [];
    this.parsed = [];
  }
}

/** A follow that has waited this long for the writer lets its pool's blocks go. */
const POOL_IDLE_MS = 1000;

interface Source {
  handle: FileHandle;
  gz: boolean;
  /** Bytes to read (plain files). */
  size: number;
}

/** Entries in batches (one per block read), in file order, as the sink collects them (it applies the filters). */
export async function* readBatches<B>(
  file: LogFile,
  codec: LogCodec,
  opts: LogReadOptions,
  sink: EntrySink<B>,
  signal?: AbortSignal,
  pool?: BlockPool,
): AsyncGenerator<B> {
  if ((!opts.stdout && !opts.stderr) || signal?.aborted) return;
  const snap = await file.snapshot(opts.follow, (opts.tail ?? -1) !== 0);
  try {
    const tail = opts.tail ?? -1;
    if (tail !== 0) {
      const sources: Source[] = snap.history.map((h) => ({ handle: h.handle, gz: h.gz, size: h.size }));
      if (snap.current.handle) sources.push({ handle: snap.current.handle, gz: false, size: snap.limit });
      let first = 0;
      let offset = 0;
      let skip = 0;
      if (tail > 0) {
        ({ first, offset, skip } = await findTailStart(sources, codec, tail));
      } else if (opts.since !== undefined) {
        // Rotated files that end before `since` hold nothing to send.
        while (first < sources.length - 1) {
          const last = await lastTime(sources[first]!, codec);
          if (last === undefined || last >= opts.since) break;
          first++;
        }
      }
      for (let k = first; k < sources.length && !sink.stopped; k++) {
        sink.skip = k === first ? skip : 0;
        const src = sources[k]!;
        const chunks = src.gz ? gunzipChunks(src.handle, src.size) : plainChunks(src.handle, k === first ? offset : 0, src.size, pool);
        yield* parseChunks(chunks, codec, sink, signal, pool);
        if (signal?.aborted) return;
      }
    }
    if (snap.follower && !sink.stopped) yield* follow(file, codec, snap.follower, snap.limit, sink, signal, pool);
  } finally {
    await closeAll(snap.history);
    if (snap.follower) file.readers.endFollow(snap.follower);
    else snap.current.release();
  }
}

/** The source index, byte offset (plain) or records to skip (gz) where the last `tail` records begin. */
async function findTailStart(sources: Source[], codec: LogCodec, tail: number): Promise<{ first: number; offset: number; skip: number }> {
  let remaining = tail;
  for (let k = sources.length - 1; k >= 0; k--) {
    const src = sources[k]!;
    if (src.gz) {
      const count = await countRecords(gunzipChunks(src.handle, src.size), codec);
      if (count >= remaining) return { first: k, offset: 0, skip: count - remaining };
      remaining -= count;
    } else {
      try {
        const { offset, found } = await codec.findTail(src.handle, src.size, remaining);
        if (found >= remaining) return { first: k, offset, skip: 0 };
        remaining -= found;
      } catch (err) {
        if (!(err instanceof CorruptLogError)) throw err;
        return { first: k + 1, offset: 0, skip: 0 }; // unreadable backwards: start after it
      }
    }
  }
  return { first: 0, offset: 0, skip: 0 };
}

async function countRecords(chunks: AsyncIterable<Buffer>, codec: LogCodec): Promise<number> {
  let count = 0;
  let rest: Buffer | null = null;
  try {
    for await (const chunk of chunks) {
      const buf: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
      const r = codec.count(buf, 0, buf.length);
      count += r.count;
      rest = r.next < buf.length ? buf.subarray(r.next) : null;
    }
  } catch (err) {
    if (!(err instanceof CorruptLogError)) throw err;
  }
  return count;
}

/** Time of a file's last record (from the gzip header for compressed files). */
async function lastTime(src: Source, codec: LogCodec): Promise<bigint | undefined> {
  if (src.gz) return gzipLastTime(src.handle);
  try {
    const { offset, found } = await codec.findTail(src.handle, src.size, 1);
    if (found === 0) return undefined;
    const buf = Buffer.alloc(src.size - offset);
    await src.handle.read(buf, 0, buf.length, offset);
    const sink = new ReadSink(true, true, undefined, undefined);
    codec.hotParse(buf, 0, buf.length, sink);
    sink.finish();
    return sink.out[0]?.timeNano;
  } catch (err) {
    if (err instanceof CorruptLogError) return undefined;
    throw err;
  }
}

/** A plain file's bytes [from, to) in fresh blocks (or the pool's), with the next read already under way. */
async function* plainChunks(handle: FileHandle, from: number, to: number, pool: BlockPool | undefined): AsyncGenerator<Buffer> {
  let pos = from;
  const readBlock = async (): Promise<Buffer | null> => {
    if (pos >= to) return null;
    const buf = pool ? pool.get().subarray(0, Math.min(POOLED_BLOCK, to - pos)) : Buffer.allocUnsafe(Math.min(BLOCK, to - pos));
    const at = pos;
    pos += buf.length;
    const { bytesRead } = await handle.read(buf, 0, buf.length, at);
    if (bytesRead === 0) return null; // the file shrank under us
    return bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
  };
  let pending = readBlock();
  for (;;) {
    const buf = await pending;
    if (!buf) return;
    pending = readBlock();
    pending.catch(() => {}); // surfaced by the next await
    yield buf;
  }
}

/** codec.parse of buf[start, end) into the sink, bracketed; -1 when the bytes are not records (CorruptLogError). */
function parseSpan<B>(codec: LogCodec, sink: EntrySink<B>, buf: Buffer, start: number, end: number): number {
  sink.begin(buf, start);
  try {
    return codec.hotParse(buf, start, end, sink);
  } catch (err) {
    if (!(err instanceof CorruptLogError)) throw err;
    return -1;
  } finally {
    sink.finish();
  }
}

/**
 * Parses records out of a chunk sequence and yields the wanted ones. A record straddling two chunks
 * is joined on its own with the head of the next chunk (a few KiB), never the whole chunk: copying
 * every block once more cost as much as parsing it.
 */
async function* parseChunks<B>(
  chunks: AsyncIterable<Buffer>,
  codec: LogCodec,
  sink: EntrySink<B>,
  signal: AbortSignal | undefined,
  pool: BlockPool | undefined,
): AsyncGenerator<B> {
  let rest: Buffer | null = null;
  const handOut = function* (): Generator<B> {
    const pending = sink.pending;
    pool?.handedOut(pending);
    if (!pending) return;
    yield sink.take();
    pool?.resumed();
  };
  for await (const chunk of chunks) {
    let buf = chunk;
    let from = 0;
    if (rest) {
      // rest starts with an incomplete record: parsing rest + a growing head of chunk consumes
      // nothing until that record is whole.
      for (let k = Math.min(chunk.length, Math.max(4096, rest.length * 2)); ; k = Math.min(chunk.length, k * 2)) {
        const joined = Buffer.concat([rest, chunk.subarray(0, k)]);
        const next = parseSpan(codec, sink, joined, 0, joined.length);
        if (next < 0) {
          yield* handOut();
          return; // the rest of this file is not records we can read
        }
        if (next > 0) {
          from = next - rest.length;
          break;
        }
        if (k === chunk.length) {
          buf = joined; // the record is longer than this chunk too: carry it all
          break;
        }
      }
    }
    const next = from > 0 || buf === chunk ? parseSpan(codec, sink, buf, from, buf.length) : 0;
    // Copy the unparsed tail: the entries about to be yielded may be views into buf.
    rest = next >= 0 && next < buf.length ? Buffer.from(buf.subarray(next)) : null;
    pool?.parsedChunk(chunk);
    yield* handOut();
    if (next < 0) return;
    if (sink.stopped || signal?.aborted) return;
    if (rest && rest.length > codec.maxRecordBytes) return;
  }
}

/** Reads the live file from `pos` on, following rotations, until it is closed or the read is aborted. */
async function* follow<B>(
  file: LogFile,
  codec: LogCodec,
  f: Follower,
  pos: number,
  sink: EntrySink<B>,
  signal: AbortSignal | undefined,
  pool: BlockPool | undefined,
): AsyncGenerator<B> {
  let rest: Buffer | null = null;
  for (;;) {
    if (signal?.aborted || sink.stopped) return;
    const seg = f.seg;
    if (pos < seg.size && seg.handle) {
      // A block per read (the entries handed out are views into it): the pool's when the consumer
      // hands blocks back, else a fresh one. Fresh blocks for a flood followed live piled up as
      // garbage until the collector ran for the external memory (tens of MiB at the peak).
      const have: number = rest ? rest.length : 0;
      // BLOCK at a time either way: the parse of a read holds the event loop, and the container's
      // FIFO waits behind it (with 1 MiB reads a followed flood's burst took 4–6 % longer than
      // with fresh 256 KiB blocks, in three paired rounds).
      const block =
        pool && have + BLOCK <= POOLED_BLOCK
          ? pool.get().subarray(0, have + Math.min(BLOCK, seg.size - pos))
          : Buffer.allocUnsafe(have + Math.min(BLOCK, seg.size - pos));
      if (rest) rest.copy(block, 0);
      const { bytesRead } = await seg.handle.read(block, have, block.length - have, pos);
      if (bytesRead === 0) return;
      pos += bytesRead;
      const end: number = have + bytesRead;
      let next: number;
      sink.begin(block, 0);
      try {
        next = codec.hotParse(block, 0, end, sink);
      } catch (err) {
        if (!(err instanceof CorruptLogError)) throw err;
        return;
      } finally {
        sink.finish();
      }
      // Copy the unparsed tail before the block can go back to the pool.
      rest = next < end ? Buffer.from(block.subarray(next, end)) : null;
      pool?.parsedChunk(block);
      const pending = sink.pending;
      pool?.handedOut(pending);
      if (pending) {
        yield sink.take();
        pool?.resumed();
      }
      if (rest && rest.length > codec.maxRecordBytes) return; // not records: give up on this read
      continue;
    }
    if (seg.complete) {
      // Everything this generation will ever hold has been read: move on to the next file.
      if (!file.readers.advance(f)) return;
      pos = 0;
      rest = null;
      continue;
    }
    // A quiet container's follower (there may be many) keeps no blocks for long: a flood's
    // follower, woken by every write, keeps reusing the same few.
    const forget = pool ? setTimeout(() => pool.forget(), POOL_IDLE_MS).unref() : undefined;
    try {
      await file.readers.changedOrAborted(signal);
    } finally {
      if (forget) clearTimeout(forget);
    }
  }
}

/**
 * Entries one at a time over a batch source, without an async generator per entry. batches() gives
 * the batches themselves (one per block read) for writers that want fewer, larger writes.
 */
export class LogMessages implements AsyncIterable<LogMessage> {
  constructor(private readonly source: AsyncGenerator<LogMessage[]>) {}

  batches(): AsyncGenerator<LogMessage[]> {
    return this.source;
  }

  [Symbol.asyncIterator](): AsyncIterator<LogMessage> {
    const source = this.source;
    let batch: LogMessage[] = [];
    let i = 0;
    return {
      async next(): Promise<IteratorResult<LogMessage>> {
        while (i >= batch.length) {
          const r = await source.next();
          if (r.done) return { done: true, value: undefined };
          batch = r.value;
          i = 0;
        }
        return { done: false, value: batch[i++]! };
      },
      async return(): Promise<IteratorResult<LogMessage>> {
        await source.return(undefined);
        return { done: true, value: undefined };
      },
    };
  }
}
