import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allLabelsMatch, boolFilterValue, checkFilterNames, labelMatches, lastBoolFilter, regexFilter } from './filters.ts';

test('labels: key or key=value, own properties only', () => {
  const l = { a: '1', empty: '' };
  assert.ok(labelMatches(l, 'a'));
  assert.ok(labelMatches(l, 'a=1'));
  assert.ok(!labelMatches(l, 'a=2'));
  assert.ok(labelMatches(l, 'empty='));
  assert.ok(!labelMatches(l, 'b'));
  assert.ok(!labelMatches(l, 'constructor'), 'a name of Object.prototype is no label');
  assert.ok(!labelMatches(null, 'a'));
  assert.ok(allLabelsMatch(l, ['a', 'empty']));
  assert.ok(!allLabelsMatch(l, ['a', 'b']));
});

test('booleans as Go ParseBool; names checked', () => {
  assert.equal(boolFilterValue('dangling', 'True'), true);
  assert.equal(boolFilterValue('dangling', '0'), false);
  assert.throws(() => boolFilterValue('dangling', 'yes'), /invalid filter 'dangling=yes'/);
  assert.equal(lastBoolFilter('all', ['false', 'true']), true);
  assert.equal(lastBoolFilter('all', undefined), undefined);
  assert.throws(() => checkFilterNames(new Map([['nope', ['x']]]), ['label']), /invalid filter 'nope'/);
  assert.ok(regexFilter('w.b').test('xwebx'));
  // As dockerd: a value that is no valid Go expression matches only itself, never a 400 or a 500.
  assert.equal(regexFilter('((').test('a(('), false);
  assert.equal(regexFilter('((').test('(('), true);
  // Hostile patterns: linear time, no "Invalid regular expression" from a JavaScript RegExp.
  assert.equal(regexFilter('(a+)+$').test('a'.repeat(3000) + '!'), false);
  assert.equal(regexFilter('x'.repeat(100_000)).test('x'), false);
});
