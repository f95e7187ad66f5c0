// Tests of the linear-time glob engine: the three dialects, and patterns that make a backtracking
// RegExp take exponential time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileGoGlob, compileIgnoreGlob, compileShellGlob, GlobBudgetError, GlobError } from './glob.ts';

const go = (p: string, s: string) => compileGoGlob(p)?.matches(s) ?? false;
const ig = (p: string, s: string) => compileIgnoreGlob(p)?.matches(s) ?? false;

describe('glob engine', () => {
  test('Go filepath.Match dialect', () => {
    assert.equal(go('a*c', 'abbbc'), true);
    assert.equal(go('a*c', 'ab/c'), false);
    assert.equal(go('a?c', 'a/c'), false);
    assert.equal(go('[a-c]x', 'bx'), true);
    assert.equal(go('[^a-c]x', 'dx'), true);
    assert.equal(go('[\\]]', ']'), true);
    assert.equal(compileGoGlob('[]'), null);
    assert.equal(compileGoGlob('ab\\'), null);
    assert.equal(compileGoGlob('[z-a]'), null);
  });

  test('.dockerignore dialect: ** across directories', () => {
    assert.equal(ig('**/x', 'x'), true);
    assert.equal(ig('a/**/x', 'a/b/c/x'), true);
    assert.equal(ig('a/**/x', 'a/bx'), false);
    assert.equal(ig('a/**', 'a/b/c'), true);
    assert.equal(ig('*.go', 'a/b.go'), false);
  });

  test('shell dialect: * crosses /, not newlines; escapes; reversed for suffixes', () => {
    const n = compileShellGlob('*.t?z');
    assert.deepEqual(n.ends(Array.from('a/b.tgz.tgz')), [7, 11]);
    assert.deepEqual(compileShellGlob('*').ends(Array.from('a\nb')), [0, 1]);
    assert.deepEqual(compileShellGlob('\\*x').ends(Array.from('*xy')), [2]);
    assert.throws(() => compileShellGlob('\\q'), GlobError);
    assert.deepEqual(compileShellGlob('.*', true).ends(Array.from('zg.rat.elif')), [3, 7]); // file.tar.gz reversed: suffixes .gz and .tar.gz
  });

  test('patterns that are exponential for a backtracking engine run in linear time', () => {
    const t = performance.now();
    assert.equal(go('*a'.repeat(30) + 'b', 'a'.repeat(200)), false);
    assert.equal(ig('x/' + '**/'.repeat(30) + 'z', 'x/' + 'a/'.repeat(200) + 'y'), false);
    assert.equal(ig('x/' + '**/'.repeat(30) + 'z', 'x/' + 'a/'.repeat(200) + 'z'), true);
    assert.ok(performance.now() - t < 30_000); // exponential backtracking would take hours
  });

  test('a budget bounds the work on huge texts', () => {
    const nfa = compileShellGlob('*a*a*a*b');
    assert.throws(() => nfa.ends(Array.from('a'.repeat(1000)), 0, { ops: 100 }), GlobBudgetError);
  });
});

// Go's path.Match cases (dockerd's reference= image filter), as Go answers them.
test('Go path.Match semantics', () => {
  const cases: [string, string, boolean][] = [
    ['abc', 'abc', true],
    ['*', 'abc', true],
    ['*c', 'abc', true],
    ['a*', 'a', true],
    ['a*', 'ab/c', false],
    ['a*/b', 'abc/b', true],
    ['a*b*c*d*e*/f', 'axbxcxdxe/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', false],
    ['a*b?c*x', 'abxbbxdbxebxczzx', true],
    ['a*b?c*x', 'abxbbxdbxebxczzy', false],
    ['ab[c]', 'abc', true],
    ['ab[b-d]', 'abc', true],
    ['ab[^c]', 'abc', false],
    ['ab[^b-d]', 'abe', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'ab', false],
    ['a?b', 'a☺b', true],
    ['a[^a]b', 'a☺b', true],
    ['a???b', 'a☺b', false],
    ['*x', 'xxx', true],
  ];
  for (const [p, s, want] of cases) assert.equal(compileGoGlob(p)?.matches(s), want, `${p} ~ ${s}`);
  for (const bad of ['[', '[^', '[^bc', 'a[', 'a\\', '[]a]', '[-]', '[x-]', '[a-b-c]', '*x\\']) {
    assert.equal(compileGoGlob(bad), null, bad);
  }
});
