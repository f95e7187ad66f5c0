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

const head = new Int32Array(1 << HASH_BITS);

/** Raw DEFLATE (one final fixed-Huffman block) of `src`. */
export function deflateRawFast(src: Buffer): Buffer {
  // Worst case: 9 bits per literal, plus the block header and end code.
  const out = Buffer.allocUnsafe(Math.ceil((src.length * 9) / 8) + 8);
  let o = 0;
  let bits = 0;
  let nbits = 0;
  const put = (value: number, n: number): void => {
    bits |= value << nbits;
    nbits += n;
    while (nbits >= 8) {
      out[o++] = bits & 0xff;
      bits >>>= 8;
      nbits -= 8;
    }
  };
  put(1, 1); // BFINAL
  put(1, 2); // BTYPE 01: fixed codes
  head.fill(-1);
  const n = src.length;
  let i = 0;
  while (i < n) {
    let matchLen = 0;
    let dist = 0;
    if (i + MIN_MATCH <= n) {
      const h = (Math.imul(src.readUInt32LE(i), 2654435761) >>> (32 - HASH_BITS)) & ((1 << HASH_BITS) - 1);
      const cand = head[h]!;
      head[h] = i;
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
      put(LIT_CODE[b]!, LIT_LEN[b]!);
      continue;
    }
    const ls = LEN_SYM[matchLen]!;
    put(LIT_CODE[257 + ls]!, LIT_LEN[257 + ls]!);
    if (LEN_EXTRA[ls]) put(matchLen - LEN_BASE[ls]!, LEN_EXTRA[ls]!);
    const ds = distSym(dist);
    put(DIST_CODE[ds]!, 5);
    if (DIST_EXTRA[ds]) put(dist - DIST_BASE[ds]!, DIST_EXTRA[ds]!);
    // Index the positions the match covered (bounded: long runs index their start only).
    const end = i + Math.min(matchLen, 16);
    for (let j = i + 1; j < end && j + MIN_MATCH <= n; j++) {
      head[(Math.imul(src.readUInt32LE(j), 2654435761) >>> (32 - HASH_BITS)) & ((1 << HASH_BITS) - 1)] = j;
    }
    i += matchLen;
  }
  put(LIT_CODE[256]!, LIT_LEN[256]!); // end of block
  if (nbits > 0) out[o++] = bits & 0xff;
  return out.subarray(0, o);
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
