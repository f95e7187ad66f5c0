// What a file format supplies to the shared writer and reader: an encoder that appends records to
// a LogFile, and parsing/counting/tail-finding over the bytes of its files.
//
// Functions run per line or per byte are named hot…: bin/engined lets TurboFan compile only those
// (everything else stops at Maglev, which keeps TurboFan's ~5 MiB of code out of the daemon until
// logs need it). hot-tiers.test.ts checks what V8 compiles.

import type { FileHandle } from 'node:fs/promises';
import type { RecordEncoder } from './framer.ts';
import type { LogFile } from './logfile.ts';
import { TimestampPrefixes } from '../util/stdcopy.ts';
import { writeFrameHeader } from '../wire/stream-frame.ts';
import type { LogMessage } from './types.ts';

export interface LogCodec {
  createEncoder(file: LogFile): RecordEncoder;
  /**
   * Parses the whole records in buf[start, end) into sink (which filters); returns the offset after
   * the last record consumed. Throws CorruptLogError when the bytes cannot be records. Entries may
   * be views into buf, which may be modified: the caller hands over a buffer it never reuses.
   */
  hotParse(buf: Buffer, start: number, end: number, sink: EntrySink<unknown>): number;
  /** Counts the whole records in buf[start, end). */
  count(buf: Buffer, start: number, end: number): { next: number; count: number };
  /** Where the last n records of a plain file's first `size` bytes start, and how many there are (≤ n). */
  findTail(handle: FileHandle, size: number, n: number): Promise<{ offset: number; found: number }>;
  /** Largest record the format can hold (a sanity bound for readers). */
  readonly maxRecordBytes: number;
}

export class CorruptLogError extends Error {}

/**
 * Where a codec's parse puts the records it finds: applies skip (for tails in compressed files) and
 * the read filters (accept), then takes each wanted entry, as a line (entry) or, on the json-file
 * fast path, as a span of the block being parsed (text). A reader brackets each parse with begin
 * and finish and takes what was collected (take) as one batch.
 */
export abstract class EntrySink<B> {
  skip = 0;
  stopped = false;

  constructor(
    private readonly stdout: boolean,
    private readonly stderr: boolean,
    private readonly since: bigint | undefined,
    private readonly until: bigint | undefined,
  ) {}

  /** Whether the record (stream 0 = stdout) is wanted; a record after `until` stops the read. */
  hotAccept(stream: number, ts: bigint): boolean {
    if (this.skip > 0) {
      this.skip--;
      return false;
    }
    if (this.until !== undefined && ts > this.until) {
      this.stopped = true;
      return false;
    }
    if (stream === 0 ? !this.stdout : !this.stderr) return false;
    return this.since === undefined || ts >= this.since;
  }

  /** An accepted entry; `line` may be a view into the block, which `recEnd` (the index after the record) ends. */
  abstract hotEntry(stream: number, ts: bigint, line: Buffer, partial: boolean, recEnd: number): void;

  /**
   * An accepted entry whose bytes are buf[cs, ce), followed (whole lines) by a newline the sink adds:
   * buf[ce] and the rest of the record up to recEnd are the sink's to overwrite.
   */
  abstract hotText(stream: number, ts: bigint, buf: Buffer, cs: number, ce: number, partial: boolean, recEnd: number): void;

  /** Before parsing buf from start on. */
  begin(_buf: Buffer, _start: number): void {}

  /** After the parse of the block begun. */
  finish(): void {}

  /** Something was collected since the last take. */
  abstract get pending(): boolean;

  abstract take(): B;
}

const STREAM_NAMES = ['stdout', 'stderr'] as const;

/** Entries as LogMessage objects (lines are views into the blocks read, which are never reused). */
export class ReadSink extends EntrySink<LogMessage[]> {
  out: LogMessage[] = [];

  hotEntry(stream: number, ts: bigint, line: Buffer, partial: boolean): void {
    const name = STREAM_NAMES[stream]!;
    this.out.push(partial ? { stream: name, line, timeNano: ts, partial: true } : { stream: name, line, timeNano: ts });
  }

  hotText(stream: number, ts: bigint, buf: Buffer, cs: number, ce: number, partial: boolean): void {
    if (partial) return this.hotEntry(stream, ts, buf.subarray(cs, ce), true);
    buf[ce] = 10;
    this.hotEntry(stream, ts, buf.subarray(cs, ce + 1), false);
  }

  get pending(): boolean {
    return this.out.length > 0;
  }

  take(): LogMessage[] {
    const out = this.out;
    this.out = [];
    return out;
  }
}

/**
 * Entries straight in the wire format of GET /containers/{id}/logs: each framed (8-byte header)
 * unless the container has a TTY, after its time with `timestamps`. Fast-path entries (text) are
 * moved down in place inside the block being parsed (a record is always longer than its frame:
 * the JSON around the text outweighs header and time), so a block of records becomes one chunk of
 * output without an object or a buffer per entry; an entry that does not fit is framed on its own.
 */
export class FrameSink extends EntrySink<Buffer[]> {
  private frames: Buffer[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private w = 0;
  private chunkStart = 0;
  private readonly stamps: TimestampPrefixes | undefined;
  private readonly headLen: number;

  constructor(filters: { stdout: boolean; stderr: boolean; since?: bigint; until?: bigint }, tty: boolean, timestamps: boolean) {
    super(filters.stdout, filters.stderr, filters.since, filters.until);
    this.stamps = timestamps ? new TimestampPrefixes() : undefined;
    this.headLen = tty ? 0 : 8;
  }

  override begin(buf: Buffer, start: number): void {
    this.buf = buf;
    this.w = this.chunkStart = start;
  }

  override finish(): void {
    if (this.w > this.chunkStart) this.frames.push(this.buf.subarray(this.chunkStart, this.w));
    this.chunkStart = this.w;
  }

  hotText(stream: number, ts: bigint, buf: Buffer, cs: number, ce: number, partial: boolean, recEnd: number): void {
    const stamp = this.stamps?.of(ts);
    const lineLen = ce - cs + (partial ? 0 : 1);
    const at = this.w + this.headLen + (stamp ? stamp.length : 0);
    if (buf !== this.buf || at + lineLen > recEnd) {
      if (!partial) buf[ce] = 10;
      return this.hotEntry(stream, ts, buf.subarray(cs, ce + (partial ? 0 : 1)), partial, recEnd);
    }
    // The text first (it may overlap where the header and time go), then what precedes it.
    buf.copyWithin(at, cs, ce);
    if (!partial) buf[at + lineLen - 1] = 10;
    if (this.headLen) writeFrameHeader(buf, this.w, stream + 1, lineLen + (stamp ? stamp.length : 0));
    if (stamp) buf.set(stamp, this.w + this.headLen);
    this.w = at + lineLen;
  }

  hotEntry(stream: number, ts: bigint, line: Buffer, _partial: boolean, recEnd: number): void {
    this.finish();
    const stamp = this.stamps?.of(ts);
    const size = line.length + (stamp ? stamp.length : 0);
    const out = Buffer.allocUnsafe(this.headLen + size);
    if (this.headLen) writeFrameHeader(out, 0, stream + 1, size);
    if (stamp) stamp.copy(out, this.headLen);
    line.copy(out, out.length - line.length);
    this.frames.push(out);
    // What follows is written after this record, never over the bytes just handed out.
    this.w = this.chunkStart = Math.max(this.w, recEnd);
  }

  get pending(): boolean {
    return this.frames.length > 0;
  }

  take(): Buffer[] {
    const out = this.frames;
    this.frames = [];
    return out;
  }
}

/** Reads 4-byte big-endian values of a file backwards-friendly, through a 64 KiB block cache. */
export class BlockReader {
  private block = Buffer.alloc(64 * 1024);
  private from = 0;
  private to = 0;
  constructor(private readonly handle: FileHandle) {}

  async u32(at: number): Promise<number> {
    if (at < this.from || at + 4 > this.to) {
      const from = Math.max(0, at + 4 - this.block.length);
      const { bytesRead } = await this.handle.read(this.block, 0, at + 4 - from, from);
      this.from = from;
      this.to = from + bytesRead;
      if (at + 4 > this.to) throw new CorruptLogError('short read');
    }
    return this.block.readUInt32BE(at - this.from);
  }
}
