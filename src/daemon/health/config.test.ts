import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goDuration, healthSettings, probeCommand } from './config.ts';

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

describe('goDuration', () => {
  it('writes durations the way Go does', () => {
    const cases: Array<[number, string]> = [
      [0, '0s'],
      [300e6, '300ms'],
      [1.5e6, '1.5ms'],
      [2500, '2.5µs'],
      [999, '999ns'],
      [1e9, '1s'],
      [1.5e9, '1.5s'],
      [30e9, '30s'],
      [60e9, '1m0s'],
      [90e9, '1m30s'],
      [3600e9, '1h0m0s'],
      [3723.5e9, '1h2m3.5s'],
      [-2e9, '-2s'],
    ];
    for (const [ns, text] of cases) assert.equal(goDuration(ns), text, String(ns));
  });
});
