// A small, fast DEFLATE for one short message (gelf's default compression, level 1 = BestSpeed):
// greedy LZ77 over a hash of 4-byte sequences and the fixed Huffman codes, in one final block.
// Node's zlib costs a new engine per call (tens of µs for a 300-byte GELF object, on the event
// loop); this is a few µs. Any inflater reads it; gzip and zlib framings are added around it.

import { crc32 } from 'node:zlib';

const MIN_MATCH = 4;
const MAX_MATCH = 258;
const WINDOW = 32768;
const HASH_BITS = 12;

// Fixed Huffman codes (RFC 1951 3.2.6), stored bit-reversed so they can be written LSB first.
const LIT_CODE = new Uint16Array(288);
const LIT_LEN = new Uint8Array(288);
const DIST_CODE = new Uint16Array(30);
function reverse(code: number, len: number): number {
  let r = 0;
  for (let i = 0; i < len; i++) r = (r << 1) | ((code >> i) & 1);
  return r;
}
for (let v = 0; v < 288; v++) {
  const [base, len, first] = v < 144 ? [0x30, 8, 0] : v < 256 ? [0x190, 9, 144] : v < 280 ? [0, 7, 256] : [0xc0, 8, 280];
  LIT_CODE[v] = reverse(base + v - first, len);
  LIT_LEN[v] = len;
}
for (let d = 0; d < 30; d++) DIST_CODE[d] = reverse(d, 5);

// Length 3..258 → symbol, extra bits, extra value; distance 1..32768 → code, extra bits, base.
const LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385,
  24577,
];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const LEN_SYM = new Uint8Array(259);
for (let i = 0; i < 29; i++) for (let l = LEN_BASE[i]!; l < (LEN_BASE[i + 1] ?? 259); l++) LEN_SYM[l] = i;
LEN_SYM[258] = 28;

function distSym(d: number): number {
  let lo = 0;
  let hi = 29;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (DIST_BASE[mid]! <= d) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Hash heads hold `base + position`; entries below the current base belong to earlier calls, so the
// table needs no clearing per message (a fill of 16 KiB cost more than a short message's search).
const head = new Int32Array(1 << HASH_BITS);
let base = 0;
const HASH_MASK = (1 << HASH_BITS) - 1;

/** The worst case of deflateRawInto for `n` bytes: 9 bits per literal, the block header and end code. */
export function deflateBound(n: number): number {
  return Math.ceil((n * 9) / 8) + 8;
}

/**
 * Raw DEFLATE (one final fixed-Huffman block) of `src[0, n)` into `out` from `at` (room for
 * deflateBound(n) bytes); returns where the output ends. Greedy matching, as deflateRawFast always did.
 */
export function deflateRawInto(src: Buffer, n: number, out: Buffer, at: number): number {
  if (base > 0x7fffffff - 2 * n - WINDOW) {
    head.fill(0);
    base = 0;
  }
  base += WINDOW + 1; // every head left by an earlier call is now out of the window
  const b0 = base;
  let o = at;
  // The bit buffer: codes are written LSB first, whole bytes flushed as they fill.
  let bits = 3; // BFINAL 1, BTYPE 01 (fixed codes)
  let nbits = 3;
  let i = 0;
  while (i < n) {
    let matchLen = 0;
    let dist = 0;
    if (i + MIN_MATCH <= n) {
      const w = src[i]! | (src[i + 1]! << 8) | (src[i + 2]! << 16) | (src[i + 3]! << 24);
      const h = (Math.imul(w, 2654435761) >>> (32 - HASH_BITS)) & HASH_MASK;
      const cand = head[h]! - b0;
      head[h] = b0 + i;
      if (cand >= 0 && i - cand <= WINDOW) {
        const max = Math.min(MAX_MATCH, n - i);
        let l = 0;
        while (l < max && src[cand + l] === src[i + l]) l++;
        if (l >= MIN_MATCH) {
          matchLen = l;
          dist = i - cand;
        }
      }
    }
    if (matchLen === 0) {
      const b = src[i++]!;
      bits |= LIT_CODE[b]! << nbits;
      nbits += LIT_LEN[b]!;
    } else {
      const ls = LEN_SYM[matchLen]!;
      bits |= LIT_CODE[257 + ls]! << nbits;
      nbits += LIT_LEN[257 + ls]!;
      const le = LEN_EXTRA[ls]!;
      if (le) {
        bits |= (matchLen - LEN_BASE[ls]!) << nbits;
        nbits += le;
      }
      while (nbits >= 8) {
        out[o++] = bits & 0xff;
        bits >>>= 8;
        nbits -= 8;
      }
      const ds = distSym(dist);
      bits |= DIST_CODE[ds]! << nbits;
      nbits += 5;
      const de = DIST_EXTRA[ds]!;
      if (de) {
        // up to 13 extra bits: flush first so that the accumulator stays within 32 bits
        while (nbits >= 8) {
          out[o++] = bits & 0xff;
          bits >>>= 8;
          nbits -= 8;
        }
        bits |= (dist - DIST_BASE[ds]!) << nbits;
        nbits += de;
      }
      // Index the positions the match covered (bounded: long runs index their start only).
      const end = i + Math.min(matchLen, 16);
      for (let j = i + 1; j < end && j + MIN_MATCH <= n; j++) {
        const wj = src[j]! | (src[j + 1]! << 8) | (src[j + 2]! << 16) | (src[j + 3]! << 24);
        head[(Math.imul(wj, 2654435761) >>> (32 - HASH_BITS)) & HASH_MASK] = b0 + j;
      }
      i += matchLen;
    }
    while (nbits >= 8) {
      out[o++] = bits & 0xff;
      bits >>>= 8;
      nbits -= 8;
    }
  }
  bits |= LIT_CODE[256]! << nbits; // end of block
  nbits += LIT_LEN[256]!;
  while (nbits > 0) {
    out[o++] = bits & 0xff;
    bits >>>= 8;
    nbits -= 8;
  }
  base += n;
  return o;
}

/** Raw DEFLATE (one final fixed-Huffman block) of `src`. */
export function deflateRawFast(src: Buffer): Buffer {
  const out = Buffer.allocUnsafe(deflateBound(src.length));
  return out.subarray(0, deflateRawInto(src, src.length, out, 0));
}

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff]);

/** A gzip member of `src` (Go's gzip header for BestSpeed: XFL 4, OS unknown). */
export function gzipFast(src: Buffer): Buffer {
  const body = deflateRawFast(src);
  const out = Buffer.allocUnsafe(10 + body.length + 8);
  GZIP_HEADER.copy(out, 0);
  body.copy(out, 10);
  out.writeUInt32LE(crc32(src), 10 + body.length);
  out.writeUInt32LE(src.length >>> 0, 14 + body.length);
  return out;
}

/** A zlib stream of `src` (header 78 01: fastest level), Adler-32 last. */
export function zlibFast(src: Buffer): Buffer {
  const body = deflateRawFast(src);
  const out = Buffer.allocUnsafe(2 + body.length + 4);
  out[0] = 0x78;
  out[1] = 0x01;
  body.copy(out, 2);
  let a = 1;
  let b = 0;
  for (let i = 0; i < src.length; i++) {
    a = (a + src[i]!) % 65521;
    b = (b + a) % 65521;
  }
  out.writeUInt32BE(((b << 16) | a) >>> 0, 2 + body.length);
  return out;
}
