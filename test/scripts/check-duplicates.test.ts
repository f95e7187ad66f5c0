// scripts/check-duplicates.mjs, the copy-paste check the test run does before the tests: which
// lines count, and which repeats it reports.
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { findUpwards } from '../../src/util/find-upwards.ts';

interface Pair {
  a: string;
  b: string;
  files: string;
  lines: number;
}
const mod = (await import(pathToFileURL(findUpwards(import.meta.url, 'scripts/check-duplicates.mjs')!).href)) as {
  codeLines(source: string): { text: string; line: number }[];
  findDuplicates(files: [string, string][], min?: number): Pair[];
};

/** `n` distinct statements, each on its own line. */
const body = (n: number, name = 'v') => Array.from({ length: n }, (_, i) => `  const ${name}${i} = compute(${i}, '${name}');`).join('\n');

test('comments, blank lines, imports (one line or a list) and lone punctuation do not count', () => {
  const src = [
    "import { a } from './a.ts';",
    'import type {',
    '  B,',
    '  C,',
    "} from './b.ts';",
    '// a comment',
    '/* a block',
    '   comment */',
    '',
    'function f() {',
    '  return   a  +  1;',
    '}',
  ].join('\n');
  assert.deepEqual(mod.codeLines(src), [
    { text: 'function f() {', line: 10 },
    { text: 'return a + 1;', line: 11 },
  ]);
});

test('a run of 8 equal code lines in two files is one pair with its line ranges; 7 are not', () => {
  const copied = body(10);
  const pairs = mod.findDuplicates([
    ['a.ts', `function x() {\n${copied}\n}\n`],
    ['b.ts', `// header\n\nfunction y() {\n${copied}\n}\n`],
  ]);
  assert.equal(pairs.length, 1, JSON.stringify(pairs));
  assert.equal(pairs[0]!.files, 'a.ts ~ b.ts');
  assert.equal(pairs[0]!.a, 'a.ts:2-11');
  assert.equal(pairs[0]!.b, 'b.ts:4-13');
  const short = body(7);
  assert.deepEqual(
    mod.findDuplicates([
      ['a.ts', `function x() {\n${short}\n}\n`],
      ['b.ts', `function y() {\n${short}\n}\n`],
    ]),
    [],
  );
});

test('a repeat inside one file counts; a run that only overlaps itself does not', () => {
  const block = body(8, 'w');
  assert.equal(mod.findDuplicates([['a.ts', `function x() {\n${block}\n}\nfunction y() {\n${block}\n}\n`]]).length, 1);
  const same = Array.from({ length: 20 }, () => '  tick();').join('\n');
  assert.deepEqual(mod.findDuplicates([['a.ts', `function x() {\n${same}\n}\n`]]), []);
});
