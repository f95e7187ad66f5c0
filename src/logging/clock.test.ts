import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTimeNano, nowNano, parseTimeNano } from './clock.ts';

describe('clock', () => {
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
    for (const bad of ['2024-01-02 03:04:05Z', '2024-01-02T03:04:05', 'yesterday', '']) assert.throws(() => parseTimeNano(bad), /invalid timestamp/);
  });

  it('reads the wall clock with nanosecond digits', () => {
    const a = nowNano();
    const ms = BigInt(Date.now());
    assert.ok(a / 1_000_000n >= ms - 5n && a / 1_000_000n <= ms + 5n);
    assert.ok(nowNano() >= a);
  });
});
