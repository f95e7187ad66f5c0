import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseTimeFilter, referenceMatches } from './image-views.ts';

describe('image list filters', () => {
  test('reference patterns match the familiar name or name:tag, * not crossing /', () => {
    assert.ok(referenceMatches('busybox', 'busybox:latest'));
    assert.ok(referenceMatches('busybox:lat*', 'busybox:latest'));
    assert.ok(referenceMatches('busy*', 'busybox:1'));
    assert.ok(!referenceMatches('busy*', 'team/busybox:1'));
    assert.ok(referenceMatches('*/busybox', 'team/busybox:1'));
    assert.ok(referenceMatches('localhost:5000/*', 'localhost:5000/x:1'));
    assert.ok(!referenceMatches('other', 'busybox:latest'));
    assert.ok(referenceMatches('b[tu]sy?ox', 'busybox:1'));
    assert.ok(referenceMatches('b[^a]sybox:[0-9]', 'busybox:1'));
    assert.throws(() => referenceMatches('busy[box', 'busybox:1'), /syntax error in pattern/);
  });

  test('hostile reference patterns stay bounded (no RegExp backtracking)', () => {
    const started = performance.now();
    assert.ok(!referenceMatches('*a'.repeat(3000) + 'x', `${'a'.repeat(120)}:1`));
    assert.ok(referenceMatches('*'.repeat(3000), 'busybox:1'));
    assert.ok(performance.now() - started < 10_000);
  });

  test('until/since times: unix seconds, RFC 3339, durations', () => {
    assert.equal(parseTimeFilter('1700000000'), 1700000000);
    assert.equal(parseTimeFilter('2024-01-01T00:00:00Z'), Date.UTC(2024, 0, 1) / 1000);
    assert.ok(Math.abs(parseTimeFilter('1h30m') - (Date.now() / 1000 - 5400)) < 5);
    assert.throws(() => parseTimeFilter('yesterday'), /invalid time filter/);
  });
});
