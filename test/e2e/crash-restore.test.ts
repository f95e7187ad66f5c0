// Issue 3, parts 6 and 7: restart policies across daemon restarts and crash-safe state. engined is
// killed -9 (or stopped with SIGTERM) with containers in every state, then started again on the same
// directories; what `docker ps -a`, inspect, logs and containerd show afterwards is checked.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { isNotFound } from '../../src/errors.ts';
import { jsonAny, SPEC_TYPE_URL, SupervisorClient } from '../../src/supervisor/client.ts';
import { ensureBusyboxImage } from '../fixtures/busybox-image.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PS_FORMAT = '{{.ID}} {{.Names}} {{.Image}} {{.Command}}';
const TICKER = 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done';
/** Hundreds of lines a second: bytes are in flight between FIFO and log file at any instant. */
const FAST_TICKER = 'i=0; while true; do echo tick $i; i=$((i+1)); usleep 2000; done';

function supervisorOf(d: TestDaemon): SupervisorClient {
  return new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
}

async function inspect(d: TestDaemon, ref: string): Promise<any> {
  const r = await d.request('GET', `/containers/${ref}/json`);
  assert.equal(r.status, 200, `inspect ${ref}: ${r.text()}`);
  return r.json();
}

async function runDetached(d: TestDaemon, args: string[]): Promise<string> {
  const r = await d.docker(['run', '-d', ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function mountedAt(path: string): boolean {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[1] === path);
}

async function taskGone(client: SupervisorClient, id: string): Promise<boolean> {
  try {
    await client.tasks.get(id);
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

function integrityCheck(db: DatabaseSync): string[] {
  return (db.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>).map((r) => r.integrity_check);
}

/** The tick numbers in a ticker's log, in order. */
function ticks(out: string): number[] {
  return [...out.matchAll(/^tick (\d+)$/gm)].map((m) => Number(m[1]));
}

function assertContiguous(nums: number[], what: string): void {
  assert.ok(nums.length > 0, `${what}: no ticks`);
  nums.forEach((n, i) =>
    assert.equal(n, i, `${what}: tick ${i} missing or out of order (got ${nums.slice(Math.max(0, i - 3), i + 3).join(',')})`),
  );
}

function assertAtMostOneGap(nums: number[], what: string): void {
  assert.ok(nums.length > 0, `${what}: no ticks`);
  assert.equal(nums[0], 0, `${what}: starts at tick 0`);
  const gaps = nums
    .slice(1)
    .map((n, i) => n - nums[i]!)
    .filter((d) => d !== 1);
  assert.ok(
    gaps.every((d) => d > 1),
    `${what}: ticks out of order or repeated`,
  );
  assert.ok(gaps.length <= 1, `${what}: ${gaps.length} gaps`);
  assert.ok((gaps[0] ?? 0) < 2000, `${what}: gap of ${gaps[0]} ticks`);
}

/** A container and its running task made behind the daemon's back, as a crashed daemon might leave. */
async function createOrphan(d: TestDaemon, id: string): Promise<void> {
  const client = supervisorOf(d);
  try {
    const image = await ensureBusyboxImage(client);
    const rootfs = await client.withLease(async (lease) => {
      const mounts = await client.snapshots.prepare({ key: id, parent: image.chainId }, { lease });
      const spec = {
        ociVersion: '1.0.2-dev',
        process: { terminal: false, user: { uid: 0, gid: 0 }, args: ['sleep', '1000'], cwd: '/', env: ['PATH=/bin:/usr/bin'] },
        root: { path: 'rootfs' },
        hostname: 'orphan',
        mounts: [{ destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] }],
        linux: { namespaces: [{ type: 'pid' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }, { type: 'network' }] },
      };
      await client.containers.create(
        {
          id,
          runtime: { name: 'io.containerd.runc.v2', options: client.runcOptions({ root: join(d.execRoot, 'runc') }) },
          spec: jsonAny(SPEC_TYPE_URL, spec),
          snapshotter: 'overlayfs',
          snapshot_key: id,
        },
        { lease },
      );
      return mounts;
    });
    await client.tasks.create({ container_id: id, rootfs });
    await client.tasks.start(id);
    assert.equal((await client.tasks.get(id)).status, 'RUNNING');
  } finally {
    client.close();
  }
}

/** Kills every task of the daemon's namespace (a live-restore daemon leaves them running at stop). */
async function killAllTasks(d: TestDaemon): Promise<void> {
  if (!existsSync(join(d.execRoot, 'containerd', 'containerd.sock'))) return;
  const client = supervisorOf(d);
  try {
    for (const t of await client.tasks.list().catch(() => [])) {
      await client.tasks.kill(t.id, 9, { all: true }).catch(() => undefined);
      await Promise.race([client.tasks.wait(t.id).catch(() => undefined), sleep(3000)]);
      await client.tasks.delete(t.id).catch(() => undefined);
    }
  } finally {
    client.close();
  }
}

describe('kill -9 of the daemon without live-restore', () => {
  let d: TestDaemon;
  const ids: Record<string, string> = {};
  const before9: Record<string, any> = {};
  let psBefore = '';
  const orphan = `orphan${Date.now()}`;

  before(async () => {
    d = await startDaemon({ args: ['--shutdown-timeout', '2'] });
    await loadBusybox(d);
    const exited0 = await d.docker(['run', '--name', 'ex0', 'busybox', 'sh', '-c', 'echo hello-out; echo hello-err >&2']);
    assert.equal(exited0.code, 0, exited0.stderr);
    const exited3 = await d.docker(['run', '--name', 'ex3', 'busybox', 'sh', '-c', 'echo three; exit 3']);
    assert.equal(exited3.code, 3, exited3.stderr);
    assert.equal((await d.docker(['create', '--name', 'fresh', 'busybox', 'true'])).code, 0);
    // `sleep` as PID 1 ignores SIGTERM: a short stop timeout keeps the stop at start-up quick.
    const sleeper = ['--stop-timeout', '1', 'busybox', 'sleep', '1000'];
    ids.plain = await runDetached(d, ['--name', 'plain', ...sleeper]);
    ids.always = await runDetached(d, ['--name', 'always', '--restart', 'always', ...sleeper]);
    ids.unless = await runDetached(d, ['--name', 'unless', '--restart', 'unless-stopped', ...sleeper]);
    ids.unlessStopped = await runDetached(d, ['--name', 'unless-stopped-by-user', '--restart', 'unless-stopped', ...sleeper]);
    ids.alwaysStopped = await runDetached(d, ['--name', 'always-stopped-by-user', '--restart', 'always', ...sleeper]);
    ids.onFailure = await runDetached(d, ['--name', 'onfail', '--restart', 'on-failure', ...sleeper]);
    ids.onFailureStopped = await runDetached(d, ['--name', 'onfail-stopped-by-user', '--restart', 'on-failure', ...sleeper]);
    ids.onFailureOk = await runDetached(d, ['--name', 'onfail-ok', '--restart', 'on-failure:3', 'busybox', 'true']);
    ids.autoRemove = await runDetached(d, ['--name', 'autorm', '--rm', ...sleeper]);
    ids.doomed = await runDetached(d, ['--name', 'doomed', 'busybox', 'true']);
    assert.equal(
      (await d.docker(['stop', '-t', '0', 'unless-stopped-by-user', 'always-stopped-by-user', 'onfail-stopped-by-user'])).code,
      0,
    );
    await until('onfail-ok and doomed exited', async () => {
      const a = await inspect(d, 'onfail-ok');
      const b = await inspect(d, 'doomed');
      return a.State.Status === 'exited' && b.State.Status === 'exited' ? true : undefined;
    });
    await createOrphan(d, orphan);

    for (const name of [
      'ex0',
      'ex3',
      'fresh',
      'plain',
      'always',
      'unless',
      'unless-stopped-by-user',
      'always-stopped-by-user',
      'onfail',
      'onfail-stopped-by-user',
      'onfail-ok',
      'doomed',
      'autorm',
    ]) {
      before9[name] = await inspect(d, name);
    }
    const ps = await d.docker(['ps', '-a', '--no-trunc', '--format', PS_FORMAT]);
    assert.equal(ps.code, 0, ps.stderr);
    psBefore = ps.stdout;

    await d.kill9();

    // engine.db is sound after the kill; then simulate a crash half-way through removing `doomed`.
    const db = new DatabaseSync(join(d.dataRoot, 'engine.db'));
    try {
      assert.deepEqual(integrityCheck(db), ['ok']);
      const changed = db
        .prepare(
          `UPDATE containers SET data = json_set(data, '$.Internal.removing', json('true'), '$.State.Status', 'removing') WHERE id = ?`,
        )
        .run(ids.doomed);
      assert.equal(changed.changes, 1);
    } finally {
      db.close();
    }
    await d.restart();
  });

  after(async () => d?.cleanup());

  test('docker ps -a shows exactly what it showed before (minus the interrupted removal and --rm)', async () => {
    // The --rm container runs (true to the host) until its stop at start-up is over, then goes.
    const removed = await d.request('POST', `/containers/${ids.autoRemove}/wait?condition=removed`, { timeoutMs: 30_000 });
    assert.ok([200, 404].includes(removed.status), removed.text());
    const ps = await d.docker(['ps', '-a', '--no-trunc', '--format', PS_FORMAT]);
    assert.equal(ps.code, 0, ps.stderr);
    const expected = psBefore
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith(ids.doomed!) && !l.startsWith(ids.autoRemove!))
      .join('\n');
    assert.equal(ps.stdout.trim(), expected);
    for (const name of ['ex0', 'ex3', 'fresh', 'onfail-ok', 'unless-stopped-by-user', 'onfail-stopped-by-user']) {
      const now = await inspect(d, name);
      const was = before9[name];
      assert.equal(now.Id, was.Id);
      assert.deepEqual(now.State, was.State, `${name}: state changed across the crash`);
      assert.equal(now.RestartCount, was.RestartCount);
    }
    assert.equal((await inspect(d, 'ex3')).State.ExitCode, 3);
    assert.equal((await inspect(d, 'fresh')).State.Status, 'created');
  });

  test('exited containers keep their logs', async () => {
    const logs = await d.docker(['logs', 'ex0']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout, 'hello-out\n');
    assert.equal(logs.stderr, 'hello-err\n');
    assert.equal((await d.docker(['logs', 'ex3'])).stdout, 'three\n');
  });

  test('a container that was running is stopped at start-up: exited, no task, no namespace left', async () => {
    // Running (being stopped: its stop timeout is 1 s) until the stop at start-up is over.
    const waited = await d.request('POST', '/containers/plain/wait', { timeoutMs: 30_000 });
    assert.equal(waited.status, 200, waited.text());
    const plain = await inspect(d, 'plain');
    assert.equal(plain.State.Status, 'exited');
    assert.equal(plain.State.Running, false);
    assert.equal(plain.State.Pid, 0);
    assert.equal(plain.State.ExitCode, 137);
    assert.notEqual(plain.State.FinishedAt, '0001-01-01T00:00:00Z');
    assert.ok(!pidAlive(before9.plain.State.Pid), 'the old process is gone');
    const client = supervisorOf(d);
    try {
      assert.ok(await taskGone(client, ids.plain!), 'no task left in containerd');
      assert.deepEqual(
        (await client.containers.list([`id==${ids.plain}`])).map((c) => c.id),
        [],
        'no containerd container left',
      );
    } finally {
      client.close();
    }
    const ns = join(d.execRoot, 'netns', ids.plain!);
    assert.ok(!existsSync(ns), 'netns file removed');
    assert.ok(!mountedAt(ns), 'netns unmounted');
    assert.equal(plain.NetworkSettings.SandboxKey, '');
    // An AutoRemove container stopped at start-up is removed, as if it had exited normally.
    await until('the AutoRemove container removed', async () =>
      (await d.request('GET', `/containers/${ids.autoRemove}/json`)).status === 404 ? true : undefined,
    );
  });

  test('restart policies at start-up: always, unless-stopped and on-failure come back; user stops are honoured', async () => {
    for (const name of ['always', 'unless', 'onfail', 'always-stopped-by-user']) {
      const i = await until(`${name} running again`, async () => {
        const x = await inspect(d, name);
        return x.State.Running ? x : undefined;
      });
      assert.notEqual(i.State.Pid, before9[name].State.Pid, `${name} runs a new process`);
      assert.ok(pidAlive(i.State.Pid));
      assert.ok(!pidAlive(before9[name].State.Pid), `${name}: the old process is gone`);
    }
    for (const name of ['unless-stopped-by-user', 'onfail-stopped-by-user'])
      assert.equal((await inspect(d, name)).State.Status, 'exited', name);
    const ok = await inspect(d, 'onfail-ok');
    assert.equal(ok.State.Status, 'exited');
    assert.equal(ok.State.ExitCode, 0);
    assert.equal((await inspect(d, 'plain')).State.Status, 'exited', 'no policy: stays exited');
  });

  test('a removal interrupted by the crash is finished at start-up', async () => {
    assert.equal((await d.request('GET', `/containers/${ids.doomed}/json`)).status, 404);
    assert.ok(!existsSync(join(d.dataRoot, 'containers', ids.doomed!)), 'container directory removed');
    const client = supervisorOf(d);
    try {
      await assert.rejects(client.snapshots.stat(ids.doomed!), (e: unknown) => isNotFound(e), 'snapshot removed');
    } finally {
      client.close();
    }
    // The name is free again.
    assert.equal((await d.docker(['create', '--name', 'doomed', 'busybox', 'true'])).code, 0);
  });

  test('a containerd container the database does not know is removed at start-up', async () => {
    const client = supervisorOf(d);
    try {
      // Removed by the reconciliation that runs in the background after the start.
      const snapshotGone = () =>
        client.snapshots.stat(orphan).then(
          () => false,
          (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
        );
      await until('the orphan removed', async () => ((await taskGone(client, orphan)) && (await snapshotGone()) ? true : undefined));
      assert.ok(await taskGone(client, orphan), 'orphan task removed');
      assert.deepEqual(
        (await client.containers.list([`id==${orphan}`])).map((c) => c.id),
        [],
        'orphan container removed',
      );
      await assert.rejects(client.snapshots.stat(orphan), (e: unknown) => isNotFound(e), 'orphan snapshot removed');
      // Only the daemon's own containers are left in containerd.
      const known = new Set((await d.docker(['ps', '-aq', '--no-trunc'])).stdout.trim().split('\n'));
      for (const c of await client.containers.list()) assert.ok(known.has(c.id), `unknown containerd container ${c.id}`);
    } finally {
      client.close();
    }
  });

  test('SIGTERM stops running containers within shutdown-timeout; always comes back after the restart', async () => {
    const trapper = await runDetached(d, ['--name', 'trapper', 'busybox', 'sh', '-c', 'trap "" TERM; sleep 1000']);
    const always = await inspect(d, 'always');
    assert.equal(always.State.Running, true);
    const t0 = Date.now();
    const code = await d.stop('SIGTERM', 20_000);
    const took = Date.now() - t0;
    assert.equal(code, 0, d.output);
    assert.ok(took < 8000, `shutdown took ${took} ms with --shutdown-timeout 2`);
    assert.ok(took >= 1500, `shutdown took only ${took} ms: the SIGTERM-ignoring container was not given its grace period`);
    await d.restart();
    const i = await inspect(d, trapper);
    assert.equal(i.State.Status, 'exited');
    assert.equal(i.State.ExitCode, 137);
    const client = supervisorOf(d);
    try {
      assert.ok(await taskGone(client, trapper));
    } finally {
      client.close();
    }
    const back = await until('always running after a graceful restart', async () => {
      const x = await inspect(d, 'always');
      return x.State.Running ? x : undefined;
    });
    assert.notEqual(back.State.Pid, always.State.Pid);
    // Graceful stops are not user stops: unless-stopped comes back too.
    await until('unless running after a graceful restart', async () => ((await inspect(d, 'unless')).State.Running ? true : undefined));
  });

  test('engine.db passes integrity_check after a clean stop', async () => {
    await d.stop();
    const db = new DatabaseSync(join(d.dataRoot, 'engine.db'), { readOnly: true });
    try {
      assert.deepEqual(integrityCheck(db), ['ok']);
    } finally {
      db.close();
    }
  });
});

describe('live-restore', () => {
  let d: TestDaemon;
  let id = '';
  let pid = 0;
  let fastPid = 0;

  before(async () => {
    d = await startDaemon({ args: ['--live-restore'] });
    await loadBusybox(d);
    id = await runDetached(d, ['--name', 'ticker', 'busybox', 'sh', '-c', TICKER]);
    pid = (await inspect(d, id)).State.Pid;
    fastPid = (await inspect(d, await runDetached(d, ['--name', 'fast', 'busybox', 'sh', '-c', FAST_TICKER]))).State.Pid;
  });

  after(async () => {
    if (d) {
      await d.docker(['rm', '-f', 'ticker', 'fast']).catch(() => undefined);
      await killAllTasks(d);
      await d.cleanup();
    }
  });

  async function logsOf(name = 'ticker'): Promise<number[]> {
    const r = await d.docker(['logs', name]);
    assert.equal(r.code, 0, r.stderr);
    return ticks(r.stdout);
  }

  async function downAndBack(how: 'kill9' | 'sigterm'): Promise<void> {
    const last = await until('ticks in the log', async () => {
      const t = await logsOf();
      return t.length >= 3 ? t[t.length - 1]! : undefined;
    });
    const containerdPid = Number(readFileSync(join(d.execRoot, 'containerd', 'containerd.pid'), 'utf8'));
    if (how === 'kill9') await d.kill9();
    else assert.equal(await d.stop('SIGTERM', 20_000), 0, d.output);
    // While the daemon is down, the container and the containerd it started keep running.
    await sleep(1500);
    assert.ok(pidAlive(pid), 'container process alive while the daemon is down');
    assert.ok(pidAlive(containerdPid), 'containerd alive while the daemon is down');
    await d.restart();
    assert.equal(
      Number(readFileSync(join(d.execRoot, 'containerd', 'containerd.pid'), 'utf8')),
      containerdPid,
      'the same containerd is adopted',
    );
    const i = await inspect(d, id);
    assert.equal(i.State.Running, true);
    assert.equal(i.State.Status, 'running');
    assert.equal(i.State.Pid, pid);
    // Lines written while the daemon was down (~7 at 0.2 s) are in the log, then new ones follow.
    const seen = await until('ticks written while down and after', async () => {
      const t = await logsOf();
      return t[t.length - 1]! >= last + 12 ? t : undefined;
    });
    assertContiguous(seen, `after ${how}`);
    assert.equal((await inspect(d, 'fast')).State.Pid, fastPid);
    // A fast writer's lines that engined had read but not yet written when it was SIGKILLed are
    // lost with its memory (dockerd loses its copy buffer the same way); at most that one gap, and
    // nothing after it: what the container wrote while the daemon was down waited in the pipe.
    assertAtMostOneGap(await logsOf('fast'), `fast writer after ${how}`);
  }

  test('a running container survives kill -9 of the daemon and is re-attached (same pid, logs continue)', async () => {
    await downAndBack('kill9');
  });

  test('... and a graceful stop (SIGTERM) of the daemon', async () => {
    await downAndBack('sigterm');
  });

  test('logs -f follows a re-attached container; stop and wait work', async () => {
    const follow = d.docker(['logs', '-f', '--since', '0', 'ticker'], { timeoutMs: 30_000 });
    const wait = d.request('POST', `/containers/${id}/wait`, { timeoutMs: 30_000 });
    await sleep(500);
    const stop = await d.docker(['stop', '-t', '1', 'ticker']);
    assert.equal(stop.code, 0, stop.stderr);
    const w = await wait;
    assert.equal(w.status, 200, w.text());
    const i = await inspect(d, id);
    assert.equal(i.State.Status, 'exited');
    assert.equal(i.State.ExitCode, 137, 'sh as PID 1 ignores SIGTERM; the stop ends with SIGKILL');
    assert.deepEqual(w.json(), { StatusCode: i.State.ExitCode, Error: null });
    assert.ok(!pidAlive(pid));
    const followed = await follow;
    assert.equal(followed.code, 0, 'logs -f ends when the container stops');
    assertContiguous(ticks(followed.stdout), 'logs -f');
    const client = supervisorOf(d);
    try {
      assert.ok(await taskGone(client, id));
    } finally {
      client.close();
    }
  });
});
