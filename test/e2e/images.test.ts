// Issue 4 (local part): images through the docker CLI and raw HTTP — list, inspect, history, tag,
// rmi (conflicts, force, GC of blobs, snapshots and init layers), prune, save/load round trips
// (our own archives, plain OCI layouts, dockerd's), import, export, commit, and tar traversal.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { buildHeader, tarToBuffer } from '../../src/util/tar-writer.ts';
import { buildBusyboxLayer } from '../fixtures/busybox-image.ts';
import { run, startDaemon, unmountUnder, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { apiSpecMissing, definition, responseSchema, validate } from '../helpers/openapi.ts';

const DOCKERD = '/usr/sbin/dockerd';

function supervisor(d: TestDaemon): SupervisorClient {
  return new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
}

async function ok(d: TestDaemon, args: string[], opts: { input?: Buffer | string; timeoutMs?: number } = {}): Promise<string> {
  const r = await d.docker(args, opts);
  assert.equal(r.code, 0, `docker ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** Entry names of a tar (plain or gzip). */
async function tarNames(buf: Buffer): Promise<string[]> {
  const { readTar } = await import('../../src/images/tar-reader.ts');
  const data = buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf) : buf;
  const names: string[] = [];
  for await (const e of readTar([data])) names.push(e.header.name);
  return names;
}

/** A raw ustar entry: for names and links the tar writer would not produce. */
function rawEntry(name: string, typeflag: string, opts: { linkname?: string; data?: string } = {}): Buffer {
  const body = Buffer.from(opts.data ?? '');
  const h = buildHeader({
    name,
    prefix: '',
    mode: 0o644,
    uid: 0,
    gid: 0,
    size: body.length,
    mtime: 0,
    typeflag,
    linkname: opts.linkname ?? '',
    uname: '',
    gname: '',
    devmajor: 0,
    devminor: 0,
  });
  return Buffer.concat([h, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}
const tarEnd = Buffer.alloc(1024);

describe('local images through the docker CLI', () => {
  let d: TestDaemon;
  let busyboxId: string;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    busyboxId = (await ok(d, ['image', 'inspect', '--format', '{{.Id}}', 'busybox'])).trim();
  });
  after(async () => d?.cleanup());

  test('images, inspect and history show the image with dockerd shapes', async (t) => {
    assert.match(busyboxId, /^sha256:[0-9a-f]{64}$/);
    const ls = await ok(d, ['images', '--format', '{{.Repository}}:{{.Tag}} {{.ID}}']);
    assert.match(ls, new RegExp(`^busybox:latest ${busyboxId.slice(7, 19)}$`, 'm'));
    const list = await d.request('GET', '/images/json');
    assert.equal(list.status, 200);
    const entry = list.json<any[]>().find((i) => i.Id === busyboxId);
    assert.deepEqual(entry.RepoTags, ['busybox:latest']);
    assert.equal(entry.ParentId, '');
    assert.equal(entry.SharedSize, -1);
    assert.equal(entry.Containers, 0, 'counted from API 1.51');
    assert.deepEqual(entry.Descriptor, (await d.request('GET', '/images/busybox/json')).json().Descriptor);
    assert.equal((await d.request('GET', '/v1.50/images/json')).json<any[]>().find((i) => i.Id === busyboxId).Containers, -1);
    assert.equal('Manifests' in entry, false, 'only with manifests=1');
    assert.equal(entry.Created, Date.UTC(2024, 0, 1) / 1000);
    assert.ok(entry.Size > 1_000_000, `size ${entry.Size}`);
    assert.deepEqual(entry.Labels, {});
    const inspect = (await d.request('GET', '/images/busybox/json')).json();
    assert.equal(inspect.Id, busyboxId);
    assert.deepEqual(inspect.RootFS.Type, 'layers');
    assert.equal(inspect.RootFS.Layers.length, 1);
    assert.deepEqual(inspect.Config.Cmd, ['sh']);
    assert.equal(inspect.Os, 'linux');
    assert.equal(inspect.Architecture, 'amd64');
    assert.equal((await d.request('GET', `/images/${busyboxId.slice(7, 19)}/json`)).json().Id, busyboxId, 'by short ID');
    const history = (await d.request('GET', '/images/busybox/history')).json();
    assert.equal(history.length, 1);
    assert.equal(history[0].Id, busyboxId);
    assert.deepEqual(history[0].Tags, ['busybox:latest']);
    assert.match(history[0].CreatedBy, /busybox-static/);
    const missing = await d.request('GET', '/images/nosuch:1/json');
    assert.equal(missing.status, 404);
    assert.equal(missing.json().message, 'No such image: nosuch:1');
    if (apiSpecMissing()) return t.diagnostic(apiSpecMissing()!);
    assert.deepEqual(validate(list.json(), responseSchema('/images/json', 'get', '200')), []);
    assert.deepEqual(validate(inspect, definition('ImageInspect')), []);
    assert.deepEqual(validate(history, responseSchema('/images/{name}/history', 'get', '200')), []);
  });

  test('manifests=1 (API 1.47 list, 1.48 inspect): each image carries its manifest summaries, with the containers using it', async (t) => {
    const cid = (await ok(d, ['create', 'busybox', 'true'])).trim();
    try {
      const entry = (await d.request('GET', '/v1.47/images/json?manifests=1')).json<any[]>().find((i) => i.Id === busyboxId);
      const inspect = (await d.request('GET', '/v1.48/images/busybox/json?manifests=1')).json();
      assert.deepEqual(entry.Manifests, inspect.Manifests);
      assert.equal(entry.Manifests.length, 1);
      const [m] = entry.Manifests;
      assert.equal(m.ID, inspect.Descriptor.digest);
      assert.deepEqual(m.Descriptor, inspect.Descriptor);
      assert.equal(m.Available, true);
      assert.equal(m.Kind, 'image');
      assert.deepEqual(m.ImageData.Platform, { architecture: 'amd64', os: 'linux' });
      assert.deepEqual(m.ImageData.Containers, [cid]);
      assert.ok(m.ImageData.Size.Unpacked > 1_000_000, `unpacked ${m.ImageData.Size.Unpacked}`);
      assert.ok(m.Size.Content > 500_000, `content ${m.Size.Content}`);
      assert.equal(m.Size.Total, m.Size.Content + m.ImageData.Size.Unpacked);
      assert.equal(entry.Containers, -1, 'before 1.51');
      assert.equal((await d.request('GET', '/v1.51/images/json')).json<any[]>().find((i) => i.Id === busyboxId).Containers, 1);
      assert.equal(
        'Manifests' in (await d.request('GET', '/v1.46/images/json?manifests=1')).json<any[]>()[0],
        false,
        'not read before 1.47',
      );
      assert.equal('Manifests' in (await d.request('GET', '/v1.47/images/busybox/json?manifests=1')).json(), false, 'not read before 1.48');
      // The CLI's tree view is built from the Manifests: a platform row under the image.
      const tree = await ok(d, ['image', 'ls', '--tree']);
      assert.match(tree, /busybox:latest/);
      assert.match(tree, /linux\/amd64/);
      if (apiSpecMissing()) return t.diagnostic(apiSpecMissing()!);
      assert.deepEqual(validate([entry], responseSchema('/images/json', 'get', '200')), []);
      assert.deepEqual(validate(inspect, definition('ImageInspect')), []);
    } finally {
      await ok(d, ['rm', cid]);
    }
  });

  test('tag, filters, and rmi untag before they delete', async () => {
    assert.equal((await d.request('POST', '/images/busybox/tag?repo=localhost:5000/team/box&tag=v1')).status, 201);
    await ok(d, ['tag', 'busybox', 'other:2']);
    const tags = (await ok(d, ['images', '--format', '{{.Repository}}:{{.Tag}}'])).trim().split('\n').sort();
    assert.deepEqual(tags, ['busybox:latest', 'localhost:5000/team/box:v1', 'other:2']);
    const byRef = (await d.request('GET', `/images/json?filters=${encodeURIComponent(JSON.stringify({ reference: ['oth*'] }))}`)).json();
    assert.equal(byRef.length, 1);
    assert.deepEqual(byRef[0].RepoTags, ['other:2']);
    assert.equal((await d.request('GET', `/images/json?filters=${encodeURIComponent(JSON.stringify({ nope: ['x'] }))}`)).status, 400);
    const badTag = await d.request('POST', '/images/busybox/tag?repo=UPPER');
    assert.equal(badTag.status, 400);
    assert.equal((await d.request('POST', '/images/nosuch/tag?repo=x')).status, 404);
    // By ID with several names: refused unless forced.
    const byId = await d.request('DELETE', `/images/${busyboxId.slice(7, 19)}`);
    assert.equal(byId.status, 409);
    assert.match(
      byId.json().message,
      /^conflict: unable to delete [0-9a-f]{12} \(must be forced\) - image is referenced in multiple repositories$/,
    );
    const untag = await d.request('DELETE', '/images/other:2');
    assert.equal(untag.status, 200);
    assert.deepEqual(untag.json(), [{ Untagged: 'other:2' }]);
    assert.equal(await ok(d, ['rmi', 'localhost:5000/team/box:v1']), 'Untagged: localhost:5000/team/box:v1\n');
    assert.equal((await d.request('DELETE', '/images/nosuch')).status, 404);
    assert.equal((await ok(d, ['image', 'inspect', '--format', '{{.Id}}', 'busybox'])).trim(), busyboxId);
  });

  test('rmi of an image a container uses is a 409 unless forced; force leaves it dangling while the container lives', async () => {
    await ok(d, ['tag', 'busybox', 'inuse:1']);
    await ok(d, ['rmi', 'busybox']); // another tag remains: only untagged
    const cid = (await ok(d, ['create', 'inuse:1', 'true'])).trim();
    const refused = await d.request('DELETE', '/images/inuse:1');
    assert.equal(refused.status, 409);
    assert.equal(
      refused.json().message,
      `conflict: unable to remove repository reference "inuse:1" (must force) - container ${cid.slice(0, 12)} is using its referenced image ${busyboxId.slice(7, 19)}`,
    );
    const byId = await d.request('DELETE', `/images/${busyboxId}`);
    assert.equal(byId.status, 409);
    assert.match(byId.json().message, new RegExp(`image is being used by stopped container ${cid.slice(0, 12)}`));
    // Running container: even force only untags (the image stays, dangling).
    await ok(d, ['start', cid]);
    const long = (await ok(d, ['run', '-d', 'inuse:1', 'sleep', '30'])).trim();
    const forced = await d.request('DELETE', '/images/inuse:1?force=1');
    assert.equal(forced.status, 200);
    assert.deepEqual(forced.json(), [{ Untagged: 'inuse:1' }]);
    const dangling = (await d.request('GET', `/images/json?filters=${encodeURIComponent('{"dangling":["true"]}')}`)).json();
    assert.deepEqual(
      dangling.map((i: any) => [i.Id, i.RepoTags]),
      [[busyboxId, []]],
    );
    const runningConflict = await d.request('DELETE', `/images/${busyboxId}?force=1`);
    assert.equal(runningConflict.status, 409);
    assert.match(runningConflict.json().message, /\(cannot be forced\) - image is being used by running container/);
    // The container still runs from it, and the image can be tagged back.
    assert.equal((await d.request('POST', `/images/${busyboxId.slice(7)}/tag?repo=busybox&tag=latest`)).status, 201);
    assert.equal((await d.request('GET', `/images/json?filters=${encodeURIComponent('{"dangling":["true"]}')}`)).json().length, 0);
    await ok(d, ['rm', '-f', long, cid]);
  });

  test("a created container's writable layer is made at its first use; rmi -f of its image keeps what it needs", async () => {
    await ok(d, ['run', '--name', 'lazy-src', 'busybox', 'sh', '-c', 'echo kept > /f']);
    await ok(d, ['commit', 'lazy-src', 'lazy:1']);
    await ok(d, ['rm', 'lazy-src']);
    const client = supervisor(d);
    try {
      const hasLayer = async (id: string) => (await client.snapshots.list()).some((s) => s.name === id);
      const cid = (await ok(d, ['create', 'lazy:1', 'cat', '/f'])).trim();
      assert.equal(await hasLayer(cid), false, 'create makes no snapshot');
      assert.equal((await d.request('GET', `/containers/${cid}/json?size=1`)).json().SizeRw, 0);
      // Forced: the image goes, and the container's layer, made now, holds the image's layers.
      const forced = await d.request('DELETE', '/images/lazy:1?force=1');
      assert.equal(forced.status, 200, forced.text());
      assert.ok(
        forced.json().some((e: { Deleted?: string }) => e.Deleted),
        forced.text(),
      );
      assert.equal(await hasLayer(cid), true);
      assert.equal(await ok(d, ['start', '-a', cid]), 'kept\n');
      await ok(d, ['rm', cid]);
      assert.equal(await hasLayer(cid), false);
    } finally {
      client.close();
    }
  });

  test('the §3 sequence: create → start → wait → commit, then the committed image runs with the change', async () => {
    const create = await d.request('POST', '/containers/create', {
      body: { Image: 'busybox', Cmd: ['sh', '-c', 'echo committed-data > /newfile; rm /etc/group'] },
    });
    assert.equal(create.status, 201, create.text());
    const id = create.json().Id;
    assert.equal((await d.request('POST', `/containers/${id}/start`)).status, 204);
    assert.equal((await d.request('POST', `/containers/${id}/wait`)).json().StatusCode, 0);
    const commit = await d.request(
      'POST',
      `/commit?container=${id}&repo=snap&tag=v1&comment=${encodeURIComponent('my change')}&author=tester`,
    );
    assert.equal(commit.status, 201, commit.text());
    const newId = commit.json().Id;
    assert.match(newId, /^sha256:[0-9a-f]{64}$/);
    assert.equal(await ok(d, ['run', '--rm', 'snap:v1', 'cat', '/newfile']), 'committed-data\n');
    assert.equal((await d.docker(['run', '--rm', 'snap:v1', 'ls', '/etc/group'])).code, 1, 'the deletion is in the layer too');
    const img = (await d.request('GET', '/images/snap:v1/json')).json();
    assert.equal(img.Id, newId);
    assert.equal(img.Parent, busyboxId);
    assert.equal(img.Comment, 'my change');
    assert.equal(img.Author, 'tester');
    assert.equal(img.RootFS.Layers.length, 2);
    assert.deepEqual(img.Config.Cmd, ['sh', '-c', 'echo committed-data > /newfile; rm /etc/group']);
    const summary = (await d.request('GET', '/images/json?shared-size=1')).json().find((i: any) => i.Id === newId);
    assert.equal(summary.ParentId, busyboxId);
    const base = (await d.request('GET', '/images/json?shared-size=1')).json().find((i: any) => i.Id === busyboxId);
    assert.ok(base.SharedSize > 1_000_000 && summary.SharedSize === base.SharedSize, `shared ${base.SharedSize} / ${summary.SharedSize}`);
    assert.ok(summary.Size > base.Size, 'the new layer adds to the size');
    const history = (await d.request('GET', '/images/snap:v1/history')).json();
    assert.deepEqual(
      history.map((h: any) => h.Id),
      [newId, busyboxId],
    );
    assert.equal(history[0].Comment, 'my change');
    // Only what the process changed is in the layer: no mount points, no /etc/hosts.
    const client = supervisor(d);
    try {
      const manifest = JSON.parse((await client.contentReadAll(img.Descriptor.digest)).toString());
      const layer = await client.contentReadAll(manifest.layers[1].digest);
      assert.deepEqual((await tarNames(layer)).sort(), ['etc/', 'etc/.wh.group', 'newfile']);
    } finally {
      client.close();
    }
    // A parent with a child image cannot go by ID.
    await ok(d, ['rm', id]);
    const parentDel = await d.request('DELETE', `/images/${busyboxId}?force=1`);
    assert.equal(parentDel.status, 409);
    assert.match(parentDel.json().message, /image has dependent child images/);
  });

  test('commit on overlayfs: a recreated directory hides the old content, hard links and symlinks survive, and the layer says so', async () => {
    // First image: /data with old content. Second: /data removed and made again (an opaque
    // directory in the upper layer), a file deleted from the first image, links.
    await ok(d, ['run', '--name', 'ovl1', 'busybox', 'sh', '-c', 'mkdir /data && echo old > /data/old && echo gone > /gone']);
    await ok(d, ['commit', 'ovl1', 'ovl:1']);
    const script = 'rm -rf /data && mkdir /data && echo new > /data/new && rm /gone && echo linked > /l1 && ln /l1 /l2 && ln -s /l1 /sym';
    await ok(d, ['run', '--name', 'ovl2', 'ovl:1', 'sh', '-c', script]);
    await ok(d, ['commit', 'ovl2', 'ovl:2']);
    assert.equal(
      await ok(d, ['run', '--rm', 'ovl:2', 'sh', '-c', 'ls -A /data; cat /l2 /sym; ls /gone 2>&1 || true']),
      'new\nlinked\nlinked\nls: /gone: No such file or directory\n',
    );
    assert.equal(await ok(d, ['run', '--rm', 'ovl:2', 'stat', '-c', '%h', '/l1']), '2\n', 'one file, two names');
    const img = (await d.request('GET', '/images/ovl:2/json')).json();
    const client = supervisor(d);
    try {
      const manifest = JSON.parse((await client.contentReadAll(img.Descriptor.digest)).toString());
      const layer = await client.contentReadAll(manifest.layers.at(-1).digest);
      assert.equal(manifest.layers.at(-1).digest, img.RootFS.Layers.at(-1), 'uncompressed: digest = diff ID');
      assert.deepEqual((await tarNames(layer)).sort(), ['.wh.gone', 'data/', 'data/.wh..wh..opq', 'data/new', 'l1', 'l2', 'sym']);
    } finally {
      client.close();
    }
    // A running container committed without pausing goes through containerd's diff service.
    const live = (
      await ok(d, ['run', '-d', 'ovl:1', 'sh', '-c', 'rm -rf /data && mkdir /data && echo live > /data/live; sleep 60'])
    ).trim();
    await new Promise((r) => setTimeout(r, 300));
    await ok(d, ['commit', '--pause=false', live, 'ovl:3']);
    assert.equal(await ok(d, ['run', '--rm', 'ovl:3', 'ls', '-A', '/data']), 'live\n');
    await ok(d, ['rm', '-f', live, 'ovl1', 'ovl2']);
    await ok(d, ['rmi', 'ovl:3', 'ovl:2', 'ovl:1']);
  });

  test('commit with --change, of a running container (paused for the diff), without a name', async () => {
    const cid = (await ok(d, ['run', '-d', 'busybox', 'sh', '-c', 'echo live > /live; sleep 60'])).trim();
    await new Promise((r) => setTimeout(r, 300));
    const out = await ok(d, [
      'commit',
      '--change',
      'ENV GREETING="hello from commit"',
      '--change',
      'CMD ["sh", "-c", "echo $GREETING; cat /live"]',
      '--change',
      'LABEL stage=two',
      cid,
    ]);
    const id = out.trim();
    assert.match(id, /^sha256:[0-9a-f]{64}$/);
    const state = JSON.parse(await ok(d, ['inspect', cid]))[0].State;
    assert.equal(state.Running, true);
    assert.equal(state.Paused, false, 'resumed after the commit');
    assert.equal(await ok(d, ['run', '--rm', id]), 'hello from commit\nlive\n');
    const img = (await d.request('GET', `/images/${id}/json`)).json();
    assert.deepEqual(img.RepoTags, []);
    assert.equal(img.Config.Labels.stage, 'two');
    const bad = await d.request(`POST`, `/commit?container=${cid}&changes=${encodeURIComponent('RUN true')}`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json().message, 'run is not a valid change command');
    assert.equal((await d.request('POST', '/commit?container=nosuch')).status, 404);
    await ok(d, ['rm', '-f', cid]);
  });

  test('docker import of a rootfs tar with --change, then run it', async () => {
    const { tar } = await buildBusyboxLayer();
    const out = await ok(
      d,
      ['import', '--change', 'CMD ["echo","imported"]', '--change', 'ENV PATH=/bin', '-m', 'from a test', '-', 'imported:v1'],
      { input: tar },
    );
    const id = out.trim();
    assert.match(id, /^sha256:[0-9a-f]{64}$/);
    assert.equal(await ok(d, ['run', '--rm', 'imported:v1']), 'imported\n');
    const img = (await d.request('GET', '/images/imported:v1/json')).json();
    assert.equal(img.Id, id);
    assert.equal(img.Comment, 'from a test');
    assert.deepEqual(img.Config.Env, ['PATH=/bin']);
    // The same rootfs gzip-compressed, raw over HTTP, untagged.
    const { gz } = await buildBusyboxLayer();
    const raw = await d.request('POST', '/images/create?fromSrc=-', { body: gz, headers: { 'Content-Type': 'application/x-tar' } });
    assert.equal(raw.status, 200, raw.text());
    const status = JSON.parse(raw.text().trim().split('\n').pop()!).status;
    assert.match(status, /^sha256:[0-9a-f]{64}$/);
    assert.equal(
      (await d.request('GET', `/images/${status}/json`)).json().RootFS.Layers[0],
      img.RootFS.Layers[0],
      'same diff ID either way',
    );
  });

  test('docker export of a container contains its files', async () => {
    const cid = (await ok(d, ['create', 'busybox', 'sh'])).trim();
    await ok(d, ['run', '--name', 'exp', 'busybox', 'sh', '-c', 'mkdir -p /data && echo exported > /data/file && ln -s file /data/link']);
    const file = join(await mkdtemp(join(tmpdir(), 'engine-export-')), 'out.tar');
    try {
      await ok(d, ['export', '-o', file, 'exp']);
      const names = await tarNames(await readFile(file));
      for (const n of ['bin/busybox', 'bin/sh', 'data/', 'data/file', 'data/link', 'etc/passwd', 'proc/', '.dockerenv'])
        assert.ok(names.includes(n), `${n} missing from the export`);
      const { readTar } = await import('../../src/images/tar-reader.ts');
      for await (const e of readTar([await readFile(file)])) {
        if (e.header.name === 'data/file') {
          const parts: Buffer[] = [];
          for await (const c of e.body) parts.push(c);
          assert.equal(Buffer.concat(parts).toString(), 'exported\n');
        }
        if (e.header.name === 'data/link') assert.equal(e.header.linkname, 'file');
      }
      assert.equal((await d.request('GET', '/containers/nosuch/export')).status, 404);
    } finally {
      await rm(join(file, '..'), { recursive: true, force: true });
      await ok(d, ['rm', '-f', 'exp', cid]);
    }
  });

  test('load and import refuse archives that would leave their root (load: 200 with the error in its stream, as dockerd; import: 400), and keep nothing', async () => {
    const before = (await d.request('GET', '/images/json')).json().length;
    const evilLoad = Buffer.concat([rawEntry('../evil', '0', { data: 'x' }), tarEnd]);
    assert.match(await loadError(d, evilLoad), /escapes the archive root/);
    const absLink = Buffer.concat([rawEntry('manifest.json', '2', { linkname: '/etc/passwd' }), tarEnd]);
    assert.match(await loadError(d, absLink), /symlink "manifest.json" -> "\/etc\/passwd" is absolute/);
    const upLink = Buffer.concat([rawEntry('blobs/sha256/x', '2', { linkname: '../../../etc/shadow' }), tarEnd]);
    assert.match(await loadError(d, upLink), /./);
    const absName = Buffer.concat([rawEntry('/etc/cron.d/evil', '0', { data: 'x' }), tarEnd]);
    assert.match(await loadError(d, absName), /./);

    for (const [what, tar] of [
      ['../evil', Buffer.concat([rawEntry('bin/', '5'), rawEntry('../evil', '0', { data: 'x' }), tarEnd])],
      ['/abs', Buffer.concat([rawEntry('/etc/evil', '0', { data: 'x' }), tarEnd])],
      ['escaping symlink', Buffer.concat([rawEntry('up', '2', { linkname: '../../../../tmp' }), tarEnd])],
      [
        'write through a symlink',
        Buffer.concat([rawEntry('etc', '2', { linkname: '/etc' }), rawEntry('etc/passwd', '0', { data: 'x' }), tarEnd]),
      ],
      ['escaping hard link', Buffer.concat([rawEntry('h', '1', { linkname: '../../etc/shadow' }), tarEnd])],
    ] as const) {
      const r = await d.request('POST', '/images/create?fromSrc=-&repo=evil', { body: tar });
      assert.equal(r.status, 400, `${what}: ${r.status} ${r.text()}`);
      assert.match(r.json().message, /^invalid tar archive: /);
    }
    assert.equal((await d.request('GET', '/images/json')).json().length, before);
    assert.equal((await d.request('GET', '/images/evil/json')).status, 404);
    assert.match(await loadError(d, Buffer.from('definitely not a tar archive'.repeat(30))), /./);
  });

  test('prune removes dangling images only (by default) and reports the space', async () => {
    const { tar } = await buildBusyboxLayer();
    const extra = await tarToBuffer(async (tw) => tw.file('prune-me', 'x'.repeat(50_000)));
    const dangling = (await ok(d, ['import', '-'], { input: Buffer.concat([tar.subarray(0, tar.length - 1024), extra]) })).trim();
    await ok(d, ['import', '-', 'keepme:1'], { input: extra });
    const r = await d.request('POST', '/images/prune');
    assert.equal(r.status, 200);
    const body = r.json();
    assert.ok(
      body.ImagesDeleted.some((x: any) => x.Deleted === dangling),
      JSON.stringify(body),
    );
    assert.ok(body.SpaceReclaimed > 50_000, `reclaimed ${body.SpaceReclaimed}`);
    assert.equal((await d.request('GET', `/images/${dangling}/json`)).status, 404);
    assert.equal((await d.request('GET', '/images/keepme:1/json')).status, 200);
    assert.equal((await d.request('GET', '/images/busybox/json')).status, 200);
    const again = (await d.request('POST', '/images/prune')).json();
    assert.deepEqual(again, { ImagesDeleted: null, SpaceReclaimed: 0 });
    assert.equal((await d.request('POST', `/images/prune?filters=${encodeURIComponent('{"bogus":["1"]}')}`)).status, 400);
    const all = (
      await d.request('POST', `/images/prune?filters=${encodeURIComponent('{"dangling":["false"],"label!":["never"]}')}`)
    ).json();
    assert.ok(
      all.ImagesDeleted.some((x: any) => x.Untagged === 'keepme:1'),
      JSON.stringify(all),
    );
  });
});

describe('image storage: GC and /info', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('rmi removes blobs, layer snapshots and the init layer once nothing uses them', async () => {
    // The fixture wrote the image behind the daemon's back: the count follows containerd's events.
    const deadline = Date.now() + 5000;
    while ((await d.request('GET', '/info')).json().Images !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await d.request('GET', '/info')).json().Images, 1);
    await ok(d, ['run', '--name', 'gc1', 'busybox', 'sh', '-c', 'echo x > /f']);
    await ok(d, ['commit', 'gc1', 'gc:1']);
    const client = supervisor(d);
    try {
      const snaps = async () => (await client.snapshots.list()).map((s) => s.name).sort();
      assert.ok(
        (await snaps()).some((n) => n.startsWith('init-')),
        'the init layer exists while a container uses it',
      );
      assert.equal((await d.request('GET', '/info')).json().Images, 2);
      // The container goes: its init layer stays while busybox (its chain) is still an image.
      await ok(d, ['rm', 'gc1']);
      await ok(d, ['rmi', 'gc:1']);
      const out = (await d.request('DELETE', '/images/busybox')).json();
      assert.deepEqual(
        out.map((x: any) => Object.keys(x)[0]),
        ['Untagged', 'Deleted', 'Deleted'],
      );
      assert.deepEqual(await snaps(), [], 'no snapshot left');
      assert.deepEqual(await client.contentList(), [], 'no blob left');
      assert.deepEqual(await client.images.list(), []);
      assert.equal((await d.request('GET', '/info')).json().Images, 0);
    } finally {
      client.close();
    }
  });

  test('removing the last container on a deleted image drops its init layer', async () => {
    await loadBusybox(d);
    const cid = (await ok(d, ['create', 'busybox', 'true'])).trim();
    await ok(d, ['rmi', '-f', 'busybox']); // stopped container: forced delete goes through
    const client = supervisor(d);
    try {
      assert.ok((await client.snapshots.list()).some((s) => s.name.startsWith('init-')));
      await ok(d, ['rm', cid]);
      const deadline = Date.now() + 10_000;
      while ((await client.snapshots.list()).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(
        (await client.snapshots.list()).map((s) => s.name),
        [],
      );
    } finally {
      client.close();
    }
  });
});

describe('save and load', () => {
  let src: TestDaemon;
  let dst: TestDaemon;
  let dir: string;
  before(async () => {
    [src, dst] = await Promise.all([startDaemon(), startDaemon()]);
    await loadBusybox(src);
    dir = await mkdtemp(join(tmpdir(), 'engine-save-'));
  });
  after(async () => {
    await Promise.all([src?.cleanup(), dst?.cleanup()]);
    await rm(dir, { recursive: true, force: true });
  });

  test('docker save | docker load on a fresh daemon, and the loaded image runs', async () => {
    await ok(src, ['run', '--name', 'savec', 'busybox', 'sh', '-c', 'echo saved > /saved']);
    await ok(src, ['commit', 'savec', 'saved:1']);
    const srcId = (await ok(src, ['image', 'inspect', '--format', '{{.Id}}', 'saved:1'])).trim();
    const file = join(dir, 'save.tar');
    await ok(src, ['save', '-o', file, 'saved:1', 'busybox']);
    const names = await tarNames(await readFile(file));
    for (const n of ['oci-layout', 'index.json', 'manifest.json', 'repositories', 'blobs/sha256/'])
      assert.ok(names.includes(n), `${n} missing`);
    const manifest = JSON.parse((await run('tar', ['-xOf', file, 'manifest.json'])).stdout);
    assert.deepEqual(
      manifest
        .map((m: any) => m.RepoTags)
        .flat()
        .sort(),
      ['busybox:latest', 'saved:1'],
    );
    const load = await dst.docker(['load'], { input: await readFile(file) });
    assert.equal(load.code, 0, load.stderr);
    assert.equal(load.stdout.split('\n').filter(Boolean).sort().join('\n'), 'Loaded image: busybox:latest\nLoaded image: saved:1');
    assert.equal((await ok(dst, ['image', 'inspect', '--format', '{{.Id}}', 'saved:1'])).trim(), srcId, 'same image ID');
    assert.equal(await ok(dst, ['run', '--rm', 'saved:1', 'cat', '/saved']), 'saved\n');
    // Loading it again changes nothing; the single-image endpoint and quiet work too.
    const one = await src.request('GET', '/images/saved:1/get');
    assert.equal(one.status, 200);
    assert.equal(one.headers['content-type'], 'application/x-tar');
    const again = await dst.request('POST', '/images/load?quiet=1', { body: one.body });
    assert.equal(again.status, 200);
    assert.equal(again.text(), '{"stream":"Loaded image: saved:1\\n"}\n');
    assert.equal((await src.request('GET', '/images/get?names=nosuch')).status, 404);
  });

  test('load of a plain OCI layout (no manifest.json), named and unnamed', async () => {
    const one = (await src.request('GET', '/images/busybox/get')).body;
    const { readTar } = await import('../../src/images/tar-reader.ts');
    const files = new Map<string, Buffer>();
    for await (const e of readTar([one])) {
      const parts: Buffer[] = [];
      for await (const c of e.body) parts.push(c);
      if (e.header.kind === 'file') files.set(e.header.name, Buffer.concat(parts));
    }
    const index = JSON.parse(files.get('index.json')!.toString());
    const layout = async (annotations: Record<string, string>) =>
      tarToBuffer(async (tw) => {
        await tw.file('oci-layout', '{"imageLayoutVersion":"1.0.0"}');
        await tw.file('index.json', JSON.stringify({ schemaVersion: 2, manifests: [{ ...index.manifests[0], annotations }] }));
        for (const [name, data] of files) if (name.startsWith('blobs/')) await tw.file(name, data);
      });
    const named = await dst.request('POST', '/images/load', {
      body: await layout({ 'io.containerd.image.name': 'docker.io/library/ocibox:7' }),
    });
    assert.equal(named.status, 200, named.text());
    assert.equal(named.text(), '{"stream":"Loaded image: ocibox:7\\n"}\n');
    assert.equal(await ok(dst, ['run', '--rm', 'ocibox:7', 'echo', 'from-oci']), 'from-oci\n');
    const unnamed = await dst.request('POST', '/images/load', { body: await layout({ 'org.opencontainers.image.ref.name': 'latest' }) });
    assert.equal(unnamed.status, 200, unnamed.text());
    assert.match(unnamed.text(), /^\{"stream":"Loaded image ID: sha256:[0-9a-f]{64}\\n"\}\n$/);
    // Gzip-compressed archives load too (dockerd accepts them).
    const { gzipSync } = await import('node:zlib');
    const gz = await dst.request('POST', '/images/load', {
      body: gzipSync(await layout({ 'io.containerd.image.name': 'docker.io/library/ocibox:gz' })),
    });
    assert.equal(gz.status, 200, gz.text());
  });

  test('load of an archive produced by dockerd, and dockerd loads ours', async (t) => {
    if (!existsSync(DOCKERD)) return t.skip(`skipped: ${DOCKERD} is not installed (Debian's docker.io provides it)`);
    const ddir = await mkdtemp(join(tmpdir(), 'engine-dockerd-'));
    let child: ChildProcess | undefined;
    try {
      await writeFile(join(ddir, 'daemon.json'), '{}');
      const sock = join(ddir, 'docker.sock');
      // dockerd uses the test daemon's containerd (its own namespace), so nothing global is touched.
      child = spawn(
        DOCKERD,
        [
          '--data-root',
          join(ddir, 'data'),
          '--exec-root',
          join(ddir, 'exec'),
          '-H',
          `unix://${sock}`,
          '--pidfile',
          join(ddir, 'docker.pid'),
          '--containerd',
          join(src.execRoot, 'containerd', 'containerd.sock'),
          '--containerd-namespace',
          'dockerd-test',
          '--containerd-plugins-namespace',
          'dockerd-test-plugins',
          '--bridge',
          'none',
          '--iptables=false',
          '--ip-masq=false',
          '--config-file',
          join(ddir, 'daemon.json'),
          '--storage-driver',
          'vfs',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let log = '';
      child.stdout!.on('data', (b) => (log += b));
      child.stderr!.on('data', (b) => (log += b));
      const env = { ...process.env, DOCKER_HOST: `unix://${sock}`, DOCKER_CONFIG: join(ddir, 'cli') };
      const dockerd = (args: string[], input?: Buffer) => run('docker', args, { env, ...(input ? { input } : {}) });
      for (let i = 0; ; i++) {
        if ((await dockerd(['version'])).code === 0) break;
        if (i > 150) throw new Error(`dockerd did not start:\n${log}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const { tar } = await buildBusyboxLayer();
      const imp = await dockerd(['import', '--change', 'CMD ["/bin/echo","made by dockerd"]', '-', 'fromdockerd:1'], tar);
      assert.equal(imp.code, 0, imp.stderr);
      const theirId = imp.stdout.trim();
      const saved = join(ddir, 'dockerd-save.tar');
      assert.equal((await dockerd(['save', '-o', saved, 'fromdockerd:1'])).code, 0);
      const load = await dst.docker(['load', '-i', saved]);
      assert.equal(load.code, 0, load.stderr);
      assert.equal(load.stdout, 'Loaded image: fromdockerd:1\n');
      assert.equal(
        (await ok(dst, ['image', 'inspect', '--format', '{{.Id}}', 'fromdockerd:1'])).trim(),
        theirId,
        'dockerd and we agree on the image ID',
      );
      assert.equal(await ok(dst, ['run', '--rm', 'fromdockerd:1']), 'made by dockerd\n');

      // The other way: our save, loaded by dockerd 20.10.
      const ours = join(ddir, 'ours.tar');
      await ok(src, ['save', '-o', ours, 'busybox']);
      const theirs = await dockerd(['load', '-i', ours]);
      assert.equal(theirs.code, 0, theirs.stderr);
      assert.equal(theirs.stdout.trim().split('\n').pop(), 'Loaded image: busybox:latest');
      const ourId = (await ok(src, ['image', 'inspect', '--format', '{{.Id}}', 'busybox'])).trim();
      assert.equal((await dockerd(['image', 'inspect', '--format', '{{.Id}}', 'busybox'])).stdout.trim(), ourId);
    } finally {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child!.once('exit', r));
      }
      await unmountUnder(ddir);
      await rm(ddir, { recursive: true, force: true });
    }
  });
});

/** POST /images/load of a broken archive: a 200 whose JSON stream ends with the error; returns it. */
async function loadError(d: TestDaemon, tar: Buffer): Promise<string> {
  const r = await d.request('POST', '/images/load', { body: tar });
  assert.equal(r.status, 200, r.text());
  const messages = r
    .text()
    .split(/\r?\n/)
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { error?: string; errorDetail?: { message: string } });
  const last = messages.at(-1);
  assert.ok(last?.error && last.errorDetail?.message === last.error, `the stream ends with an error: ${r.text()}`);
  assert.ok(!messages.some((m) => 'stream' in m), 'nothing was reported loaded');
  return last.error;
}
