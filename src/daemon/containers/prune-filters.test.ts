import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compilePruneFilters, parseFilterTime } from './filters.ts';
import { initialState, type ContainerRecord } from './record.ts';

const NOW = Date.parse('2030-01-01T12:00:00Z');

function rec(created: string, labels?: Record<string, string>): ContainerRecord {
  return { Created: created, Config: { ...(labels ? { Labels: labels } : {}) }, State: initialState() } as unknown as ContainerRecord;
}

test('parseFilterTime: Go durations before now, RFC 3339, unix seconds', () => {
  assert.equal(parseFilterTime('10m', NOW), NOW - 600_000);
  assert.equal(parseFilterTime('1h30m', NOW), NOW - 5_400_000);
  assert.equal(parseFilterTime('1.5s', NOW), NOW - 1500);
  assert.equal(parseFilterTime('-1h', NOW), NOW + 3_600_000);
  assert.equal(parseFilterTime('2029-12-31T00:00:00Z', NOW), Date.parse('2029-12-31T00:00:00Z'));
  assert.equal(parseFilterTime('1700000000', NOW), 1_700_000_000_000);
  assert.equal(parseFilterTime('1700000000.5', NOW), 1_700_000_000_500);
  assert.throws(() => parseFilterTime('yesterday', NOW), /failed to parse value as time or duration/);
  assert.throws(() => parseFilterTime('10x', NOW), /failed to parse/);
});

test('compilePruneFilters: label (all must match), label! (excludes), until; other names are 400', () => {
  const old = rec('2029-01-01T00:00:00Z', { a: '1', b: '2' });
  const fresh = rec('2030-01-01T11:59:00Z', { a: '1' });
  const bare = rec('2029-01-01T00:00:00Z');
  const m = (f: Record<string, string[]>) => [old, fresh, bare].map(compilePruneFilters(new Map(Object.entries(f)), NOW));
  assert.deepEqual(m({}), [true, true, true]);
  assert.deepEqual(m({ until: ['10m'] }), [true, false, true]);
  assert.deepEqual(m({ label: ['a=1'] }), [true, true, false]);
  assert.deepEqual(m({ label: ['a', 'b=2'] }), [true, false, false]);
  assert.deepEqual(m({ 'label!': ['b'] }), [false, true, true]);
  assert.deepEqual(m({ 'label!': ['a', 'b'] }), [false, true, true], 'label! excludes only when all its entries match');
  assert.throws(() => m({ name: ['x'] }), /invalid filter 'name'/);
  assert.throws(() => m({ until: ['1h', '2h'] }), /more than one until filter specified/);
});
