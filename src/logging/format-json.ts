// json-file: one JSON object per line, byte-for-byte what dockerd writes:
//   {"log":"hi\n","stream":"stdout","time":"2026-11-22T03:20:11.123456789Z"}
//   {"log":"…","stream":"stderr","attrs":{"k":"v"},"time":"…"}          (with labels/env/tag)
// Encoding copies runs that need no escaping straight into the output buffer; parsing recognises
// that exact layout without JSON.parse and falls back to it for anything else.

import type { FileHandle } from 'node:fs/promises';
import { formatTimeNano, parseTimeNano } from '../util/time.ts';
import { CorruptLogError, type EntrySink, type LogCodec } from './codec.ts';
import { MAX_ENTRY, type RecordEncoder, type StreamId } from './framer.ts';
import { hotIndexOfByte, wordsFor } from './byte-scan.ts';
import { goJsonObject, hotEscapeLogBytes, MAX_ESCAPE_GROWTH, SpecialScanner } from './json-escape.ts';
import type { LogFile } from './logfile.ts';

const PREFIX = Buffer.from('{"log":"');
const STREAM_KEY = Buffer.from('","stream":"');
const TIME_KEY = Buffer.from('"time":"');
const STREAM_NAMES = ['stdout', 'stderr'] as const;

class JsonEncoder implements RecordEncoder {
  private readonly sfxTs: [bigint, bigint] = [-1n, -1n];
  private readonly sfxFinal: [Buffer, Buffer] = [Buffer.alloc(0), Buffer.alloc(0)];
  private readonly sfxPartial: [Buffer, Buffer] = [Buffer.alloc(0), Buffer.alloc(0)];
  private readonly scanner = new SpecialScanner();

  constructor(
    private readonly file: LogFile,
    /** '' or '"attrs":{…},' */
    private readonly attrsField: string,
  ) {}

  /** Everything after the log text: `","stream":"stdout",…"time":"…"}\n`, with `\n` escaped first for whole lines. */
  private suffixes(stream: StreamId, ts: bigint): void {
    if (this.sfxTs[stream] === ts) return;
    const rest = `","stream":"${STREAM_NAMES[stream]}",${this.attrsField}"time":"${formatTimeNano(ts)}"}\n`;
    this.sfxFinal[stream] = Buffer.from(`\\n${rest}`);
    this.sfxPartial[stream] = Buffer.from(rest);
    this.sfxTs[stream] = ts;
  }

  hotLines(stream: StreamId, buf: Buffer, start: number, end: number, ts: bigint): void {
    this.suffixes(stream, ts);
    const sfx = this.sfxFinal[stream];
    const sfxLen = sfx.length;
    const f = this.file;
    const maxSize = f.maxSize;
    const scanner = this.scanner;
    scanner.reset(buf, start, end);
    let special = scanner.hotFirst(start);
    const words = scanner.words;
    // The hot loop keeps the write position and file size in locals and syncs them with the
    // LogFile only around the (rare) calls that need it.
    let out = f.buf;
    let o = f.pos;
    let size = f.fileBytes;
    let i = start;
    while (i < end) {
      const nl = hotIndexOfByte(buf, words, 10, i, end);
      if (nl < special && nl - i < MAX_ENTRY) {
        // Fast path: a line that needs no escaping.
        const need = 8 + (nl - i) + sfxLen;
        if (size >= maxSize || o + need > out.length) {
          f.pos = o;
          f.fileBytes = size;
          if (size >= maxSize) f.cut();
          out = f.hotReserve(need);
          o = f.pos;
          size = f.fileBytes;
        }
        out[o] = 0x7b; // {"log":"
        out[o + 1] = 0x22;
        out[o + 2] = 0x6c;
        out[o + 3] = 0x6f;
        out[o + 4] = 0x67;
        out[o + 5] = 0x22;
        out[o + 6] = 0x3a;
        out[o + 7] = 0x22;
        const n = buf.copy(out, o + 8, i, nl);
        out.set(sfx, o + 8 + n);
        o += need;
        size += need;
      } else {
        f.pos = o;
        f.fileBytes = size;
        let ls = i;
        while (nl - ls >= MAX_ENTRY) {
          this.hotEscaped(buf, ls, ls + MAX_ENTRY, this.sfxPartial[stream]);
          ls += MAX_ENTRY;
        }
        this.hotEscaped(buf, ls, nl, sfx);
        if (special < nl) special = scanner.hotFirst(nl + 1);
        out = f.buf;
        o = f.pos;
        size = f.fileBytes;
      }
      i = nl + 1;
    }
    f.pos = o;
    f.fileBytes = size;
  }

  partial(stream: StreamId, buf: Buffer, start: number, end: number, ts: bigint): void {
    this.suffixes(stream, ts);
    this.hotEscaped(buf, start, end, this.sfxPartial[stream]);
  }

  private hotEscaped(buf: Buffer, start: number, end: number, sfx: Buffer): void {
    const f = this.file;
    if (f.fileBytes >= f.maxSize) f.cut();
    const out = f.hotReserve(8 + (end - start) * MAX_ESCAPE_GROWTH + sfx.length);
    let o = f.pos;
    o += PREFIX.copy(out, o);
    o = hotEscapeLogBytes(buf, start, end, out, o);
    o += sfx.copy(out, o);
    f.fileBytes += o - f.pos;
    f.pos = o;
  }
}

function matchesAt(buf: Buffer, at: number, pattern: Buffer): boolean {
  if (at < 0 || at + pattern.length > buf.length) return false;
  for (let q = 0; q < pattern.length; q++) if (buf[at + q] !== pattern[q]) return false;
  return true;
}

/** Whether the quote at q is escaped (preceded by an odd number of backslashes after `from`). */
function escapedAt(buf: Buffer, q: number, from: number): boolean {
  let slashes = 0;
  for (let k = q - 1; k >= from && buf[k] === 0x5c; k--) slashes++;
  return (slashes & 1) === 1;
}

/** Index of the quote closing a JSON string whose body starts at `from`, or -1 before `limit`. */
function stringEnd(buf: Buffer, from: number, limit: number): number {
  let q = buf.indexOf(0x22, from);
  while (q !== -1 && q < limit) {
    if (!escapedAt(buf, q, from)) return q;
    q = buf.indexOf(0x22, q + 1);
  }
  return -1;
}

// Consecutive entries mostly share a timestamp (one per read chunk): remember the last one parsed.
const lastTime = Buffer.alloc(64);
let lastTimeLen = -1;
let lastTimeNs = 0n;

function timeAt(buf: Buffer, from: number, to: number): bigint {
  const len = to - from;
  if (len === lastTimeLen) {
    let k = len - 1;
    while (k >= 0 && buf[from + k] === lastTime[k]) k--;
    if (k < 0) return lastTimeNs;
  }
  const ns = parseTimeNano(buf.toString('latin1', from, to));
  if (len <= lastTime.length) {
    buf.copy(lastTime, 0, from, to);
    lastTimeLen = len;
    lastTimeNs = ns;
  }
  return ns;
}

// The bytes after the log text of the last record parsed in full (`","stream":"…",…"time":"…"}`)
// and what they say: consecutive records mostly share them (one time per read chunk), so a record
// that ends with the same bytes is ours with the same stream and time, checked by one comparison:
// 32-bit words through a DataView (a third of the cost of comparing bytes), the first len % 4
// bytes alone. A pure function of the bytes: safe to share between concurrent reads.
const lastSfx = Buffer.alloc(1024);
const lastSfxWords = new Int32Array(256);
let lastSfxLen = 0;
let lastSfxStream = 0;
let lastSfxTs = 0n;

function rememberSuffix(buf: Buffer, from: number, to: number, stream: number, ts: bigint): void {
  const len = to - from;
  buf.copy(lastSfx, 0, from, to);
  for (let k = 0, at = len & 3; at < len; k++, at += 4) lastSfxWords[k] = lastSfx.readInt32LE(at);
  lastSfxLen = len;
  lastSfxStream = stream;
  lastSfxTs = ts;
}

// A DataView over the buffer being parsed (one per block: blocks are reused or large). Let go after
// each parse: it would keep the last block read (a 1 MiB pooled block) for the daemon's life.
const NO_VIEW: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
const NO_WORDS: Int32Array<ArrayBufferLike> = new Int32Array(0);
let view = NO_VIEW;
/** wordsFor the same buffer, for hotIndexOfByte; let go with the view. */
let words = NO_WORDS;

function viewOf(buf: Buffer): void {
  if (view.buffer !== buf.buffer) {
    view = new DataView(buf.buffer);
    words = wordsFor(buf);
  }
}

// `{"log":"` as two little-endian words.
const PREFIX_W0 = PREFIX.readInt32LE(0);
const PREFIX_W1 = PREFIX.readInt32LE(4);

/** The record at buf[s] starts with `{"log":"` (needs 8 bytes). */
function hasPrefix(buf: Buffer, s: number): boolean {
  const a = buf.byteOffset + s;
  return view.getInt32(a, true) === PREFIX_W0 && view.getInt32(a + 4, true) === PREFIX_W1;
}

/** buf[at, at + lastSfxLen) equals the remembered suffix (compared from the end: the time's last digits differ first). */
function hotSameSuffix(buf: Buffer, at: number): boolean {
  const r = lastSfxLen & 3;
  const base = buf.byteOffset + at + r;
  for (let k = (lastSfxLen >>> 2) - 1; k >= 0; k--) if (view.getInt32(base + 4 * k, true) !== lastSfxWords[k]) return false;
  for (let k = 0; k < r; k++) if (buf[at + k] !== lastSfx[k]) return false;
  return true;
}

/** An accepted record's text buf[cs, ce) (the JSON string body) to the sink; e = index of the record's newline. */
function hotEmit(buf: Buffer, cs: number, ce: number, stream: number, ts: bigint, e: number, sink: EntrySink<unknown>): void {
  if (!sink.hotAccept(stream, ts)) return;
  const bs = hotIndexOfByte(buf, words, 0x5c, cs, ce);
  if (bs === -1) sink.hotText(stream, ts, buf, cs, ce, true, e + 1);
  else if (bs === ce - 2 && buf[ce - 1] === 0x6e) sink.hotText(stream, ts, buf, cs, ce - 2, false, e + 1);
  else {
    const line = Buffer.from(JSON.parse(buf.toString('utf8', cs - 1, ce + 1)) as string, 'utf8');
    sink.hotEntry(stream, ts, line, line[line.length - 1] !== 10, e + 1);
  }
}

/**
 * The record in buf[s, e) (e = index of its newline). The usual text (no escapes but the trailing
 * \n) goes to the sink as a span of buf (which the reader owns and never reuses: the sink may
 * overwrite the record); anything else is decoded.
 */
function hotParseRecord(buf: Buffer, s: number, e: number, sink: EntrySink<unknown>): void {
  if (sink.skip > 0) {
    sink.skip--;
    return;
  }
  const sfxAt = e - lastSfxLen;
  if (
    lastSfxLen > 0 &&
    sfxAt >= s + PREFIX.length &&
    hotSameSuffix(buf, sfxAt) &&
    hasPrefix(buf, s) &&
    (buf[sfxAt - 1] !== 0x5c || !escapedAt(buf, sfxAt, s + PREFIX.length))
  ) {
    hotEmit(buf, s + PREFIX.length, sfxAt, lastSfxStream, lastSfxTs, e, sink);
    return;
  }
  if (e - s > 40 && buf[e - 1] === 0x7d && buf[e - 2] === 0x22 && matchesAt(buf, s, PREFIX)) {
    const cs = s + PREFIX.length;
    // "time" is the last field and its value has no quotes: find its opening quote from the end.
    let tq = e - 3;
    while (tq > cs && buf[tq] !== 0x22) tq--;
    // Without attrs, `","stream":"stdout","time":"` sits right before the value; with them, find
    // the end of the log string by scanning.
    let ce = tq - 27;
    if (!(ce >= cs && buf[tq - 8] === 0x2c && matchesAt(buf, ce, STREAM_KEY) && !escapedAt(buf, ce, cs))) ce = stringEnd(buf, cs, e);
    const so = ce + STREAM_KEY.length;
    const stream = ce !== -1 && matchesAt(buf, ce, STREAM_KEY) && buf[so + 6] === 0x22 ? matchesStream(buf, so) : -1;
    if (stream >= 0 && tq > so) {
      if (matchesAt(buf, tq - 7, TIME_KEY)) {
        let ts = -1n;
        try {
          ts = timeAt(buf, tq + 1, e - 2);
        } catch {
          // parseTimeNano refuses the text (not an RFC 3339 time): not our layout after all
        }
        if (ts >= 0n) {
          // Remembered before the sink may overwrite the record.
          if (e - ce <= lastSfx.length) rememberSuffix(buf, ce, e, stream, ts);
          hotEmit(buf, cs, ce, stream, ts, e, sink);
          return;
        }
      }
    }
  }
  parseGeneric(buf, s, e, sink);
}

function matchesStream(buf: Buffer, at: number): number {
  // "stdout" / "stderr"
  if (buf[at] !== 0x73 || buf[at + 1] !== 0x74 || buf[at + 2] !== 0x64) return -1;
  if (buf[at + 3] === 0x6f && buf[at + 4] === 0x75 && buf[at + 5] === 0x74) return 0;
  if (buf[at + 3] === 0x65 && buf[at + 4] === 0x72 && buf[at + 5] === 0x72) return 1;
  return -1;
}

function parseGeneric(buf: Buffer, s: number, e: number, sink: EntrySink<unknown>): void {
  let obj: { log?: unknown; stream?: unknown; time?: unknown };
  let ts: bigint;
  try {
    obj = JSON.parse(buf.toString('utf8', s, e)) as typeof obj;
    ts = parseTimeNano(String(obj.time));
  } catch {
    return; // a torn or foreign line: skip it, as dockerd's decoder resyncs on the next line
  }
  const stream = obj.stream === 'stderr' ? 1 : 0;
  if (!sink.hotAccept(stream, ts)) return;
  const line = Buffer.from(typeof obj.log === 'string' ? obj.log : '', 'utf8');
  sink.hotEntry(stream, ts, line, line[line.length - 1] !== 10, e + 1);
}

export function jsonCodec(attrs: Record<string, string>): LogCodec {
  const attrsField = Object.keys(attrs).length > 0 ? `"attrs":${goJsonObject(attrs)},` : '';
  return {
    maxRecordBytes: 8 + MAX_ENTRY * MAX_ESCAPE_GROWTH + 1024 + attrsField.length * MAX_ESCAPE_GROWTH,
    createEncoder: (file) => new JsonEncoder(file, attrsField),
    hotParse(buf, start, end, sink) {
      viewOf(buf);
      let i = start;
      try {
        while (i < end && !sink.stopped) {
          const nl = hotIndexOfByte(buf, words, 10, i, end);
          if (nl === -1) break;
          hotParseRecord(buf, i, nl, sink);
          i = nl + 1;
        }
      } finally {
        view = NO_VIEW;
        words = NO_WORDS;
      }
      return i;
    },
    count(buf, start, end) {
      let count = 0;
      let next = start;
      for (let nl = buf.indexOf(10, start); nl !== -1 && nl < end; nl = buf.indexOf(10, nl + 1)) {
        count++;
        next = nl + 1;
      }
      return { next, count };
    },
    async findTail(handle: FileHandle, size: number, n: number) {
      if (n <= 0 || size <= 0) return { offset: size, found: 0 };
      const block = Buffer.allocUnsafe(64 * 1024);
      let count = 0;
      // The byte at size-1 ends the last record; every earlier '\n' starts one more record.
      let pos = size - 1;
      while (pos > 0) {
        const from = Math.max(0, pos - block.length);
        const { bytesRead } = await handle.read(block, 0, pos - from, from);
        if (bytesRead !== pos - from) throw new CorruptLogError('short read');
        for (let j = block.lastIndexOf(10, bytesRead - 1); j !== -1; j = j > 0 ? block.lastIndexOf(10, j - 1) : -1) {
          if (++count === n) return { offset: from + j + 1, found: n };
        }
        pos = from;
      }
      return { offset: 0, found: count + 1 };
    },
  };
}
