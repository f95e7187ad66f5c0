// Go's path.Match, as dockerd's reference filter applies it; cases from Go's own behaviour.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathMatch } from './path-match.ts';

test('path.Match semantics', () => {
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
  for (const [p, s, want] of cases) assert.equal(pathMatch(p, s), want, `${p} ~ ${s}`);
  for (const bad of ['[', '[^', '[^bc', 'a[', 'a\\', '[]a]', '[-]', '[x-]', '[a-b-c]', '*x\\']) {
    assert.throws(() => pathMatch(bad, 'a'), /syntax error in pattern/, bad);
  }
});
