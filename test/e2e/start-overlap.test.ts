// Issue 16: a start makes the container's network (namespace, veth, ports, /etc files) while
// containerd gets the container and the FIFOs are made, and an exit releases the host side while
// containerd deletes the task. These check what that must not change: a start that fails on either
// side reports the same error and leaves nothing behind (no containerd container or task, no
// namespace, veth or FIFO directory), the container starts later, and an exit leaves nothing either.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { removeDaemonNetworking } from '../helpers/network-teardown.ts';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

const HTTPD = ['httpd', '-f', '-p', '80'];

describe('a start overlapping network and containerd work, and the clean-up after an exit', () => {
  const bridge = `engs${randomBytes(3).toString('hex')}`;
  let d: TestDaemon;
  let ctr: string[];

  before(async () => {
    d = await startDaemon({ env: { ENGINE_DEFAULT_BRIDGE: bridge } });
    await loadBusybox(d);
    ctr = ['--address', join(d.execRoot, 'containerd', 'containerd.sock'), '-n', 'engine'];
  });
  after(async () => {
    if (d) {
      await d.cleanup();
      await removeDaemonNetworking(d.execRoot);
    }
  });

  async function idOf(name: string): Promise<string> {
    const r = await d.docker(['inspect', '-f', '{{.Id}}', name]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim();
  }

  /** What of the container's runs exists on the host and in containerd. */
  async function leftovers(id: string): Promise<string[]> {
    const out: string[] = [];
    if ((await run('ctr', [...ctr, 'containers', 'ls', '-q'])).stdout.split('\n').includes(id)) out.push('containerd container');
    if ((await run('ctr', [...ctr, 'tasks', 'ls', '-q'])).stdout.split('\n').includes(id)) out.push('containerd task');
    if (existsSync(join(d.execRoot, 'netns', id))) out.push('network namespace');
    if (existsSync(join(d.execRoot, 'fifo', id))) out.push('FIFO directory');
    return out;
  }

  async function bridgePorts(): Promise<number> {
    return (await run('ip', ['-o', 'link', 'show', 'master', bridge])).stdout.split('\n').filter(Boolean).length;
  }

  test('a start failing in the network set-up reports it and leaves nothing; the container starts later', async () => {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const a = await d.docker(['run', '-d', '--name', 'holder', '-p', `${port}:80`, 'busybox', ...HTTPD]);
    assert.equal(a.code, 0, a.stderr);
    const b = await d.docker(['create', '--name', 'second', '-p', `${port}:80`, 'busybox', ...HTTPD]);
    assert.equal(b.code, 0, b.stderr);
    const id = b.stdout.trim();
    const s = await d.docker(['start', 'second']);
    assert.notEqual(s.code, 0);
    assert.match(s.stderr, new RegExp(`Bind for 0\\.0\\.0\\.0:${port} failed: port is already allocated`));
    assert.deepEqual(await leftovers(id), []);
    await until('the failed start to release its veth', async () => ((await bridgePorts()) === 1 ? true : undefined), 5000);
    assert.equal((await d.docker(['rm', '-f', 'holder'])).code, 0);
    const again = await d.docker(['start', 'second']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await d.docker(['inspect', '-f', '{{.State.Running}}', 'second'])).stdout.trim(), 'true');
    assert.equal((await d.docker(['rm', '-f', 'second'])).code, 0);
    assert.deepEqual(await leftovers(id), []);
  });

  test('a start failing in containerd (no such executable) leaves nothing; exit code 127 as dockerd', async () => {
    const r = await d.docker(['create', '--name', 'noexec', 'busybox', '/no/such/binary']);
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    const s = await d.docker(['start', 'noexec']);
    assert.notEqual(s.code, 0);
    assert.match(s.stderr, /no such file or directory|executable file not found/);
    assert.equal((await d.docker(['inspect', '-f', '{{.State.ExitCode}}', 'noexec'])).stdout.trim(), '127');
    assert.deepEqual(await leftovers(id), []);
    await until('its veth to go', async () => ((await bridgePorts()) === 0 ? true : undefined), 5000);
    assert.equal((await d.docker(['rm', 'noexec'])).code, 0);
  });

  test('after an exit nothing of the run is left, and the container runs again (bridge and none)', async () => {
    for (const net of ['bridge', 'none']) {
      const name = `exits-${net}`;
      const r = await d.docker(['run', '--name', name, '--network', net, 'busybox', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.stdout, 'out\n');
      assert.equal(r.stderr, 'err\n');
      const id = await idOf(name);
      // `docker run` returned once the exit was recorded, i.e. after its clean-up.
      assert.deepEqual(await leftovers(id), [], net);
      assert.equal(await bridgePorts(), 0, net);
      const again = await d.docker(['start', '-a', name]);
      assert.equal(again.code, 3, again.stderr);
      assert.equal(again.stdout, 'out\n');
      assert.deepEqual(await leftovers(id), [], net);
      assert.equal((await d.docker(['rm', name])).code, 0);
    }
  });

  test('docker run --rm: the exit code comes back and the container is gone with everything of its run', async () => {
    const cidfile = join(d.dir, 'gone.cid');
    const r = await d.docker(['run', '--rm', '--cidfile', cidfile, '--name', 'gone', 'busybox', 'sh', '-c', 'echo bye; exit 5']);
    assert.equal(r.code, 5, r.stderr);
    assert.equal(r.stdout, 'bye\n');
    const id = (await readFile(cidfile, 'utf8')).trim();
    assert.match(id, /^[0-9a-f]{64}$/);
    assert.notEqual((await d.docker(['inspect', 'gone'])).code, 0);
    assert.deepEqual(await leftovers(id), []);
    const snapshots = (await run('ctr', [...ctr, 'snapshots', 'ls'])).stdout;
    assert.equal(
      snapshots.split('\n').some((l) => l.startsWith(`${id} `)),
      false,
      snapshots,
    );
    assert.equal(existsSync(join(d.dataRoot, 'containers', id)), false);
    assert.equal(await bridgePorts(), 0);
  });
});
