import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { formatTimeNano, nowIso, nowNano, parseTimeNano, parseTimeValue, rfc3339NanoFixed, ZERO_TIME } from './time.ts';

test('RFC 3339 with nanoseconds: fixed nine digits, or trimmed as Go marshals', () => {
  assert.equal(rfc3339NanoFixed(1_700_000_000_120_000_000n), '2023-11-14T22:13:20.120000000Z');
  assert.equal(formatTimeNano(1_700_000_000_123_456_789n), '2023-11-14T22:13:20.123456789Z');
  assert.equal(formatTimeNano(1_700_000_000_120_000_000n), '2023-11-14T22:13:20.12Z');
  assert.equal(formatTimeNano(1_700_000_000_000_000_000n), '2023-11-14T22:13:20Z');
  assert.match(nowIso(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
  assert.ok(Math.abs(Date.parse(nowIso()) - Date.now()) < 1000);
  assert.equal(ZERO_TIME, '0001-01-01T00:00:00Z');
});

test('since/until values: unix seconds, RFC 3339 dates, durations before now', () => {
  assert.equal(parseTimeValue('1700000000.123456789'), 1_700_000_000_123_456_789n);
  assert.equal(parseTimeValue('1.5'), 1_500_000_000n, 'the fraction is a fraction of a second');
  assert.equal(parseTimeValue('2023-11-14T22:13:20.123456789Z'), 1_700_000_000_123_456_789n);
  assert.equal(parseTimeValue('2023-11-14T23:13:20+01:00'), 1_700_000_000_000_000_000n);
  assert.equal(parseTimeValue('2023-11-14T22:13Z'), 1_699_999_980_000_000_000n);
  assert.equal(parseTimeValue('10m', 1_700_000_600_000), 1_700_000_000_000_000_000n);
  assert.equal(typeof parseTimeValue('2023-11-14'), 'bigint');
  for (const bad of ['', 'yesterday', '2023-13-45', '1h2', '12:00']) assert.equal(parseTimeValue(bad), undefined, bad);
});

describe('clock and RFC 3339 nano', () => {
  it('formats like Go time.RFC3339Nano in UTC (fraction trimmed)', () => {
    assert.equal(formatTimeNano(0n), '1970-01-01T00:00:00Z');
    assert.equal(formatTimeNano(1n), '1970-01-01T00:00:00.000000001Z');
    assert.equal(formatTimeNano(1_500_000_000n), '1970-01-01T00:00:01.5Z');
    assert.equal(formatTimeNano(1795318234123456789n), '2026-11-22T03:30:34.123456789Z');
    assert.equal(formatTimeNano(1795318234120000000n), '2026-11-22T03:30:34.12Z');
  });

  it('parses what it formats, and RFC 3339 with offsets', () => {
    for (let i = 0; i < 1000; i++) {
      const ns = BigInt(Math.floor(Math.random() * 4e9)) * 1_000_000_000n + BigInt(Math.floor(Math.random() * 1e9));
      assert.equal(parseTimeNano(formatTimeNano(ns)), ns);
    }
    assert.equal(parseTimeNano('2024-01-02T03:04:05.5+01:00'), 1704161045500000000n);
    assert.equal(parseTimeNano('2024-01-02T03:04:05Z'), 1704164645000000000n);
    for (const bad of ['2024-01-02 03:04:05Z', '2024-01-02T03:04:05', 'yesterday', ''])
      assert.throws(() => parseTimeNano(bad), /invalid timestamp/);
  });

  it('reads the wall clock with nanosecond digits', () => {
    const a = nowNano();
    const ms = BigInt(Date.now());
    assert.ok(a / 1_000_000n >= ms - 5n && a / 1_000_000n <= ms + 5n);
    assert.ok(nowNano() >= a);
  });
});
