// The word-at-a-time byte search against Buffer#indexOf.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hotIndexOfByte, wordsFor } from './byte-scan.ts';

describe('byte scan', () => {
  it("finds a byte as Buffer#indexOf does, at any alignment and range, in a pool's slice too", () => {
    const pool = Buffer.allocUnsafe(4096).fill(0x2a);
    for (let t = 0; t < 20_000; t++) {
      const n = 1 + (t % 1500); // past SWAR_BYTES too, where memchr takes over
      const at = (t * 7) % (pool.length - n);
      const buf = pool.subarray(at, at + n);
      buf.fill(0x2a);
      const byte = [0x0a, 0x5c, 0x22, 0x00, 0xff][t % 5]!;
      for (let i = 0; i < n; i++) if (Math.random() < 2 / n) buf[i] = byte;
      const start = Math.floor(Math.random() * n);
      const end = start + Math.floor(Math.random() * (n - start + 1));
      const found = buf.indexOf(byte, start);
      const expected = found === -1 || found >= end ? -1 : found;
      assert.equal(hotIndexOfByte(buf, wordsFor(buf), byte, start, end), expected, `${buf.toString('hex')} [${start}, ${end})`);
    }
  });
  it('keeps a view that covers the same memory, and makes one for other memory', () => {
    const a = Buffer.alloc(64);
    const view = wordsFor(a);
    assert.equal(wordsFor(a.subarray(8), view), view);
    assert.notEqual(wordsFor(Buffer.alloc(64), view), view);
  });
});
