import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { healthSettings, probeCommand } from './config.ts';

describe('probeCommand', () => {
  it('maps the test forms to an argv', () => {
    assert.deepEqual(probeCommand(['CMD', 'curl', '-f', 'x']), ['curl', '-f', 'x']);
    assert.deepEqual(probeCommand(['CMD-SHELL', 'exit 1']), ['/bin/sh', '-c', 'exit 1']);
    assert.deepEqual(probeCommand(['CMD-SHELL', 'exit 1'], ['/bin/bash', '-lc']), ['/bin/bash', '-lc', 'exit 1']);
  });
  it('has nothing to run for NONE, an empty test or an unknown type', () => {
    assert.equal(probeCommand(['NONE']), undefined);
    assert.equal(probeCommand([]), undefined);
    assert.equal(probeCommand(undefined), undefined);
    assert.equal(probeCommand(['SHELL', 'x']), undefined);
  });
});

describe('healthSettings', () => {
  it("fills dockerd's defaults", () => {
    assert.deepEqual(healthSettings({ Healthcheck: { Test: ['CMD', 'true'] } }), {
      command: ['true'],
      intervalMs: 30_000,
      timeoutMs: 30_000,
      startPeriodMs: 0,
      startIntervalMs: 5_000,
      retries: 3,
      timeoutNs: 30e9,
    });
  });
  it('converts the nanosecond fields', () => {
    const s = healthSettings({
      Healthcheck: { Test: ['CMD-SHELL', 'x'], Interval: 200e6, Timeout: 1.5e9, StartPeriod: 60e9, StartInterval: 100e6, Retries: 7 },
    });
    assert.deepEqual([s.intervalMs, s.timeoutMs, s.startPeriodMs, s.startIntervalMs, s.retries], [200, 1500, 60_000, 100, 7]);
  });
});
