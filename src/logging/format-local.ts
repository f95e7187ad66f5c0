// local: a compact binary format of our own. Each record is
//   u32 len | u8 flags | u64 timeNano | line bytes | u32 len        (big-endian, len = 9 + line)
// flags bit 0 = stderr, bit 1 = partial. The trailing length lets tail walk records backwards.

import type { FileHandle } from 'node:fs/promises';
import { BlockReader, CorruptLogError, type EntrySink, type LogCodec } from './codec.ts';
import { MAX_ENTRY, type RecordEncoder, type StreamId } from './framer.ts';
import { hotIndexOfByte, wordsFor } from './byte-scan.ts';
import type { LogFile } from './logfile.ts';

const HEAD = 13; // len + flags + time
const OVERHEAD = HEAD + 4;
const FLAG_STDERR = 1;
const FLAG_PARTIAL = 2;
const MAX_LEN = 9 + MAX_ENTRY + 1;

class LocalEncoder implements RecordEncoder {
  /** wordsFor the last chunk's Buffer. */
  private words: Int32Array<ArrayBufferLike> = new Int32Array(0);

  constructor(private readonly file: LogFile) {}

  hotLines(stream: StreamId, buf: Buffer, start: number, end: number, ts: bigint): void {
    const hi = Number(ts >> 32n) >>> 0;
    const lo = Number(ts & 0xffffffffn) >>> 0;
    const words = (this.words = wordsFor(buf, this.words));
    let i = start;
    while (i < end) {
      const nl = hotIndexOfByte(buf, words, 10, i, end);
      let ls = i;
      while (nl - ls >= MAX_ENTRY) {
        this.hotRecord(stream | FLAG_PARTIAL, buf, ls, ls + MAX_ENTRY, hi, lo);
        ls += MAX_ENTRY;
      }
      this.hotRecord(stream, buf, ls, nl + 1, hi, lo);
      i = nl + 1;
    }
  }

  partial(stream: StreamId, buf: Buffer, start: number, end: number, ts: bigint): void {
    this.hotRecord(stream | FLAG_PARTIAL, buf, start, end, Number(ts >> 32n) >>> 0, Number(ts & 0xffffffffn) >>> 0);
  }

  private hotRecord(flags: number, buf: Buffer, start: number, end: number, hi: number, lo: number): void {
    const f = this.file;
    if (f.fileBytes >= f.maxSize) f.cut();
    const len = 9 + (end - start);
    const out = f.hotReserve(len + 8);
    const o = f.pos;
    hotPutU32BE(out, o, len);
    out[o + 4] = flags;
    hotPutU32BE(out, o + 5, hi);
    hotPutU32BE(out, o + 9, lo);
    buf.copy(out, o + HEAD, start, end);
    hotPutU32BE(out, o + 4 + len, len);
    f.pos = o + len + 8;
    f.fileBytes += len + 8;
  }
}

/** out.writeUInt32BE without node's checks (their wrappers stay out of the hot functions' code). */
function hotPutU32BE(out: Buffer, o: number, v: number): void {
  out[o] = v >>> 24;
  out[o + 1] = v >>> 16;
  out[o + 2] = v >>> 8;
  out[o + 3] = v;
}

function hotRecordLen(buf: Buffer, i: number): number {
  const len = buf.readUInt32BE(i);
  if (len < 9 || len > MAX_LEN) throw new CorruptLogError(`bad record length ${len}`);
  return len;
}

export const localCodec: LogCodec = {
  maxRecordBytes: MAX_LEN + 8,
  createEncoder: (file) => new LocalEncoder(file),
  hotParse(buf: Buffer, start: number, end: number, sink: EntrySink<unknown>): number {
    let i = start;
    while (i + 4 <= end && !sink.stopped) {
      const len = hotRecordLen(buf, i);
      if (i + len + 8 > end) break;
      if (buf.readUInt32BE(i + 4 + len) !== len) throw new CorruptLogError('record trailer mismatch');
      if (sink.skip > 0) {
        sink.skip--;
      } else {
        const flags = buf[i + 4]!;
        const ts = (BigInt(buf.readUInt32BE(i + 5)) << 32n) | BigInt(buf.readUInt32BE(i + 9));
        const stream = flags & FLAG_STDERR;
        if (sink.hotAccept(stream, ts)) {
          // a view: the reader owns buf
          sink.hotEntry(stream, ts, buf.subarray(i + HEAD, i + 4 + len), (flags & FLAG_PARTIAL) !== 0, i + len + 8);
        }
      }
      i += len + 8;
    }
    return i;
  },
  count(buf, start, end) {
    let i = start;
    let count = 0;
    while (i + 4 <= end) {
      const len = hotRecordLen(buf, i);
      if (i + len + 8 > end) break;
      i += len + 8;
      count++;
    }
    return { next: i, count };
  },
  async findTail(handle: FileHandle, size: number, n: number) {
    const reader = new BlockReader(handle);
    let pos = size;
    let found = 0;
    while (pos > 0 && found < n) {
      if (pos < OVERHEAD) throw new CorruptLogError('truncated record');
      const len = await reader.u32(pos - 4);
      if (len < 9 || len > MAX_LEN || len + 8 > pos) throw new CorruptLogError(`bad record length ${len}`);
      pos -= len + 8;
      found++;
    }
    return { offset: pos, found };
  },
};
