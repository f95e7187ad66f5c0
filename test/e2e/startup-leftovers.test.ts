// Issue 12: a crash never keeps the daemon from starting. Each test kills the daemon with -9,
// plants one kind of leftover by hand in its roots (busy mounts, half-written files, stale
// sockets, network namespace files, shims and tasks of containers the store does not know),
// starts it again and checks that it serves and that the leftover was cleaned or skipped.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { appendFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { TestVolumePlugin } from '../helpers/volume-plugin.ts';
import { findShims } from '../../src/supervisor/shims.ts';
import { plantOrphanShim, type PlantedShim } from '../helpers/orphan-shim.ts';
import { until } from '../helpers/until.ts';

const mounted = (path: string) =>
  readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[1] === path);

async function sh(cmd: string, args: string[]): Promise<void> {
  const r = await run(cmd, args);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
}

/** A process whose working directory is `dir`: keeps a mount there busy (umount without -l fails). */
function holdBusy(dir: string): ChildProcess {
  return spawn('sleep', ['600'], { cwd: dir, stdio: 'ignore' });
}

describe('start-up after kill -9 with leftovers in the roots', () => {
  let d: TestDaemon;
  const holders: ChildProcess[] = [];
  const shims: PlantedShim[] = [];
  const containerdSock = () => join(d.execRoot, 'containerd', 'containerd.sock');

  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    for (const h of holders) h.kill('SIGKILL');
    for (const s of shims) await s.cleanup();
    await d?.cleanup();
  });

  /** kill -9, plant, start again: the daemon must answer and list its containers. */
  async function crashWith(plant: () => Promise<void>, readyTimeoutMs?: number): Promise<void> {
    await d.kill9();
    await plant();
    await d.spawn();
    await d.waitReady(readyTimeoutMs);
    const ps = await d.request('GET', '/containers/json?all=1');
    assert.equal(ps.status, 200, ps.text());
  }

  test('busy mounts under tmp, a volume and a container directory are detached, nothing deleted through them', async () => {
    const vol = await d.request('POST', '/volumes/create', { body: { Name: 'keep' } });
    assert.equal(vol.status, 201, vol.text());
    const c = await d.request('POST', '/containers/create?name=mnt', { body: { Image: 'busybox', Cmd: ['true'] } });
    assert.equal(c.status, 201, c.text());
    const id = c.json().Id as string;
    const tmpMount = join(d.dataRoot, 'tmp', 'mnt-left');
    const volData = join(d.dataRoot, 'volumes', 'keep', '_data');
    const ctrMount = join(d.dataRoot, 'containers', id, 'mounts', 'shm');
    await crashWith(async () => {
      for (const m of [tmpMount, volData, ctrMount]) {
        await mkdir(m, { recursive: true });
        await sh('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'leftover', m]);
        await writeFile(join(m, 'precious'), 'x');
        holders.push(holdBusy(m));
      }
    });
    assert.ok(!existsSync(tmpMount), 'tmp was emptied');
    // The volume and the container are still there and usable.
    const v = await d.request('GET', '/volumes/keep');
    assert.equal(v.status, 200, v.text());
    const start = await d.request('POST', `/containers/${id}/start`);
    assert.equal(start.status, 204, start.text());
    const rm = await d.request('DELETE', `/containers/${id}?force=1`);
    assert.equal(rm.status, 204, rm.text());
    const vrm = await d.request('DELETE', '/volumes/keep');
    assert.equal(vrm.status, 204, vrm.text());
    assert.ok(!mounted(volData), 'the volume mount was detached when the volume went');
  });

  test('a container whose containerd, shim and processes all died, its rootfs left mounted and busy', async () => {
    const c = await d.request('POST', '/containers/create?name=rootfs', { body: { Image: 'busybox', Cmd: ['sleep', '600'] } });
    assert.equal(c.status, 201, c.text());
    const id = c.json().Id as string;
    assert.equal((await d.request('POST', `/containers/${id}/start`)).status, 204);
    const pid = (await d.request('GET', `/containers/${id}/json`)).json().State.Pid as number;
    const rootfs = join(d.execRoot, 'containerd', 'io.containerd.runtime.v2.task', 'engine', id, 'rootfs');
    assert.ok(mounted(rootfs), `${rootfs} is mounted while the container runs`);
    await crashWith(async () => {
      // Everything dies at once (as in an OOM kill of the lot); the mount stays, held by a process.
      await run('pkill', ['-9', '-f', `containerd --config ${d.execRoot}/`]);
      for (const shim of await findShims(containerdSock())) process.kill(shim.pid, 'SIGKILL');
      process.kill(pid, 'SIGKILL');
      holders.push(holdBusy(rootfs));
    });
    const state = (await d.request('GET', `/containers/${id}/json`)).json().State;
    assert.equal(state.Running, false);
    // It starts again on the same bundle path.
    const again = await d.request('POST', `/containers/${id}/start`);
    assert.equal(again.status, 204, again.text());
    const rm = await d.request('DELETE', `/containers/${id}?force=1`);
    assert.equal(rm.status, 204, rm.text());
  });

  test('half-written pid files, containerd config and a log line cut in the middle', async () => {
    const c = await d.request('POST', '/containers/create?name=logs', { body: { Image: 'busybox', Cmd: ['echo', 'whole line'] } });
    assert.equal(c.status, 201, c.text());
    const id = c.json().Id as string;
    assert.equal((await d.request('POST', `/containers/${id}/start`)).status, 204);
    await d.request('POST', `/containers/${id}/wait`);
    await crashWith(async () => {
      await writeFile(d.pidfile, '12'); // cut short: names no live daemon of ours
      await writeFile(join(d.execRoot, 'containerd', 'containerd.pid'), '');
      // containerd dies too, and its config is left half-written: a new one must be written and started.
      await run('pkill', ['-9', '-f', `containerd --config ${d.execRoot}/`]);
      const toml = join(d.execRoot, 'containerd', 'containerd.toml');
      await writeFile(toml, readFileSync(toml, 'utf8').slice(0, 40));
      const logFile = (await readdir(join(d.dataRoot, 'containers', id))).find((f) => f.endsWith('-json.log'));
      assert.ok(logFile, 'the container has a json-file log');
      await appendFile(join(d.dataRoot, 'containers', id, logFile), '{"log":"half a li');
    });
    assert.equal(readFileSync(d.pidfile, 'utf8').trim(), String(d.pid));
    const logs = await d.docker(['logs', 'logs']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /whole line/);
    const run2 = await d.docker(['run', '--rm', 'busybox', 'echo', 'after']);
    assert.equal(run2.stdout.trim(), 'after', run2.stderr);
  });

  test("stale sockets: the API socket path and containerd's socket", async () => {
    await crashWith(async () => {
      await run('pkill', ['-9', '-f', `containerd --config ${d.execRoot}/`]);
      await until('containerd gone', async () =>
        (await run('pgrep', ['-f', `containerd --config ${d.execRoot}/`])).code === 1 ? true : undefined,
      );
      assert.ok(existsSync(containerdSock()), 'containerd left its socket');
      // Both sockets are still there, and nobody answers on them.
      for (const sock of [d.socket, containerdSock()]) {
        assert.ok(statSync(sock).isSocket(), `${sock} is left`);
        await assert.rejects(new Promise((resolve, reject) => connect(sock).on('connect', resolve).on('error', reject)), {
          code: 'ECONNREFUSED',
        });
      }
    });
    const v = await d.request('GET', '/version');
    assert.equal(v.status, 200, v.text());
  });

  test('a stale volume plugin socket (the plugin died with the daemon) under a running container', async () => {
    const sock = join(d.dir, 'plug.sock');
    const plugin = new TestVolumePlugin(sock, join(d.dir, 'plug-store'));
    await plugin.start();
    try {
      const v = await d.request('POST', '/volumes/create', { body: { Name: 'pv', Driver: sock } });
      assert.equal(v.status, 201, v.text());
      const c = await d.request('POST', '/containers/create?name=onplugin', {
        body: { Image: 'busybox', Cmd: ['sleep', '600'], HostConfig: { Binds: ['pv:/x'] } },
      });
      assert.equal(c.status, 201, c.text());
      const s = await d.request('POST', '/containers/onplugin/start');
      assert.equal(s.status, 204, s.text());
    } finally {
      await plugin.stop();
    }
    await crashWith(async () => {
      // A socket file nobody listens on: what a plugin killed -9 leaves.
      await sh('python3', ['-c', `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(sock)})`]);
      assert.ok(statSync(sock).isSocket());
      // Until containers are restored in the background, the start waits out the dead plugin's
      // activation budget (10 s a call) when the container is stopped and its volume released.
    }, 120_000);
    const vols = await d.request('GET', '/volumes');
    assert.equal(vols.status, 200, vols.text());
    await until(
      'the container is stopped',
      async () => ((await d.request('GET', '/containers/onplugin/json')).json().State.Running === false ? true : undefined),
      30_000,
    );
  });

  test('network namespace files of unknown containers, mounted or not, are removed', async () => {
    const netns = join(d.execRoot, 'netns');
    const plain = join(netns, 'f'.repeat(64));
    const bound = join(netns, 'e'.repeat(64));
    await crashWith(async () => {
      await mkdir(netns, { recursive: true });
      await writeFile(plain, '');
      await writeFile(bound, '');
      await sh('unshare', [`--net=${bound}`, 'true']);
      assert.ok(mounted(bound));
    });
    await until('stale netns files removed', () => (!existsSync(plain) && !existsSync(bound) ? true : undefined), 10_000);
    assert.ok(!mounted(bound), 'the namespace mount was detached');
  });

  test('a containerd container and task the store does not know, and a shim without a task, are ended', async () => {
    const stray = 'stray' + Date.now();
    const ctr = ['-a', containerdSock(), '-n', 'engine'];
    let shim!: PlantedShim;
    await crashWith(async () => {
      await sh('ctr', [...ctr, 'run', '-d', '--snapshotter', 'overlayfs', 'docker.io/library/busybox:latest', stray, 'sleep', '600']);
      shim = await plantOrphanShim(containerdSock(), 'engine', 'f00d'.repeat(16));
      shims.push(shim);
      assert.ok(shim.alive());
    });
    await until('the orphan shim is gone', () => (shim.alive() ? undefined : true), 15_000);
    assert.ok(!existsSync(shim.socket), 'its socket file was removed');
    await until(
      'the stray container is gone',
      async () => {
        const r = await run('ctr', [...ctr, 'c', 'ls', '-q']);
        return r.code === 0 && !r.stdout.includes(stray) ? true : undefined;
      },
      15_000,
    );
  });

  test('a graceful stop ends a shim that serves no task', async () => {
    const shim = await plantOrphanShim(containerdSock(), 'engine', 'beef'.repeat(16));
    shims.push(shim);
    assert.equal(await d.stop(), 0);
    assert.ok(!shim.alive(), 'the shim outlived the stop');
    assert.ok(!existsSync(shim.socket), 'its socket file was removed');
    await d.restart();
  });
});
