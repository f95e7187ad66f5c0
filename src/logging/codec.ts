// What a file format supplies to the shared writer and reader: an encoder that appends records to
// a LogFile, and parsing/counting/tail-finding over the bytes of its files.

import type { FileHandle } from 'node:fs/promises';
import type { RecordEncoder } from './framer.ts';
import type { LogFile } from './logfile.ts';
import type { LogMessage } from './types.ts';

export interface LogCodec {
  createEncoder(file: LogFile): RecordEncoder;
  /**
   * Parses the whole records in buf[start, end) into sink (which filters); returns the offset after
   * the last record consumed. Throws CorruptLogError when the bytes cannot be records. Entries may
   * be views into buf, which may be modified: the caller hands over a buffer it never reuses.
   */
  parse(buf: Buffer, start: number, end: number, sink: ReadSink): number;
  /** Counts the whole records in buf[start, end). */
  count(buf: Buffer, start: number, end: number): { next: number; count: number };
  /** Where the last n records of a plain file's first `size` bytes start, and how many there are (≤ n). */
  findTail(handle: FileHandle, size: number, n: number): Promise<{ offset: number; found: number }>;
  /** Largest record the format can hold (a sanity bound for readers). */
  readonly maxRecordBytes: number;
}

export class CorruptLogError extends Error {}

/** Collects parsed entries, applying skip (for tails in compressed files) and the read filters. */
export class ReadSink {
  out: LogMessage[] = [];
  skip = 0;
  stopped = false;

  constructor(
    private readonly stdout: boolean,
    private readonly stderr: boolean,
    private readonly since: bigint | undefined,
    private readonly until: bigint | undefined,
  ) {}

  /** Whether the record (stream 0 = stdout) is wanted; a record after `until` stops the read. */
  accept(stream: number, ts: bigint): boolean {
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

  take(): LogMessage[] {
    const out = this.out;
    this.out = [];
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
