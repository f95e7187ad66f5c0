// Byte-exact copies of dockerd's JSON string encodings, working on Buffers without building JS strings:
//  - hotEscapeLogBytes: json-file's "log" value (jsonlog's hand-written encoder: only \" \\ \n \r get
//    short escapes, every other control byte and < > & become \u00XX, invalid UTF-8 bytes \ufffd,
//    U+2028/U+2029 escaped).
//  - goJsonString: encoding/json's string form, used for the attrs object.
// The hot… names are for V8's tiers (codec.ts).

import { isAscii } from 'node:buffer';
import { wordsFor } from './byte-scan.ts';

const HEX = Buffer.from('0123456789abcdef');
const U_FFFD = Buffer.from('\\ufffd');

/** Largest output hotEscapeLogBytes can produce per input byte (\u00XX or \ufffd). */
export const MAX_ESCAPE_GROWTH = 6;

// How hotEscapeLogBytes treats each byte value.
const VERBATIM = 0;
const SHORT = 1; //    \" \\ \n \r
const U00 = 2; //      \u00XX
const NON_ASCII = 3; // UTF-8 sequence, checked
const ASCII_KIND = new Uint8Array(256);
const SHORT_FORM = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  if (b >= 0x80) ASCII_KIND[b] = NON_ASCII;
  else if (b === 0x22 || b === 0x5c || b === 0x0a || b === 0x0d) ASCII_KIND[b] = SHORT;
  else if (b < 0x20 || b === 0x3c || b === 0x3e || b === 0x26) ASCII_KIND[b] = U00;
}
SHORT_FORM[0x22] = 0x22;
SHORT_FORM[0x5c] = 0x5c;
SHORT_FORM[0x0a] = 0x6e; // n
SHORT_FORM[0x0d] = 0x72; // r

/**
 * Index of the first control byte other than '\n' in buf[start, end), else end. `words` is
 * wordsFor(buf); aligned words are tested 16 at a time (SWAR).
 */
function hotFindControl(buf: Buffer, words: Int32Array<ArrayBufferLike>, start: number, end: number): number {
  let i = start;
  if (end - start >= 128) {
    const base = buf.byteOffset;
    for (; ((base + i) & 3) !== 0; i++) if (buf[i]! < 0x20 && buf[i] !== 0x0a) return i;
    const first = (base + i) >>> 2;
    const count = (end - i) >>> 2;
    for (let w = 0; w < count; w += 16) {
      const stop = Math.min(count, w + 16);
      let m = 0;
      for (let k = first + w; k < first + stop; k++) {
        // (a - 0x20…) & ~a has a high bit set iff some byte of a is below 0x20 (for bytes < 0x80);
        // '\n' bytes are first turned into '*'. `| 0` keeps the arithmetic in int32.
        const x = words[k]! & 0x7f7f7f7f;
        const nl = x ^ 0x0a0a0a0a;
        const nlMask = ~(((nl & 0x7f7f7f7f) + 0x7f7f7f7f) | 0 | nl | 0x7f7f7f7f);
        const xc = x | (nlMask >>> 2);
        m |= ((xc - 0x20202020) | 0) & ~xc;
      }
      if ((m & 0x80808080) !== 0) {
        for (let p = i + w * 4, e = i + stop * 4; p < e; p++) if (buf[p]! < 0x20 && buf[p] !== 0x0a) return p;
      }
    }
    i += count * 4;
  }
  for (; i < end; i++) if (buf[i]! < 0x20 && buf[i] !== 0x0a) return i;
  return end;
}

const QUOTED = [0x22, 0x5c, 0x3c, 0x3e, 0x26]; // " \ < > &

/**
 * Finds the bytes of a region that hotEscapeLogBytes would not copy verbatim ('\n' aside). Each kind
 * of byte is searched with the fastest tool for it (memchr via indexOf for the five quoted
 * characters, simdutf's isAscii for bytes ≥ 0x80, SWAR for control bytes), and every search
 * result is remembered until the caller moves past it, so a region costs one pass per kind.
 */
export class SpecialScanner {
  private buf: Buffer = Buffer.alloc(0);
  /** wordsFor the region's Buffer. */
  words: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private end = 0;
  /** Next known position per kind: the five quoted characters, control bytes, bytes ≥ 0x80. */
  private readonly next = new Float64Array(7);

  reset(buf: Buffer, start: number, end: number): void {
    this.words = wordsFor(buf, this.words);
    this.buf = buf;
    this.end = end;
    this.next.fill(start - 1);
  }

  /** First position ≥ from that needs escaping, or the region end. */
  hotFirst(from: number): number {
    const next = this.next;
    const buf = this.buf;
    const end = this.end;
    let min = end;
    for (let k = 0; k < 5; k++) {
      if (next[k]! < from) {
        // Searched to the region's end, often without a find: memchr's job.
        const at = buf.indexOf(QUOTED[k]!, from);
        next[k] = at === -1 || at > end ? end : at;
      }
      if (next[k]! < min) min = next[k]!;
    }
    if (next[5]! < from) next[5] = hotFindControl(buf, this.words, from, min);
    if (next[5]! < min) min = next[5]!;
    else if (next[5] === min && min < end) next[5] = from - 1; // searched only up to min: unknown beyond
    if (next[6]! < from) {
      let at = end;
      if (!isAscii(buf.subarray(from, end))) for (at = from; at < end && buf[at]! < 0x80; at++);
      next[6] = at;
    }
    if (next[6]! < min) min = next[6]!;
    return min;
  }
}

/** The first position in [start, end) that needs escaping ('\n' aside), else end. */
export function findSpecial(buf: Buffer, start: number, end: number): number {
  const scanner = new SpecialScanner();
  scanner.reset(buf, start, end);
  return scanner.hotFirst(start);
}

/** Length of the valid UTF-8 sequence at src[i] (Go's utf8.DecodeRune rules), or 0 when invalid. */
function utf8SeqLen(src: Buffer, i: number, end: number): number {
  const b0 = src[i]!;
  if (b0 < 0xc2) return 0; // continuation byte or overlong lead
  if (b0 < 0xe0) {
    if (i + 1 >= end) return 0;
    const b1 = src[i + 1]!;
    return b1 >= 0x80 && b1 <= 0xbf ? 2 : 0;
  }
  if (b0 < 0xf0) {
    if (i + 2 >= end) return 0;
    const b1 = src[i + 1]!;
    const b2 = src[i + 2]!;
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf;
    return b1 >= lo && b1 <= hi && b2 >= 0x80 && b2 <= 0xbf ? 3 : 0;
  }
  if (b0 < 0xf5) {
    if (i + 3 >= end) return 0;
    const b1 = src[i + 1]!;
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf;
    return b1 >= lo && b1 <= hi && src[i + 2]! >= 0x80 && src[i + 2]! <= 0xbf && src[i + 3]! >= 0x80 && src[i + 3]! <= 0xbf ? 4 : 0;
  }
  return 0;
}

/**
 * Writes src[start, end) escaped as json-file's "log" value (without quotes) into out at o and
 * returns the new offset. out needs (end - start) * MAX_ESCAPE_GROWTH bytes of room.
 */
export function hotEscapeLogBytes(src: Buffer, start: number, end: number, out: Buffer, o: number): number {
  let i = start;
  while (i < end) {
    const b = src[i]!;
    const kind = ASCII_KIND[b]!;
    if (kind === VERBATIM) {
      out[o++] = b;
      i++;
    } else if (kind === SHORT) {
      out[o++] = 0x5c;
      out[o++] = SHORT_FORM[b]!;
      i++;
    } else if (kind === U00) {
      o = writeU00(out, o, b);
      i++;
    } else {
      const n = utf8SeqLen(src, i, end);
      if (n === 0) {
        o += U_FFFD.copy(out, o);
        i++;
      } else if (n === 3 && b === 0xe2 && src[i + 1] === 0x80 && (src[i + 2] === 0xa8 || src[i + 2] === 0xa9)) {
        // U+2028 / U+2029 → \u2028 / \u2029
        out[o++] = 0x5c;
        out[o++] = 0x75;
        out[o++] = 0x32;
        out[o++] = 0x30;
        out[o++] = 0x32;
        out[o++] = src[i + 2] === 0xa8 ? 0x38 : 0x39;
        i += 3;
      } else {
        for (let q = 0; q < n; q++) out[o++] = src[i + q]!;
        i += n;
      }
    }
  }
  return o;
}

function writeU00(out: Buffer, o: number, b: number): number {
  out[o++] = 0x5c;
  out[o++] = 0x75;
  out[o++] = 0x30;
  out[o++] = 0x30;
  out[o++] = HEX[b >> 4]!;
  out[o++] = HEX[b & 0xf]!;
  return o;
}

/**
 * A JS string as Go's encoding/json writes it (HTML-safe: < > & as \u003c…, U+2028/9 escaped,
 * \b \f \n \r \t short forms, other controls \u00XX, lone surrogates as \ufffd).
 */
/** The characters goJsonString must rewrite (a constant pattern: the common case is none). */
const GO_JSON_SPECIAL = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;

export function goJsonString(s: string): string {
  if (!GO_JSON_SPECIAL.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c < 0x20 || c === 0x3c || c === 0x3e || c === 0x26) out += `\\u00${c.toString(16).padStart(2, '0')}`;
    else if (c === 0x2028 || c === 0x2029) out += `\\u${c.toString(16)}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/** A string map as Go's json.Marshal writes map[string]string: keys sorted, no spaces. */
export function goJsonObject(map: Record<string, string>): string {
  const keys = Object.keys(map).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${goJsonString(k)}:${goJsonString(map[k]!)}`).join(',')}}`;
}
