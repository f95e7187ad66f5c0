// Volume plugins (issue 14): a test driver found by name in /run/engine/plugins. docker volume
// create -d, -v with --volume-driver, --mount with a driver, data written through containers into
// the plugin's storage, mount/unmount per container, scope, errors passed on, removal.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { TestVolumePlugin } from '../helpers/volume-plugin.ts';

describe('volume plugins', () => {
  let d: TestDaemon;
  let dir: string;
  let plugin: TestVolumePlugin;
  // A unique name: several test daemons may look in /run/engine/plugins at once.
  const name = `testvol${process.pid}`;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-volplugin-'));
    await mkdir('/run/engine/plugins', { recursive: true });
    plugin = new TestVolumePlugin(`/run/engine/plugins/${name}.sock`, join(dir, 'store'), 'global');
    await plugin.start();
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await plugin?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("volume create -d, inspect and ls show the plugin; data goes to the plugin's storage", async () => {
    const c = await d.docker(['volume', 'create', '-d', name, '-o', 'size=1g', 'pv1']);
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual(plugin.volumes.get('pv1')?.opts, { size: '1g' });
    const inspect = JSON.parse((await d.docker(['volume', 'inspect', 'pv1'])).stdout)[0];
    assert.equal(inspect.Driver, name);
    assert.equal(inspect.Scope, 'global');
    const ls = await d.docker(['volume', 'ls', '--filter', `driver=${name}`, '--format', '{{.Driver}} {{.Name}}']);
    assert.equal(ls.stdout.trim(), `${name} pv1`);
    const r = await d.docker(['run', '--rm', '-v', 'pv1:/data', 'busybox', 'sh', '-c', 'echo through-the-plugin > /data/f']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await readFile(join(dir, 'store', 'pv1', 'f'), 'utf8'), 'through-the-plugin\n');
    assert.deepEqual(plugin.volumes.get('pv1')?.mounts.size, 0, 'unmounted after the run');
    assert.ok(plugin.calls.some((x) => x.startsWith('Mount pv1')) && plugin.calls.some((x) => x.startsWith('Unmount pv1')));
  });

  test('--volume-driver for -v, and a driver in --mount, create through the plugin', async () => {
    const r = await d.docker(['run', '--rm', '--volume-driver', name, '-v', 'pv2:/x', 'busybox', 'sh', '-c', 'echo two > /x/t']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(dir, 'store', 'pv2', 't')));
    const m = await d.docker(['run', '--rm', '--mount', `type=volume,src=pv3,dst=/m,volume-driver=${name}`, 'busybox', 'true']);
    assert.equal(m.code, 0, m.stderr);
    assert.ok(plugin.volumes.has('pv3'));
  });

  test("the plugin's errors reach the client; removal goes through the plugin", async () => {
    const bad = await d.docker(['volume', 'create', '-d', name, '-o', 'fail=no-space', 'pv4']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /VolumeDriver\.Create: refusing pv4: no-space/);
    const unknown = await d.docker(['volume', 'create', '-d', 'no-such-plugin', 'pv5']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /error looking up volume plugin no-such-plugin: plugin "no-such-plugin" not found/);
    assert.equal((await d.docker(['volume', 'rm', 'pv1'])).code, 0);
    assert.equal(plugin.volumes.has('pv1'), false);
    assert.ok(!existsSync(join(dir, 'store', 'pv1')));
  });
});
