// Issue 6, volumes: the local driver through the docker CLI and raw HTTP — named and anonymous
// volumes from -v, --mount and image VOLUMEs, persistence across containers and daemon restarts,
// copy-up, rm -v, in-use conflicts, prune, DriverOpts mounts (tmpfs), events.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const ANON = 'com.docker.volume.anonymous';

function isMounted(path: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === path);
}

describe('volumes', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  const ok = async (args: string[]) => {
    const r = await d.docker(args);
    assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const inspectVolume = async (name: string) => JSON.parse(await ok(['volume', 'inspect', name]))[0];

  test('create, inspect, ls with filters, invalid names, 404', async () => {
    await ok(['volume', 'create', '--label', 'env=prod', 'v-labelled']);
    await ok(['volume', 'create', 'v-plain']);
    const v = await inspectVolume('v-labelled');
    assert.equal(v.Name, 'v-labelled');
    assert.equal(v.Driver, 'local');
    assert.equal(v.Scope, 'local');
    assert.equal(v.Mountpoint, join(d.dataRoot, 'volumes', 'v-labelled', '_data'));
    assert.deepEqual(v.Labels, { env: 'prod' });
    assert.match(v.CreatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
    assert.equal(v.UsageData, undefined);
    assert.equal(statSync(v.Mountpoint).isDirectory(), true);

    assert.equal((await ok(['volume', 'ls', '-q', '--filter', 'label=env=prod'])).trim(), 'v-labelled');
    assert.equal((await ok(['volume', 'ls', '-q', '--filter', 'name=plain'])).trim(), 'v-plain');
    const dangling = (await ok(['volume', 'ls', '-q', '--filter', 'dangling=true'])).split('\n');
    assert.ok(dangling.includes('v-plain') && dangling.includes('v-labelled'));
    const list = await d.request(
      'GET',
      `/v1.51/volumes?filters=${encodeURIComponent(JSON.stringify({ driver: ['local'], name: ['v-'] }))}`,
    );
    assert.equal(list.status, 200);
    assert.deepEqual(list.json().Warnings, []);
    assert.deepEqual(
      list
        .json()
        .Volumes.map((x: { Name: string }) => x.Name)
        .sort(),
      ['v-labelled', 'v-plain'],
    );
    assert.equal((await d.request('GET', `/v1.51/volumes?filters=${encodeURIComponent('{"bogus":["x"]}')}`)).status, 400);

    const generated = await d.request('POST', '/v1.51/volumes/create', { body: {} });
    assert.equal(generated.status, 201);
    assert.match(generated.json().Name, /^[0-9a-f]{64}$/);
    for (const bad of ['../escape', 'a/b', '.hidden', 'x']) {
      const r = await d.request('POST', '/v1.51/volumes/create', { body: { Name: bad } });
      assert.equal(r.status, 400, bad);
      assert.match(r.json().message, /includes invalid characters for a local volume name/);
    }
    assert.equal(existsSync(join(d.dataRoot, 'escape')), false);
    const missing = await d.request('GET', '/v1.51/volumes/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.json().message, 'get nope: no such volume');
    assert.equal((await d.request('DELETE', '/v1.51/volumes/nope')).status, 404);
    assert.equal((await d.request('DELETE', '/v1.51/volumes/nope?force=1')).status, 204);
    await ok(['volume', 'rm', 'v-labelled', 'v-plain', generated.json().Name]);
  });

  test('data persists across containers and a daemon restart; inspect lists the mount', async () => {
    await ok(['run', '--name', 'writer', '-v', 'data:/data', 'busybox', 'sh', '-c', 'echo x > /data/f']);
    const mounts = JSON.parse(await ok(['inspect', 'writer']))[0].Mounts;
    assert.deepEqual(mounts, [
      {
        Type: 'volume',
        Name: 'data',
        Source: join(d.dataRoot, 'volumes', 'data', '_data'),
        Destination: '/data',
        Driver: 'local',
        Mode: 'z',
        RW: true,
        Propagation: '',
      },
    ]);
    assert.equal(await ok(['run', '--rm', '-v', 'data:/d:ro', 'busybox', 'cat', '/d/f']), 'x\n');
    const ro = await d.docker(['run', '--rm', '-v', 'data:/d:ro', 'busybox', 'sh', '-c', 'echo y > /d/g']);
    assert.notEqual(ro.code, 0, 'a :ro volume must not be writable');
    await d.stop();
    await d.restart();
    assert.equal((await inspectVolume('data')).Name, 'data');
    assert.equal(await ok(['run', '--rm', '-v', 'data:/data', 'busybox', 'cat', '/data/f']), 'x\n');
    await ok(['rm', 'writer']);
  });

  test('copy-up: a new volume gets the image content at its path (owner and mode too), unless nocopy', async () => {
    assert.match(await ok(['run', '--rm', '-v', 'etcvol:/etc', 'busybox', 'cat', '/etc/passwd']), /^root:x:0:0:/);
    assert.match(readFileSync(join(d.dataRoot, 'volumes', 'etcvol', '_data', 'passwd'), 'utf8'), /^root:/);
    await ok(['run', '--rm', '-v', 'rootvol:/root', 'busybox', 'true']);
    assert.equal(statSync(join(d.dataRoot, 'volumes', 'rootvol', '_data')).mode & 0o777, 0o700, 'the volume root takes the mode of /root');
    // Not empty any more: a second use copies nothing over what is there.
    assert.equal(
      await ok(['run', '--rm', '-v', 'etcvol:/etc', 'busybox', 'sh', '-c', 'echo changed > /etc/passwd; cat /etc/passwd']),
      'changed\n',
    );
    assert.equal(await ok(['run', '--rm', '-v', 'etcvol:/etc', 'busybox', 'cat', '/etc/passwd']), 'changed\n');
    const nocopy = await d.docker([
      'run',
      '--rm',
      '--mount',
      'type=volume,src=nocopyvol,dst=/etc,volume-nocopy',
      'busybox',
      'cat',
      '/etc/passwd',
    ]);
    assert.notEqual(nocopy.code, 0);
    assert.match(nocopy.stderr, /No such file/);
    await ok(['volume', 'rm', 'etcvol', 'rootvol', 'nocopyvol']);
  });

  test('anonymous volumes: -v /path, --mount without source, image VOLUMEs; rm -v and --rm remove them', async () => {
    await ok(['create', '--name', 'anon', '-v', '/anon1', '--mount', 'type=volume,dst=/anon2', 'busybox', 'true']);
    const mounts = JSON.parse(await ok(['inspect', 'anon']))[0].Mounts as Array<{ Name: string; Destination: string; Type: string }>;
    assert.deepEqual(mounts.map((m) => [m.Type, m.Destination]).sort(), [
      ['volume', '/anon1'],
      ['volume', '/anon2'],
    ]);
    for (const m of mounts) {
      assert.match(m.Name, /^[0-9a-f]{64}$/);
      assert.deepEqual((await inspectVolume(m.Name)).Labels, { [ANON]: '' });
    }
    await ok(['rm', '-v', 'anon']);
    for (const m of mounts)
      assert.equal((await d.request('GET', `/v1.51/volumes/${m.Name}`)).status, 404, 'rm -v removes anonymous volumes');

    await ok(['create', '--name', 'keep', '-v', '/kept', '-v', 'named-kept:/named', 'busybox', 'true']);
    const kept = JSON.parse(await ok(['inspect', 'keep']))[0].Mounts as Array<{ Name: string; Destination: string }>;
    await ok(['rm', 'keep']);
    for (const m of kept) assert.equal((await d.request('GET', `/v1.51/volumes/${m.Name}`)).status, 200, 'rm without -v keeps volumes');
    await ok(['run', '--rm', '-v', '/gone', '-v', 'named-kept:/named', 'busybox', 'true']);
    const names = (await ok(['volume', 'ls', '-q'])).split('\n').filter(Boolean);
    assert.equal(names.filter((n) => /^[0-9a-f]{64}$/.test(n)).length, 1, '--rm removed its anonymous volume (only /kept remains)');
    assert.ok(names.includes('named-kept'));

    // An image VOLUME: a fresh anonymous volume per container, filled from the image.
    await ok(['run', '--name', 'base', 'busybox', 'sh', '-c', 'mkdir /seed && echo from-image > /seed/file']);
    await ok(['commit', '--change', 'VOLUME /seed', 'base', 'volimage:1']);
    await ok(['rm', 'base']);
    assert.equal(await ok(['run', '--name', 'fromimg', 'volimage:1', 'cat', '/seed/file']), 'from-image\n');
    const im = JSON.parse(await ok(['inspect', 'fromimg']))[0].Mounts;
    assert.equal(im.length, 1);
    assert.equal(im[0].Destination, '/seed');
    assert.equal(im[0].Type, 'volume');
    assert.equal(readFileSync(join(d.dataRoot, 'volumes', im[0].Name, '_data', 'file'), 'utf8'), 'from-image\n');
    await ok(['rm', '-v', 'fromimg']);
    await ok(['rmi', 'volimage:1']);
    await ok(['volume', 'prune', '-af']);
  });

  test('a volume in use cannot be removed (409, even with force); prune keeps used and named volumes', async () => {
    const id = (await ok(['create', '-v', 'busy:/b', 'busybox', 'true'])).trim();
    const rm = await d.request('DELETE', '/v1.51/volumes/busy');
    assert.equal(rm.status, 409);
    assert.equal(rm.json().message, `remove busy: volume is in use - [${id}]`);
    assert.equal((await d.request('DELETE', '/v1.51/volumes/busy?force=1')).status, 409);
    const cli = await d.docker(['volume', 'rm', 'busy']);
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr, /volume is in use/);

    await ok(['volume', 'create', 'named-unused']);
    const anon = (await d.request('POST', '/v1.51/volumes/create', { body: { Labels: { [ANON]: '' } } })).json().Name;
    await ok(['run', '--rm', '-v', `${anon}:/a`, 'busybox', 'sh', '-c', 'head -c 1000 /dev/zero > /a/f']);
    const pruned = await d.request('POST', '/v1.51/volumes/prune');
    assert.equal(pruned.status, 200);
    assert.deepEqual(pruned.json(), { VolumesDeleted: [anon], SpaceReclaimed: 1000 });
    const all = await d.request('POST', `/v1.51/volumes/prune?filters=${encodeURIComponent('{"all":["true"]}')}`);
    assert.ok(all.json().VolumesDeleted.includes('named-unused'));
    assert.ok(!all.json().VolumesDeleted.includes('busy'));
    assert.equal((await d.request('GET', '/v1.51/volumes/busy')).status, 200);
    await ok(['rm', id]);
    await ok(['volume', 'rm', 'busy']);
  });

  test('DriverOpts type=tmpfs: mounted at first use with its options, unmounted when no container runs', async () => {
    await ok(['volume', 'create', '--opt', 'type=tmpfs', '--opt', 'device=tmpfs', '--opt', 'o=size=10m', 'tv']);
    const v = await inspectVolume('tv');
    assert.deepEqual(v.Options, { type: 'tmpfs', device: 'tmpfs', o: 'size=10m' });
    assert.equal(isMounted(v.Mountpoint), false, 'not mounted before first use');
    const out = await ok([
      'run',
      '--rm',
      '-v',
      'tv:/t',
      'busybox',
      'sh',
      '-c',
      'echo hi > /t/f; df -k /t | tail -n 1; grep " /t " /proc/mounts',
    ]);
    assert.match(out, /^tmpfs\s+10240\s/m);
    assert.match(out, / \/t tmpfs /);
    assert.equal(isMounted(v.Mountpoint), false, 'unmounted after the container exited');
    const bad = await d.request('POST', '/v1.51/volumes/create', { body: { Name: 'badopt', DriverOpts: { bogus: 'x' } } });
    assert.equal(bad.status, 400);
    await ok(['volume', 'rm', 'tv']);
  });

  test('volume events: create, mount, unmount, destroy', async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    await ok(['volume', 'create', 'evvol']);
    await ok(['run', '--rm', '-v', 'evvol:/e', 'busybox', 'true']);
    await ok(['volume', 'rm', 'evvol']);
    const until = Math.floor(Date.now() / 1000) + 1;
    const r = await d.request(
      'GET',
      `/events?since=${since}&until=${until}&filters=${encodeURIComponent(JSON.stringify({ type: ['volume'], volume: ['evvol'] }))}`,
    );
    assert.equal(r.status, 200);
    const events = r
      .text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e) => e.Action),
      ['create', 'mount', 'unmount', 'destroy'],
    );
    assert.equal(events[1].Actor.Attributes.destination, '/e');
    assert.equal(events[1].Actor.Attributes.driver, 'local');
  });
});
