import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger } from '../../util/log.ts';
import type { ContainerRecord } from '../containers/record.ts';
import { HealthMonitor, type HealthHost } from './monitor.ts';

function record(healthcheck: Record<string, unknown> | undefined): ContainerRecord {
  return {
    Id: 'c1',
    Config: { Healthcheck: healthcheck },
    State: { Status: 'running', Running: true, Paused: false, StartedAt: new Date().toISOString() },
  } as unknown as ContainerRecord;
}

function fakeHost(rec: ContainerRecord, probe: HealthHost['probe']): HealthHost & { saves: number; calls: string[][] } {
  const host = {
    saves: 0,
    calls: [] as string[][],
    find: (id: string) => {
      if (id !== rec.Id) throw new Error('gone');
      return rec;
    },
    save: () => void host.saves++,
    probe: (id: string, cmd: string[], t: number, max: number) => {
      host.calls.push(cmd);
      return probe(id, cmd, t, max);
    },
  };
  return host;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}
const log = new Logger({ level: 'error', format: 'text', raw: false });

describe('HealthMonitor', () => {
  it('probes on the interval, reports transitions, and stops with the run', async () => {
    const rec = record({ Test: ['CMD', 'check'], Interval: 20e6, Retries: 2 });
    let code = 0;
    const host = fakeHost(rec, async () => ({ exitCode: code, output: 'o', timedOut: false }));
    const statuses: string[] = [];
    const m = new HealthMonitor({ host, log, onStatus: (_id, s) => statuses.push(s) });
    m.started(rec);
    assert.equal(rec.State.Health?.Status, 'starting');
    await until('healthy', () => rec.State.Health?.Status === 'healthy');
    assert.deepEqual(host.calls[0], ['check']);
    code = 1;
    await until('unhealthy', () => rec.State.Health?.Status === 'unhealthy');
    assert.deepEqual(statuses, ['healthy', 'unhealthy']);
    assert.ok(host.saves >= 3);
    m.stopped(rec.Id);
    const calls = host.calls.length;
    await sleep(60);
    assert.equal(host.calls.length, calls, 'no probes after stop');
  });

  it("skips probes while paused and records timeouts as -1 with Go's duration", async () => {
    const rec = record({ Test: ['CMD-SHELL', 'x'], Interval: 15e6, Timeout: 1.5e9, Retries: 1 });
    rec.State.Paused = true;
    const host = fakeHost(rec, async () => ({ exitCode: 137, output: 'partial', timedOut: true }));
    const m = new HealthMonitor({ host, log });
    m.started(rec);
    await sleep(60);
    assert.equal(host.calls.length, 0);
    rec.State.Paused = false;
    await until('a probe', () => (rec.State.Health?.Log.length ?? 0) > 0);
    m.stopAll();
    const entry = rec.State.Health!.Log[0]!;
    assert.deepEqual([entry.ExitCode, entry.Output], [-1, 'Health check exceeded timeout (1.5s): partial']);
    assert.equal(rec.State.Health!.Status, 'unhealthy');
    assert.deepEqual(host.calls[0], ['/bin/sh', '-c', 'x']);
  });

  it('does nothing for containers without a usable check', () => {
    for (const hc of [undefined, { Test: ['NONE'] }, { Test: [] }]) {
      const rec = record(hc);
      new HealthMonitor({ host: fakeHost(rec, async () => ({ exitCode: 0, output: '', timedOut: false })), log }).started(rec);
      assert.equal(rec.State.Health, undefined);
    }
  });

  it('an error running the probe is a failure with its message', async () => {
    const rec = record({ Test: ['CMD', 'x'], Interval: 10e6, Retries: 1 });
    const host = fakeHost(rec, async () => {
      throw new Error('container abc is not running');
    });
    const m = new HealthMonitor({ host, log });
    m.started(rec);
    await until('a probe', () => (rec.State.Health?.Log.length ?? 0) > 0);
    m.stopAll();
    assert.deepEqual([rec.State.Health!.Log[0]!.ExitCode, rec.State.Health!.Log[0]!.Output], [-1, 'container abc is not running']);
  });
});
