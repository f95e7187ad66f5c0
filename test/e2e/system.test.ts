// Issue 6, part 7: /info counters, GET /system/df (raw and through `docker system df [-v]`), and
// `docker system prune [-a] [--volumes]` over the prune endpoints, POST /build/prune included.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { apiSpecMissing, responseSchema, validate } from '../helpers/openapi.ts';

const MB = 1024 * 1024;

describe('system: info counters, df, prune', () => {
  let d: TestDaemon;
  const info = async () => (await d.request('GET', '/info')).json();
  const df = async (query = '') => {
    const r = await d.request('GET', `/system/df${query}`);
    assert.equal(r.status, 200, r.text());
    return r.json();
  };

  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    // The image went into containerd behind the daemon's back: its cache learns of it from
    // containerd's events, which may lag on a busy machine.
    await until('the daemon to see the loaded image', async () => ((await info()).Images === 1 ? true : undefined));
  });
  after(async () => d?.cleanup());

  test('/info counts containers by state and images', async () => {
    const base = await info();
    assert.equal(base.Containers, 0);
    assert.equal(base.Images, 1);
    assert.equal((await d.docker(['run', '-d', '--name', 'running', 'busybox', 'sleep', '100000'])).code, 0);
    assert.equal((await d.docker(['run', '-d', '--name', 'paused', 'busybox', 'sleep', '100000'])).code, 0);
    assert.equal((await d.docker(['pause', 'paused'])).code, 0);
    assert.equal((await d.docker(['run', '--name', 'exited', 'busybox', 'true'])).code, 0);
    assert.equal((await d.docker(['create', '--name', 'created', 'busybox'])).code, 0);
    assert.equal((await d.docker(['tag', 'busybox', 'another:tag'])).code, 0);
    const i = await info();
    assert.deepEqual([i.Containers, i.ContainersRunning, i.ContainersPaused, i.ContainersStopped], [4, 1, 1, 2]);
    // A second tag of the same image is still one image.
    assert.equal(i.Images, 1);
    const cli = await d.docker([
      'info',
      '--format',
      '{{.Containers}} {{.ContainersRunning}} {{.ContainersPaused}} {{.ContainersStopped}} {{.Images}}',
    ]);
    assert.equal(cli.stdout.trim(), '4 1 1 2 1');
    assert.equal((await d.docker(['unpause', 'paused'])).code, 0);
    assert.equal((await d.docker(['stop', '-t', '0', 'paused'])).code, 0);
    const j = await info();
    assert.deepEqual([j.Containers, j.ContainersRunning, j.ContainersPaused, j.ContainersStopped], [4, 1, 0, 3]);
    assert.equal((await d.docker(['rmi', 'another:tag'])).code, 0);
  });

  test('/system/df reports images with shared size and users, containers with sizes, LayersSize', async () => {
    const w = await d.docker(['run', '--name', 'writer', 'busybox', 'dd', 'if=/dev/zero', 'of=/blob', 'bs=1M', 'count=3']);
    assert.equal(w.code, 0, w.stderr);
    const u = await df();
    assert.deepEqual(Object.keys(u).sort(), ['BuildCache', 'Containers', 'Images', 'LayersSize', 'Volumes']);
    assert.deepEqual(u.BuildCache, []);
    assert.ok(Array.isArray(u.Volumes));
    assert.equal(u.Images.length, 1);
    const img = u.Images[0];
    assert.deepEqual(img.RepoTags, ['busybox:latest']);
    assert.equal(img.Containers, 5, 'every container uses busybox');
    assert.ok(img.Size > MB, `busybox unpacked is over 1 MB: ${img.Size}`);
    assert.equal(img.SharedSize, 0);
    assert.equal(u.LayersSize, img.Size, 'one image: its layers are all the layers');
    assert.equal(u.Containers.length, 5);
    const writer = u.Containers.find((c: { Names: string[] }) => c.Names[0] === '/writer');
    assert.ok(writer.SizeRw >= 3 * MB && writer.SizeRw < 4 * MB, `SizeRw ${writer.SizeRw}`);
    assert.equal(writer.SizeRootFs, writer.SizeRw + img.Size);
    const created = u.Containers.find((c: { Names: string[] }) => c.Names[0] === '/created');
    assert.ok(created.SizeRw < 64 * 1024, `a fresh container writes almost nothing: ${created.SizeRw}`);

    // A second image sharing busybox's layer: shared sizes and LayersSize count it once.
    const c = await d.docker(['commit', 'writer', 'withblob:1']);
    assert.equal(c.code, 0, c.stderr);
    const u2 = await df();
    assert.equal(u2.Images.length, 2);
    const bb = u2.Images.find((i: { RepoTags: string[] }) => i.RepoTags.includes('busybox:latest'));
    const wb = u2.Images.find((i: { RepoTags: string[] }) => i.RepoTags.includes('withblob:1'));
    assert.equal(bb.SharedSize, bb.Size);
    assert.equal(wb.SharedSize, bb.Size);
    assert.ok(wb.Size - bb.Size >= 3 * MB);
    assert.equal(wb.Containers, 0);
    assert.equal(u2.LayersSize, wb.Size);

    // type= selects parts (API 1.42+); an unknown one is a 400.
    const only = await df('?type=container');
    assert.deepEqual(Object.keys(only), ['Containers']);
    const two = await df('?type=image&type=volume');
    assert.deepEqual(Object.keys(two).sort(), ['Images', 'LayersSize', 'Volumes']);
    const bad = await d.request('GET', '/system/df?type=bogus');
    assert.equal(bad.status, 400);
    assert.match(bad.json().message, /unknown object type: bogus/);
    // Before 1.42 the type filter does not exist: everything comes back.
    assert.equal(Object.keys((await d.request('GET', '/v1.41/system/df?type=container')).json()).length, 5);
  });

  test('docker system df and df -v print the usage', async () => {
    const r = await d.docker(['system', 'df', '--format', '{{.Type}}|{{.TotalCount}}|{{.Active}}|{{.Size}}|{{.Reclaimable}}']);
    assert.equal(r.code, 0, r.stderr);
    const rows = Object.fromEntries(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => {
          const [t, ...rest] = l.split('|');
          return [t, rest];
        }),
    );
    assert.deepEqual(rows.Images?.slice(0, 2), ['2', '1']);
    assert.deepEqual(rows.Containers?.slice(0, 2), ['5', '1']);
    assert.match(rows.Containers![2]!, /^3\.\d+MB$/);
    assert.ok(rows['Local Volumes']);
    assert.deepEqual(rows['Build Cache']?.slice(0, 2), ['0', '0']);
    const plain = await d.docker(['system', 'df']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^TYPE\s+TOTAL\s+ACTIVE\s+SIZE\s+RECLAIMABLE/);
    const v = await d.docker(['system', 'df', '-v']);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /Images space usage:/);
    assert.match(v.stdout, /^busybox\s+latest\s+[0-9a-f]{12}\s+.*\s5\s*$/m);
    assert.match(v.stdout, /^withblob\s+1\s+[0-9a-f]{12}/m);
    assert.match(v.stdout, /Containers space usage:/);
    assert.match(v.stdout, /\bwriter\s*$/m);
    assert.match(v.stdout, /Local Volumes space usage:/);
    assert.match(v.stdout, /Build cache usage: 0B/);
  });

  test('POST /build/prune with an empty build cache answers an empty report', async () => {
    const r = await d.request('POST', '/build/prune?all=1');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { CachesDeleted: null, SpaceReclaimed: 0 });
  });

  test('docker system prune -f removes stopped containers and dangling images, keeps the rest', async () => {
    // A dangling image: commit an untagged one.
    const dangling = (await d.docker(['commit', 'created'])).stdout.trim();
    assert.match(dangling, /^sha256:[0-9a-f]{64}$/);
    const r = await d.docker(['system', 'prune', '-f']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Deleted Containers:/);
    assert.match(r.stdout, /Total reclaimed space: /);
    const ps = (await d.docker(['ps', '-a', '--format', '{{.Names}}'])).stdout.trim().split('\n');
    assert.deepEqual(ps, ['running']);
    const images = (await d.docker(['images', '--format', '{{.Repository}}:{{.Tag}}'])).stdout.trim().split('\n').sort();
    assert.deepEqual(images, ['busybox:latest', 'withblob:1']);
    const gone = await d.request('GET', `/images/${dangling}/json`);
    assert.equal(gone.status, 404);
  });

  test('docker system prune -af leaves nothing behind (once nothing runs)', async () => {
    assert.equal((await d.docker(['stop', '-t', '0', 'running'])).code, 0);
    const before = await df();
    const r = await d.docker(['system', 'prune', '-af']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Deleted Images:/);
    const m = /Total reclaimed space: ([\d.]+)(k?B|MB)/.exec(r.stdout);
    assert.ok(m, r.stdout);
    const after = await df();
    assert.deepEqual(after.Containers, []);
    assert.deepEqual(after.Images, []);
    assert.equal(after.LayersSize, 0);
    assert.ok(before.LayersSize > 0);
    const i = await info();
    assert.deepEqual([i.Containers, i.Images], [0, 0]);
    assert.equal((await d.docker(['ps', '-aq'])).stdout.trim(), '');
    assert.equal((await d.docker(['images', '-aq'])).stdout.trim(), '');
    await loadBusybox(d);
  });

  test('volumes: df reports their usage; system prune --volumes removes unused anonymous ones', async (t) => {
    if ((await d.request('GET', '/volumes')).status !== 200) {
      t.skip('the volumes endpoints are not there yet');
      return;
    }
    assert.equal((await d.docker(['volume', 'create', 'named-vol'])).code, 0);
    const w = await d.docker([
      'run',
      '--name',
      'volwriter',
      '-v',
      '/anon',
      '-v',
      'named-vol:/named',
      'busybox',
      'sh',
      '-c',
      'dd if=/dev/zero of=/anon/f bs=1k count=300 && dd if=/dev/zero of=/named/f bs=1k count=200',
    ]);
    assert.equal(w.code, 0, w.stderr);
    const u = await df('?type=volume');
    assert.equal(u.Volumes.length, 2);
    const named = u.Volumes.find((v: { Name: string }) => v.Name === 'named-vol');
    const anon = u.Volumes.find((v: { Name: string }) => v.Name !== 'named-vol');
    assert.ok(named.UsageData.Size >= 200 * 1024, JSON.stringify(named));
    assert.ok(anon.UsageData.Size >= 300 * 1024, JSON.stringify(anon));
    assert.equal(named.UsageData.RefCount, 1);
    const v = await d.docker(['system', 'df', '-v']);
    assert.match(v.stdout, /^named-vol\s+1\s+/m);
    assert.equal((await d.docker(['rm', 'volwriter'])).code, 0);
    const r = await d.docker(['system', 'prune', '-af', '--volumes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Deleted Volumes:/);
    const left = (await d.docker(['volume', 'ls', '-q'])).stdout.trim().split('\n');
    // As dockerd since API 1.42: prune takes anonymous volumes only; named ones need `volume prune -a`.
    assert.deepEqual(left, ['named-vol']);
    assert.equal((await d.docker(['volume', 'rm', 'named-vol'])).code, 0);
  });

  test('/system/df, the volume answers and exec inspect conform to the API description', { skip: apiSpecMissing() }, async () => {
    // `nilExitCode`: an exec that has not run has ExitCode null (dockerd's *int), which the description does not say.
    const conforms = async (path: string, schemaPath: string, nilExitCode = false) => {
      const r = await d.request('GET', `/v1.51${path}`);
      assert.equal(r.status, 200, r.text());
      const v = r.json();
      if (nilExitCode) assert.equal(v.ExitCode, null);
      const checked = nilExitCode ? { ...v, ExitCode: 0 } : v;
      assert.deepEqual(validate(checked, responseSchema(schemaPath, 'get', '200')), [], `${path}: ${r.text()}`);
      return v;
    };
    await loadBusybox(d); // the prunes above removed it
    assert.equal((await d.docker(['volume', 'create', '--label', 'k=v', 'schema-vol'])).code, 0);
    const run = await d.docker(['run', '-d', '--name', 'schema-c', '-v', 'schema-vol:/v', '-v', '/anon', 'busybox', 'sleep', '100000']);
    assert.equal(run.code, 0, run.stderr);
    const du = await conforms('/system/df', '/system/df');
    assert.ok(du.Volumes.length >= 2 && du.Containers.length >= 1 && du.Images.length >= 1, JSON.stringify(du));
    assert.ok((await conforms('/volumes', '/volumes')).Volumes.length >= 2);
    assert.equal((await conforms('/volumes/schema-vol', '/volumes/{name}')).Labels.k, 'v');
    // An exec before it ran (ExitCode null, as dockerd's *int) and after.
    const created = await d.request('POST', '/containers/schema-c/exec', { body: { Cmd: ['sh', '-c', 'exit 3'] } });
    assert.equal(created.status, 201, created.text());
    const id = created.json().Id as string;
    assert.equal((await conforms(`/exec/${id}/json`, '/exec/{id}/json', true)).Running, false);
    assert.equal((await d.request('POST', `/exec/${id}/start`, { body: { Detach: true } })).status, 200);
    await until('the exec to end', async () => ((await d.request('GET', `/exec/${id}/json`)).json().Running === false ? true : undefined));
    const done = await conforms(`/exec/${id}/json`, '/exec/{id}/json');
    assert.equal(done.ExitCode, 3);
    assert.deepEqual(done.ProcessConfig, { tty: false, entrypoint: 'sh', arguments: ['-c', 'exit 3'], privileged: false });
    assert.equal((await d.docker(['rm', '-f', 'schema-c'])).code, 0);
    assert.equal((await d.docker(['volume', 'rm', 'schema-vol'])).code, 0);
  });
});
