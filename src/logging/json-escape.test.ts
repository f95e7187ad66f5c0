import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findSpecial, goJsonObject, hotEscapeLogBytes, SpecialScanner } from './json-escape.ts';

const verbatim = (b: number): boolean =>
  b === 0x0a || (b >= 0x20 && b < 0x80 && b !== 0x22 && b !== 0x5c && b !== 0x3c && b !== 0x3e && b !== 0x26);

describe('json escaping', () => {
  it('finds the first byte needing an escape, at any alignment, like a byte-by-byte scan', () => {
    const alphabet = [0x0a, 0x09, 0x00, 0x1f, 0x20, 0x22, 0x26, 0x3c, 0x3e, 0x5c, 0x7f, 0x80, 0xc3, 0xff, 0x2a, 0x61];
    for (let t = 0; t < 20_000; t++) {
      const n = 1 + (t % 150);
      const backing = Buffer.alloc(n + 8, 0x61);
      const buf = backing.subarray(t % 4, (t % 4) + n);
      for (let i = 0; i < n; i++) buf[i] = Math.random() < 0.03 ? alphabet[Math.floor(Math.random() * alphabet.length)]! : 0x30 + (i % 40);
      const start = Math.floor(Math.random() * n);
      let expected = n;
      for (let i = start; i < n; i++)
        if (!verbatim(buf[i]!)) {
          expected = i;
          break;
        }
      assert.equal(findSpecial(buf, start, n), expected, `${buf.toString('hex')} from ${start}`);
    }
  });

  it('walks a region with a scanner that remembers what it found', () => {
    const buf = Buffer.from('ok\n"q"\nok\n\tt\nok\né\n<\nok\n');
    const s = new SpecialScanner();
    s.reset(buf, 0, buf.length);
    const found: number[] = [];
    for (let at = s.hotFirst(0); at < buf.length; at = s.hotFirst(at + 1)) found.push(at);
    const expected: number[] = [];
    for (let i = 0; i < buf.length; i++) if (!verbatim(buf[i]!)) expected.push(i);
    assert.deepEqual(found, expected);
  });

  it('escapes the log text byte for byte like dockerd', () => {
    const cases: Array<[number[] | string, string]> = [
      ['plain text', 'plain text'],
      ['"\\\n\r\t<>&', '\\"\\\\\\n\\r\\u0009\\u003c\\u003e\\u0026'],
      ['\u0000\u001f\u007f', '\\u0000\\u001f\u007f'],
      ['\u2028\u2029', '\\u2028\\u2029'],
      ['é✓😀', 'é✓😀'],
      [[0xff], '\\ufffd'],
      [[0xf0, 0x9f, 0x98], '\\ufffd\\ufffd\\ufffd'],
      [[0xe0, 0x80, 0x80], '\\ufffd\\ufffd\\ufffd'],
    ];
    for (const [input, expected] of cases) {
      const src = typeof input === 'string' ? Buffer.from(input) : Buffer.from(input);
      const out = Buffer.alloc(src.length * 6);
      assert.equal(out.subarray(0, hotEscapeLogBytes(src, 0, src.length, out, 0)).toString(), expected, JSON.stringify(input));
    }
  });

  it("writes attrs as Go's json.Marshal does for map[string]string", () => {
    assert.equal(goJsonObject({ b: '<x>', a: 'tab\there', 'c"': '\u2028' }), '{"a":"tab\\there","b":"\\u003cx\\u003e","c\\"":"\\u2028"}');
  });
});
