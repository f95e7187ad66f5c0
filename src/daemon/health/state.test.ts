import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HealthState } from '../containers/record.ts';
import { applyProbeResult, startingHealth } from './state.ts';

const startedAt = Date.parse('2024-01-01T00:00:00Z');
const at = (s: number) => new Date(startedAt + s * 1000).toISOString();
const result = (s: number, code: number) => ({ Start: at(s), End: at(s + 0.1), ExitCode: code, Output: '' });
const opts = { retries: 3, startPeriodMs: 0, containerStartedAt: startedAt };

describe('applyProbeResult', () => {
  it('a pass is healthy and clears the streak', () => {
    const h = applyProbeResult({ Status: 'unhealthy', FailingStreak: 5, Log: [] }, result(1, 0), opts);
    assert.deepEqual([h.Status, h.FailingStreak, h.Log.length], ['healthy', 0, 1]);
  });

  it('failures count up to unhealthy at `retries`', () => {
    let h: HealthState = startingHealth(undefined);
    h = applyProbeResult(h, result(1, 1), opts);
    assert.deepEqual([h.Status, h.FailingStreak], ['starting', 1]);
    h = applyProbeResult(h, result(2, 2), opts);
    assert.deepEqual([h.Status, h.FailingStreak], ['starting', 2]);
    h = applyProbeResult(h, result(3, -1), opts);
    assert.deepEqual([h.Status, h.FailingStreak], ['unhealthy', 3]);
    const healthy = applyProbeResult({ Status: 'healthy', FailingStreak: 0, Log: [] }, result(4, 1), opts);
    assert.deepEqual([healthy.Status, healthy.FailingStreak], ['healthy', 1], 'one failure does not end healthy');
  });

  it('inside the start period a starting container keeps no streak; once healthy it does', () => {
    const sp = { ...opts, startPeriodMs: 10_000 };
    const h = applyProbeResult(startingHealth(undefined), result(5, 1), sp);
    assert.deepEqual([h.Status, h.FailingStreak, h.Log.length], ['starting', 0, 1]);
    const late = applyProbeResult(startingHealth(undefined), result(11, 1), sp);
    assert.equal(late.FailingStreak, 1);
    const wasHealthy = applyProbeResult({ Status: 'healthy', FailingStreak: 0, Log: [] }, result(5, 1), sp);
    assert.equal(wasHealthy.FailingStreak, 1);
  });

  it('keeps the last five log entries; a new run keeps the log but restarts the status', () => {
    let h: HealthState = startingHealth(undefined);
    for (let i = 0; i < 8; i++) h = applyProbeResult(h, result(i, i === 7 ? 0 : 1), opts);
    assert.equal(h.Log.length, 5);
    assert.equal(h.Log[0]!.Start, at(3));
    assert.equal(h.Log.at(-1)!.Start, at(7));
    const again = startingHealth(h);
    assert.deepEqual([again.Status, again.FailingStreak, again.Log.length], ['starting', 0, 5]);
  });
});
