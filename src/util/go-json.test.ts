// Go's json.Decoder words for text that is not JSON: each case is the message Go's scanner gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goDecodeProblem, goQuoteChar, goUnmarshalError, scanGoJson } from './go-json.ts';

const problem = (text: string | Buffer) => {
  const p = goDecodeProblem(typeof text === 'string' ? Buffer.from(text) : text);
  return 'message' in p ? p.message : p.end;
};

test("syntax errors carry Go's scanner words", () => {
  const cases: [string, string][] = [
    ['{i}', "invalid character 'i' looking for beginning of object key string"],
    ['{"Image":"busybox",}', "invalid character '}' looking for beginning of object key string"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 x}', "invalid character 'x' after object key:value pair"],
    ['{"a":01}', "invalid character '1' after object key:value pair"],
    ['[1 2]', "invalid character '2' after array element"],
    ['{"a":tru}', "invalid character '}' in literal true (expecting 'e')"],
    ['fx', "invalid character 'x' in literal false (expecting 'a')"],
    ['nil', "invalid character 'i' in literal null (expecting 'u')"],
    ['-x', "invalid character 'x' in numeric literal"],
    ['1.x', "invalid character 'x' after decimal point in numeric literal"],
    ['1ex', "invalid character 'x' in exponent of numeric literal"],
    ['"\\x"', "invalid character 'x' in string escape code"],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
    ['"a\nb"', "invalid character '\\n' in string literal"],
    ['\u0000', "invalid character '\\x00' looking for beginning of value"],
    ["'a'", "invalid character '\\'' looking for beginning of value"],
    ['[,]', "invalid character ',' looking for beginning of value"],
    ['{"a":}', "invalid character '}' looking for beginning of value"],
  ];
  for (const [text, want] of cases) assert.equal(problem(text), want, text);
});

test('ends of input: EOF, unexpected EOF, and complete top-level values', () => {
  assert.equal(problem(''), 'EOF');
  assert.equal(problem(' \n\t'), 'EOF');
  for (const t of ['{', '{"a":', '[', 'nul', '"abc', '-', '1.', '1e', '{"a":1']) assert.equal(problem(t), 'unexpected EOF', t);
  assert.equal(problem('42'), 2);
  assert.equal(problem(' true '), 5);
  assert.equal(problem('{"a":[1,{"b":null}]}'), 20);
});

test('after the first value: more content is refused, a closing bracket is not (json.Decoder.More)', () => {
  assert.equal(problem('{"Image":"busybox"}{"x":1}'), 'unexpected content after JSON');
  assert.equal(problem('{} 1'), 'unexpected content after JSON');
  assert.equal(problem('{}}'), 2);
  assert.equal(problem('[] ]'), 2);
});

test('nesting beyond Go’s limit is refused without recursion', () => {
  assert.deepEqual(scanGoJson(Buffer.from('['.repeat(10_001))), { kind: 'syntax', message: 'exceeded max depth' });
  assert.deepEqual(scanGoJson(Buffer.from('['.repeat(10_000))), { kind: 'unexpected-eof' });
  const big = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
  assert.deepEqual(scanGoJson(Buffer.from(big)), { kind: 'value', end: big.length });
});

test("bytes are quoted as Go's quoteChar quotes them", () => {
  assert.equal(goQuoteChar(0x22), `'"'`);
  assert.equal(goQuoteChar(0x5c), `'\\\\'`);
  assert.equal(goQuoteChar(0x09), `'\\t'`);
  assert.equal(goQuoteChar(0x7f), `'\\x7f'`);
  assert.equal(goQuoteChar(0x85), `'\\u0085'`);
  assert.equal(goQuoteChar(0xff), `'ÿ'`);
  assert.equal(problem(Buffer.from([0x7b, 0xc3, 0xa9])), "invalid character 'Ã' looking for beginning of object key string");
});

test("json.Unmarshal's words: the whole text is one value", () => {
  assert.equal(goUnmarshalError('{"a":1}'), undefined);
  assert.equal(goUnmarshalError(''), 'unexpected end of JSON input');
  assert.equal(goUnmarshalError('{"a":'), 'unexpected end of JSON input');
  assert.equal(goUnmarshalError('/x'), "invalid character '/' looking for beginning of value");
  assert.equal(goUnmarshalError('{} {}'), "invalid character '{' after top-level value");
  assert.equal(goUnmarshalError('12x'), "invalid character 'x' after top-level value");
  assert.equal(goUnmarshalError('{bad json'), "invalid character 'b' looking for beginning of object key string");
});
