// Issue 6, part 8: health checks run through exec — healthy, unhealthy after the retries, starting
// during the start period, timeouts, `docker ps` status and the health filter, the checks stopping
// and restarting with the container, the state surviving a daemon restart, restart policy unmoved.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Health {
  Status: string;
  FailingStreak: number;
  Log: Array<{ Start: string; End: string; ExitCode: number; Output: string }>;
}

describe('health checks', () => {
  let d: TestDaemon;
  const health = async (name: string): Promise<Health | undefined> =>
    (await d.request('GET', `/containers/${name}/json`)).json().State.Health;
  const healthIs = (name: string, status: string) =>
    until(`${name} to be ${status}`, async () => {
      const h = await health(name);
      return h?.Status === status ? h : undefined;
    });
  const ps = async (filter?: string) =>
    (await d.docker(['ps', ...(filter ? ['--filter', filter] : []), '--format', '{{.Names}}|{{.Status}}'])).stdout;

  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('a passing check makes the container healthy; ps shows it and filters on it', async () => {
    const r = await d.docker([
      'run',
      '-d',
      '--name',
      'good',
      '--health-cmd',
      'echo probe-out',
      '--health-interval',
      '200ms',
      'busybox',
      'sleep',
      '100000',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const first = await health('good');
    assert.equal(first?.Status, 'starting', 'a fresh container starts in "starting"');
    const h = await healthIs('good', 'healthy');
    assert.equal(h.FailingStreak, 0);
    assert.ok(h.Log.length >= 1);
    const entry = h.Log.at(-1)!;
    assert.equal(entry.ExitCode, 0);
    assert.equal(entry.Output, 'probe-out\n');
    assert.ok(Date.parse(entry.End) >= Date.parse(entry.Start));
    assert.match(await ps(), /^good\|Up .* \(healthy\)$/m);
    assert.match(await ps('health=healthy'), /^good\|/m);
    assert.doesNotMatch(await ps('health=unhealthy'), /^good\|/m);
    // The log keeps the last five probes.
    await until('five log entries', async () => ((await health('good'))!.Log.length === 5 ? true : undefined));
    await sleep(600);
    assert.equal((await health('good'))!.Log.length, 5);
    // Probes are execs: they never pile up in ExecIDs.
    const ids = (await d.request('GET', '/containers/good/json')).json().ExecIDs;
    assert.ok(ids === null || ids.length <= 1, JSON.stringify(ids));
  });

  test('failing checks make it unhealthy after the retries; the restart policy does not react', async () => {
    const r = await d.docker([
      'run',
      '-d',
      '--name',
      'bad',
      '--restart',
      'always',
      '--health-cmd',
      'echo failing >&2; exit 3',
      '--health-interval',
      '200ms',
      '--health-retries',
      '2',
      'busybox',
      'sleep',
      '100000',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const h = await healthIs('bad', 'unhealthy');
    assert.ok(h.FailingStreak >= 2, `streak ${h.FailingStreak}`);
    const last = h.Log.at(-1)!;
    assert.equal(last.ExitCode, 3);
    assert.equal(last.Output, 'failing\n');
    assert.match(await ps(), /^bad\|Up .* \(unhealthy\)$/m);
    assert.match(await ps('health=unhealthy'), /^bad\|/m);
    assert.doesNotMatch(await ps('health=healthy'), /^bad\|/m);
    const state = (await d.request('GET', '/containers/bad/json')).json();
    assert.equal(state.State.Running, true);
    assert.equal(state.RestartCount, 0);
  });

  test('within the start period failures keep it "starting" without a streak', async () => {
    const r = await d.docker([
      'run',
      '-d',
      '--name',
      'slow',
      '--health-cmd',
      'exit 1',
      '--health-interval',
      '200ms',
      '--health-start-period',
      '60s',
      '--health-start-interval',
      '100ms',
      'busybox',
      'sleep',
      '100000',
    ]);
    assert.equal(r.code, 0, r.stderr);
    await until('probes to have run', async () => ((await health('slow'))!.Log.length >= 3 ? true : undefined));
    const h = (await health('slow'))!;
    assert.equal(h.Status, 'starting');
    assert.equal(h.FailingStreak, 0);
    assert.ok(h.Log.every((e) => e.ExitCode === 1));
    assert.match(await ps(), /^slow\|Up .* \(health: starting\)$/m);
    assert.match(await ps('health=starting'), /^slow\|/m);
  });

  test('a probe past its timeout is killed and counts as a failure with exit -1', async () => {
    const r = await d.docker([
      'run',
      '-d',
      '--name',
      'hang',
      '--health-cmd',
      'echo before-timeout; exec sleep 30',
      '--health-timeout',
      '300ms',
      '--health-interval',
      '200ms',
      '--health-retries',
      '1',
      'busybox',
      'sleep',
      '100000',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const h = await healthIs('hang', 'unhealthy');
    const entry = h.Log.at(-1)!;
    assert.equal(entry.ExitCode, -1);
    assert.equal(entry.Output, 'Health check exceeded timeout (300ms): before-timeout\n');
    const took = Date.parse(entry.End) - Date.parse(entry.Start);
    assert.ok(took >= 250 && took < 5000, `probe took ${took} ms`);
    // Killed probes do not linger in the container.
    const top = await d.docker(['top', 'hang']);
    const sleepers = top.stdout.split('\n').filter((l) => /sleep 30$/.test(l));
    assert.ok(sleepers.length <= 1, top.stdout);
  });

  test('checks stop with the container, restart with it, and the state survives a daemon restart', async () => {
    const r = await d.docker([
      'run',
      '-d',
      '--name',
      'cycle',
      '--health-cmd',
      'true',
      '--health-interval',
      '200ms',
      'busybox',
      'sleep',
      '100000',
    ]);
    assert.equal(r.code, 0, r.stderr);
    await healthIs('cycle', 'healthy');
    assert.equal((await d.docker(['stop', '-t', '0', 'cycle'])).code, 0);
    const stopped = (await health('cycle'))!;
    await sleep(800);
    assert.deepEqual((await health('cycle'))!.Log, stopped.Log, 'no probes while stopped');
    assert.equal((await d.docker(['start', 'cycle'])).code, 0);
    assert.equal((await health('cycle'))!.Status, 'starting', 'a new run starts over');
    await healthIs('cycle', 'healthy');

    assert.equal((await d.docker(['stop', '-t', '0', 'cycle'])).code, 0);
    const before = (await health('cycle'))!;
    // Containers still running would each hold the daemon's shutdown for the stop timeout.
    await d.docker(['rm', '-f', 'good', 'bad', 'slow', 'hang']);
    await d.stop();
    await d.restart();
    const after = await health('cycle');
    assert.deepEqual(after, before, 'State.Health is persisted with the record');
  });

  test('no health check: none configured, or --no-healthcheck', async () => {
    assert.equal((await d.docker(['run', '-d', '--name', 'plain', 'busybox', 'sleep', '100000'])).code, 0);
    assert.equal((await d.docker(['run', '-d', '--name', 'off', '--no-healthcheck', 'busybox', 'sleep', '100000'])).code, 0);
    await sleep(300);
    assert.equal(await health('plain'), undefined);
    assert.equal(await health('off'), undefined);
    assert.match(await ps('health=none'), /^plain\|/m);
    assert.doesNotMatch(await ps(), /^plain\|.*\(/m);
  });
});
