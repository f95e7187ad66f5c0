// Splits a stream's bytes into log entries the way dockerd's copier does: one entry per line
// (newline included); a line reaching 16 KiB without a newline is emitted in 16 KiB partial pieces
// that share the first piece's timestamp; an unterminated tail at end of stream is a partial entry.

import { randomBytes } from 'node:crypto';

/** dockerd's copier buffer size: the longest entry. */
export const MAX_ENTRY = 16 * 1024;

export type StreamId = 0 | 1; // stdout, stderr

/** An encoder's methods; hotLines is hot… for V8's tiers (codec.ts). */
export interface RecordEncoder {
  /**
   * Complete lines buf[start, end) — buf[end - 1] is '\n' — all stamped ts. Lines whose content
   * exceeds MAX_ENTRY are written as MAX_ENTRY partial pieces followed by the final piece.
   */
  hotLines(stream: StreamId, buf: Buffer, start: number, end: number, ts: bigint): void;
  /** One partial entry (no newline). */
  partial(stream: StreamId, buf: Buffer, start: number, end: number, ts: bigint): void;
}

export class LineFramer {
  private pending: Buffer | null = null;
  /** Timestamp of the first partial piece of the line in progress. */
  private partialTs: bigint | null = null;

  constructor(
    private readonly encoder: RecordEncoder,
    private readonly stream: StreamId,
  ) {}

  /** One read of the stream; `chunk` may be reused by the caller once this returns (it is copied or encoded). */
  push(chunk: Buffer, ts: bigint): void {
    let start = 0;
    // A line in progress: bytes pending, or none when its pieces so far were exactly whole 16 KiB pieces.
    if (this.pending || this.partialTs !== null) {
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk);
        this.emitFullPieces(ts);
        return;
      }
      const line = this.pending ? Buffer.concat([this.pending, chunk.subarray(0, nl + 1)]) : chunk.subarray(0, nl + 1);
      this.pending = null;
      this.encoder.hotLines(this.stream, line, 0, line.length, this.partialTs ?? ts);
      this.partialTs = null;
      start = nl + 1;
    }
    const last = chunk.lastIndexOf(10);
    if (last >= start) {
      this.encoder.hotLines(this.stream, chunk, start, last + 1, ts);
      start = last + 1;
    }
    if (start < chunk.length) {
      this.pending = Buffer.from(chunk.subarray(start));
      this.emitFullPieces(ts);
    }
  }

  /** End of stream: an unterminated last line becomes a partial entry. */
  end(ts: bigint): void {
    if (this.pending) this.encoder.partial(this.stream, this.pending, 0, this.pending.length, this.partialTs ?? ts);
    this.pending = null;
    this.partialTs = null;
  }

  private emitFullPieces(ts: bigint): void {
    let p = this.pending!;
    let off = 0;
    while (p.length - off >= MAX_ENTRY) {
      this.partialTs ??= ts;
      this.encoder.partial(this.stream, p, off, off + MAX_ENTRY, this.partialTs);
      off += MAX_ENTRY;
    }
    if (off > 0) p = Buffer.from(p.subarray(off));
    this.pending = p.length > 0 ? p : null;
  }
}

/** dockerd's partial-message metadata: the pieces of one long line share an ID and count up. */
export interface PartialMeta {
  id: string;
  ordinal: number;
  last: boolean;
}

/**
 * Entries as dockerd's copier hands them to a driver that sends them away (log plugins, remote
 * drivers): each line without its newline, a line longer than MAX_ENTRY in pieces carrying
 * PartialMeta. The pieces' state lasts across batches, so one instance serves a driver.
 */
export class EntrySplitter {
  private readonly partials: ({ id: string; ordinal: number } | undefined)[] = [undefined, undefined];

  encoder(emit: (sid: StreamId, line: Buffer, ts: bigint, partial: boolean, meta?: PartialMeta) => void): RecordEncoder {
    const entry = (sid: StreamId, line: Buffer, ts: bigint, partial: boolean, last: boolean): void => {
      let p = this.partials[sid];
      if (partial && !p) p = this.partials[sid] = { id: randomBytes(16).toString('hex'), ordinal: 1 };
      if (!p) return emit(sid, line, ts, partial);
      if (last) this.partials[sid] = undefined;
      emit(sid, line, ts, partial, { id: p.id, ordinal: p.ordinal++, last });
    };
    return {
      hotLines: (sid, buf, start, end, ts) => {
        while (start < end) {
          const nl = buf.indexOf(10, start);
          let from = start;
          while (nl - from >= MAX_ENTRY) {
            entry(sid, buf.subarray(from, from + MAX_ENTRY), ts, true, false);
            from += MAX_ENTRY;
          }
          entry(sid, buf.subarray(from, nl), ts, false, true);
          start = nl + 1;
        }
      },
      // A piece of a long line, or an unterminated last line at the end of the stream (the last
      // piece of its message, still partial: no newline follows it).
      partial: (sid, buf, start, end, ts) => entry(sid, buf.subarray(start, end), ts, true, end - start < MAX_ENTRY),
    };
  }
}
