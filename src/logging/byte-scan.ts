// Word-at-a-time (SWAR) searches over a Buffer's memory for the log codecs' hot… functions
// (codec.ts): a view of the memory as 32-bit words, and the first occurrence of a byte.

/**
 * An Int32Array over all whole words of a Buffer's memory, for SWAR scans without per-call views:
 * `cached` again when it already covers that memory (reads and writes mostly reuse their buffers).
 */
export function wordsFor(buf: Buffer, cached?: Int32Array<ArrayBufferLike>): Int32Array<ArrayBufferLike> {
  return cached?.buffer === buf.buffer ? cached : new Int32Array(buf.buffer, 0, buf.buffer.byteLength >>> 2);
}

/** How far hotIndexOfByte searches word by word before it hands over to memchr. */
const SWAR_BYTES = 512;

/**
 * Index of the first `byte` in buf[start, end), else -1: Buffer#indexOf's answer for a byte. Here
 * because the hot functions (bin/engined lets TurboFan compile only those) would otherwise call
 * node's indexOf wrappers once per line, wrappers that TurboFan does not inline and Maglev runs
 * slowly. `words` is wordsFor(buf). The first SWAR_BYTES are tested a word at a time (a word XORed
 * with the byte repeated has a zero byte exactly where the byte is): a log line mostly ends there.
 * Farther on, one call to Buffer#indexOf (memchr, vectorised) is worth its wrappers.
 */
export function hotIndexOfByte(buf: Buffer, words: Int32Array<ArrayBufferLike>, byte: number, start: number, end: number): number {
  let i = start;
  if (end - start >= 16) {
    const base = buf.byteOffset;
    for (; ((base + i) & 3) !== 0; i++) if (buf[i] === byte) return i;
    const pattern = Math.imul(byte, 0x01010101);
    // The words wholly inside the range, SWAR_BYTES of them at most.
    const last = Math.min((base + end) >>> 2, ((base + i) >>> 2) + SWAR_BYTES / 4);
    for (let w = (base + i) >>> 2; w < last; w++) {
      const x = words[w]! ^ pattern;
      if ((((x - 0x01010101) | 0) & ~x & 0x80808080) !== 0) {
        const p = w * 4 - base;
        for (let q = p; q < p + 4; q++) if (buf[q] === byte) return q;
      }
    }
    i = last * 4 - base;
    if (end - i > 64) {
      const at = buf.indexOf(byte, i);
      return at === -1 || at >= end ? -1 : at;
    }
  }
  for (; i < end; i++) if (buf[i] === byte) return i;
  return -1;
}
