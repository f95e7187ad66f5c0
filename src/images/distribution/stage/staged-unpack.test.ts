// The staged unpack of a layer: what it reproduces (directories, files, symlinks, hard links, owners,
// modes incl. set-id bits, mtimes, the diffID of the uncompressed tar) and where it gives up so the
// diff service does the layer (whiteouts, xattrs, devices, parents missing, links out).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstat, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { tarToBuffer, type TarWriter } from '../../../util/tar-writer.ts';
import { run } from '../../../../test/helpers/daemon.ts';
import { LayerStage, stageable } from './staged-unpack.ts';
import { WriteBuffers } from './pooled-writes.ts';

const GZ = 'application/vnd.oci.image.layer.v1.tar+gzip';
const T = 1704067200;

async function stage(build: (tw: TarWriter) => Promise<void>, chunk = 1000, writes: WriteBuffers | null = null) {
  const root = await mkdtemp(join(tmpdir(), 'engine-stage-'));
  const tar = await tarToBuffer(build);
  const gz = gzipSync(tar);
  const s = await LayerStage.start(root, GZ, writes);
  for (let off = 0; off < gz.length; off += chunk) await s.push(gz.subarray(off, off + chunk));
  const r = await s.finish();
  return { ...r, root, diffId: `sha256:${createHash('sha256').update(tar).digest('hex')}` };
}

// Synchronous writes, and writes on libuv's pool out of two 4 KiB buffers (pooled-writes.ts): the
// 300 000-byte file takes both and goes on synchronously, the hard link's metadata waits for its target's writes.
for (const pooled of [false, true])
  test(`a layer of directories, files, symlinks and hard links is staged as containerd would unpack it${pooled ? ' (pooled writes)' : ''}`, async () => {
    const r = await stage(
      async (tw) => {
        await tw.directory('./', { mode: 0o755, mtime: T });
        await tw.directory('bin', { mode: 0o711, uid: 0, gid: 0, mtime: T });
        await tw.file('bin/tool', Buffer.alloc(9000, 'hello'), { mode: 0o4755, uid: 0, gid: 0, mtime: T + 1 });
        await tw.hardlink('bin/tool2', 'bin/tool', { mode: 0o750, uid: 1000, gid: 1000, mtime: T + 2 });
        await tw.symlink('bin/sh', 'tool', { mtime: T, uid: 1000, gid: 1000 });
        await tw.directory('home', { mode: 0o700, uid: 1000, gid: 1001, mtime: T + 5 });
        await tw.file('home/big', Buffer.alloc(300_000, 7), { mode: 0o600, uid: 1000, gid: 1001, mtime: T });
        await tw.file('bin/tool', 'replaced', { mode: 0o755, mtime: T }); // a later entry of the same path wins
      },
      1000,
      pooled ? new WriteBuffers(4096, 2) : null,
    );
    try {
      assert.ok(r.layer, r.reason);
      assert.equal(r.layer.diffId, r.diffId);
      const d = r.layer.dir;
      assert.equal((await lstat(d)).mode & 0o7777, 0o755);
      assert.equal((await lstat(join(d, 'bin'))).mode & 0o7777, 0o711);
      assert.equal(await readFile(join(d, 'bin/tool'), 'utf8'), 'replaced');
      assert.equal(await readFile(join(d, 'bin/tool2'), 'utf8'), Buffer.alloc(9000, 'hello').toString()); // linked to the first one
      const link = await lstat(join(d, 'bin/tool2')); // the link entry's metadata on the shared inode, after the file's
      assert.deepEqual([link.mode & 0o7777, link.uid, Math.floor(link.mtimeMs / 1000)], [0o750, 1000, T + 2]);
      assert.equal(await readlink(join(d, 'bin/sh')), 'tool');
      const sh = await lstat(join(d, 'bin/sh'));
      assert.deepEqual([sh.uid, sh.gid, Math.floor(sh.mtimeMs / 1000)], [1000, 1000, T]);
      const home = await lstat(join(d, 'home'));
      assert.deepEqual([home.mode & 0o7777, home.uid, home.gid, Math.floor(home.mtimeMs / 1000)], [0o700, 1000, 1001, T + 5]);
      const big = await lstat(join(d, 'home/big'));
      assert.deepEqual([big.size, big.mode & 0o7777, big.uid], [300_000, 0o600, 1000]);
      assert.ok((await readFile(join(d, 'home/big'))).equals(Buffer.alloc(300_000, 7)));
      const suid = await stage(async (tw) => tw.file('x', 'y', { mode: 0o4755, uid: 1000, gid: 0, mtime: T }));
      assert.equal((await lstat(join(suid.layer!.dir, 'x'))).mode & 0o7777, 0o4755); // set-id bits survive the chown
      await rm(suid.root, { recursive: true });
    } finally {
      await rm(r.root, { recursive: true });
    }
  });

test('whiteouts become 0:0 character devices, opaque markers the overlay xattr, text xattrs are set', async () => {
  const r = await stage(async (tw) => {
    await tw.directory('d', { mode: 0o755, mtime: T });
    await tw.file('d/.wh..wh..opq', '', { mtime: T });
    await tw.file('d/kept', 'k', { mtime: T });
    await tw.file('.wh.gone', '', { uid: 7, gid: 8, mtime: T });
    await tw.file('-dash', 'x', { mtime: T, pax: { 'SCHILY.xattr.user.note': 'hello' } });
  });
  try {
    assert.ok(r.layer, r.reason);
    const d = r.layer.dir;
    const wh = await lstat(join(d, 'gone'));
    assert.deepEqual([wh.isCharacterDevice(), wh.rdev, wh.mode & 0o7777, wh.uid, wh.gid], [true, 0, 0, 7, 8]);
    assert.deepEqual((await readdir(join(d, 'd'))).sort(), ['kept']); // the marker itself is not written
    const x = await run('getfattr', ['-h', '-d', '-m', '-', '-e', 'text', 'd', './-dash'], { cwd: d });
    assert.match(x.stdout, /trusted\.overlay\.opaque="y"/);
    assert.match(x.stdout, /user\.note="hello"/);
    assert.equal((await lstat(join(d, 'd'))).mtimeMs / 1000, T); // directory times set after the marks
  } finally {
    await rm(r.root, { recursive: true });
  }
});

test('layers the stage cannot reproduce exactly give up (the diff service does them), leaving nothing', async () => {
  const cases: Array<[string, (tw: TarWriter) => Promise<void>]> = [
    ['whiteout of an entry of the layer', async (tw) => (await tw.file('gone', 'x', { mtime: T }), tw.file('.wh.gone', '', { mtime: T }))],
    ['binary xattr', async (tw) => tw.file('ping', 'x', { mtime: T, pax: { 'SCHILY.xattr.security.capability': '\uFFFD\u0001' } })],
    ['device', async (tw) => tw.entry({ name: 'null', type: 'char', devmajor: 1, devminor: 3, mtime: T })],
    ['parent missing', async (tw) => tw.file('usr/bin/x', 'x', { mtime: T })],
    ['link out of the layer', async (tw) => tw.hardlink('x', 'etc/passwd', { mtime: T })],
  ];
  for (const [what, build] of cases) {
    const r = await stage(build);
    try {
      assert.equal(r.layer, null, what);
      assert.ok(r.reason, what);
      assert.deepEqual(await (await import('node:fs/promises')).readdir(r.root), [], `${what}: staging tree removed`);
    } finally {
      await rm(r.root, { recursive: true });
    }
  }
  const corrupt = await mkdtemp(join(tmpdir(), 'engine-stage-'));
  const s = await LayerStage.start(corrupt, GZ);
  await s.push(Buffer.from('not gzip at all'));
  assert.equal((await s.finish()).layer, null);
  await rm(corrupt, { recursive: true });
});

test('only tar and gzip layers are staged', () => {
  assert.ok(stageable(GZ));
  assert.ok(stageable('application/vnd.docker.image.rootfs.diff.tar.gzip'));
  assert.ok(stageable('application/vnd.oci.image.layer.v1.tar'));
  assert.ok(!stageable('application/vnd.oci.image.layer.v1.tar+zstd'));
});
