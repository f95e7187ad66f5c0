// Issue 16 (pull): layers unpacked while they download (stage-pool.ts, staged-unpack.ts, the default)
// must come out exactly as containerd's diff service unpacks them. One image of four layers is
// pulled by two daemons, one staging and one with ENGINE_PULL_UNPACK=service, and each layer's
// snapshot directory is walked on both: names, types, modes, owners, sizes, mtimes, link targets,
// hard-link groups, devices and xattrs (whiteouts, opaque directories). A layer the stage does not
// reproduce (a symlink leading out) goes through the diff service on both. An entry leading out of
// its layer (`../evil`) makes the pull fail.
import assert from 'node:assert/strict';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { tarToBuffer, type TarWriter } from '../../src/util/tar-writer.ts';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { pushRawImage, sha256, startRegistry, type TestRegistry } from '../helpers/registry.ts';

const GZ = 'application/vnd.oci.image.layer.v1.tar+gzip';
const T = Date.UTC(2024, 0, 1) / 1000;

const LAYERS: Array<(tw: TarWriter) => Promise<void>> = [
  // Staged: directories, files (set-id, mode 0, empty, large), hard links, symlinks, owners, times.
  async (tw) => {
    await tw.directory('./', { mode: 0o755, mtime: T });
    await tw.directory('bin', { mode: 0o711, mtime: T });
    await tw.file('bin/tool', 'hello', { mode: 0o4755, mtime: T });
    await tw.hardlink('bin/tool2', 'bin/tool', { mtime: T });
    await tw.symlink('bin/sh', 'tool', { mtime: T, uid: 1000, gid: 1000 });
    await tw.symlink('passwd-link', '/etc/passwd', { mtime: T });
    await tw.directory('etc', { mode: 0o755, mtime: T + 1 });
    await tw.file('etc/passwd', 'root:x:0:0::/root:/bin/sh\n', { mode: 0o644, mtime: T });
    await tw.file('etc/gone', 'x', { mode: 0o644, mtime: T });
    await tw.file('etc/secret', 's', { mode: 0, mtime: T });
    await tw.file('etc/empty', '', { mode: 0o600, mtime: T });
    await tw.file('f2d', 'a file, later a directory', { mtime: T });
    await tw.directory('d2f', { mtime: T });
    await tw.file('d2f/child', 'c', { mtime: T });
    await tw.directory('opq', { mode: 0o750, uid: 1000, gid: 1000, mtime: T });
    await tw.file('opq/a', 'a', { mtime: T });
    await tw.file('opq/b', 'b', { mtime: T });
    await tw.directory('home', { mode: 0o700, uid: 1000, gid: 1001, mtime: T + 5 });
    await tw.file('home/big', Buffer.alloc(3_000_000, 7), { mode: 0o600, uid: 1000, gid: 1001, mtime: T });
  },
  // Staged: whiteouts (0:0 character devices) and an opaque directory (trusted.overlay.opaque).
  async (tw) => {
    await tw.directory('etc', { mode: 0o755, mtime: T + 10 });
    await tw.file('etc/.wh.gone', '', { mtime: T });
    await tw.directory('opq', { mode: 0o755, mtime: T + 10 });
    await tw.file('opq/.wh..wh..opq', '', { mtime: T });
    await tw.file('opq/c', 'c', { mtime: T });
  },
  // Staged: a file replaced by a directory and a directory by a file, a path written twice.
  async (tw) => {
    await tw.directory('f2d', { mode: 0o755, mtime: T + 20 });
    await tw.file('f2d/child', 'child', { mtime: T + 20 });
    await tw.file('d2f', 'now a file', { mode: 0o640, mtime: T + 20 });
    await tw.file('twice', 'first', { mtime: T + 20 });
    await tw.file('twice', 'second', { mode: 0o600, mtime: T + 21 });
    await tw.file('ping', 'ping', { mode: 0o755, mtime: T + 22, pax: { 'SCHILY.xattr.user.engine-test': 'yes' } });
    await tw.file('.wh.home', '', { uid: 1000, gid: 1001, mtime: T + 22 });
  },
  // A symlink leading out of the root: the diff service on both sides.
  async (tw) => {
    await tw.symlink('up', '../../..', { mtime: T + 30 });
    await tw.file('plain', 'p', { mtime: T + 30 });
  },
];

interface Entry {
  path: string;
  what: string;
}

/** Every entry under `root` with what containerd's applier sets, and hard-link groups. */
async function walk(root: string): Promise<Entry[]> {
  const out: Entry[] = [];
  const inodes = new Map<number, string>();
  const visit = async (rel: string) => {
    const abs = rel ? join(root, rel) : root;
    const st = await lstat(abs);
    const type = st.isDirectory()
      ? 'dir'
      : st.isFile()
        ? 'file'
        : st.isSymbolicLink()
          ? 'symlink'
          : st.isCharacterDevice()
            ? 'char'
            : 'other';
    // The layer's root keeps the time the snapshot was filled (not the tar's `./` entry), and a
    // whiteout the time it was made: "recent".
    const whiteout = st.isCharacterDevice() && st.rdev === 0;
    const mtime = (rel === '' || whiteout) && Math.abs(Date.now() - st.mtimeMs) < 3600_000 ? 'recent' : Math.floor(st.mtimeMs / 1000);
    let what = `${type} mode=${(st.mode & 0o7777).toString(8)} owner=${st.uid}:${st.gid} mtime=${mtime}`;
    if (type === 'file') {
      what += ` size=${st.size}`;
      if (st.nlink > 1) {
        const first = inodes.get(st.ino);
        if (first) what += ` link=${first}`;
        else inodes.set(st.ino, rel);
      }
    }
    if (type === 'symlink') what += ` -> ${await readlink(abs)}`;
    if (type === 'char') what += ` rdev=${st.rdev}`;
    out.push({ path: rel || '.', what });
    if (type === 'dir') for (const n of (await readdir(abs)).sort()) await visit(rel ? `${rel}/${n}` : n);
  };
  await visit('');
  // xattrs (trusted.overlay.opaque among them), without following symlinks.
  const x = await run('getfattr', ['-R', '-P', '-h', '-d', '-m', '-', '-e', 'hex', '.'], { cwd: root });
  for (const block of x.stdout.split(/\n\n/).filter((b) => b.trim())) {
    const [head, ...attrs] = block.trim().split('\n');
    const path = head!.replace(/^# file: \.\/?/, '') || '.';
    out.push({ path, what: `xattrs ${attrs.sort().join(' ')}` });
  }
  return out;
}

/** The snapshot directories of an image's layers, bottom first, through a view of its top. */
async function layerDirs(d: TestDaemon, chainTop: string, n: number): Promise<{ dirs: string[]; done: () => Promise<void> }> {
  const c = new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
  const key = `walk-${Date.now()}`;
  const mounts = await c.snapshots.view({ key, parent: chainTop });
  const m = mounts[0]!;
  const dirs =
    m.type === 'bind'
      ? [m.source]
      : m.options
          .find((o) => o.startsWith('lowerdir='))!
          .slice('lowerdir='.length)
          .split(':')
          .reverse();
  assert.equal(dirs.length, n);
  return {
    dirs,
    done: async () => {
      await c.snapshots.remove(key).catch(() => undefined);
      c.close();
    },
  };
}

function chainTop(diffIds: string[]): string {
  let chain = diffIds[0]!;
  for (const id of diffIds.slice(1)) chain = sha256(`${chain} ${id}`);
  return chain;
}

describe('pull: layers staged while they download match the diff service', { timeout: 240_000 }, () => {
  let registry: TestRegistry;
  let staged: TestDaemon;
  let service: TestDaemon;
  const diffIds: string[] = [];
  before(async () => {
    registry = await startRegistry();
    const layers = [];
    for (const build of LAYERS) {
      const tar = await tarToBuffer(build);
      diffIds.push(sha256(tar));
      layers.push({ mediaType: GZ, data: gzipSync(tar) });
    }
    const config = { architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'] }, rootfs: { type: 'layers', diff_ids: diffIds } };
    await pushRawImage(`http://${registry.host}`, 'staged', 'v1', { config, layers });
    const evil = await tarToBuffer(async (tw) => {
      await tw.file('ok', 'ok', { mtime: T });
      await tw.file('../evil', 'evil', { mtime: T });
    });
    await pushRawImage(`http://${registry.host}`, 'evil', 'v1', {
      config: { architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [sha256(evil)] } },
      layers: [{ mediaType: GZ, data: gzipSync(evil) }],
    });
    [staged, service] = await Promise.all([
      startDaemon({ args: ['--debug'] }),
      startDaemon({ args: ['--debug'], env: { ...process.env, ENGINE_PULL_UNPACK: 'service' } }),
    ]);
  });
  after(async () => {
    await Promise.all([staged?.cleanup(), service?.cleanup()]);
    await registry?.cleanup();
  });

  test('every layer of the pulled image is the same tree on both daemons', async () => {
    const ref = `${registry.host}/staged:v1`;
    for (const d of [staged, service]) {
      const r = await d.docker(['pull', ref]);
      assert.equal(r.code, 0, r.stderr);
    }
    // The staging daemon did stage the layers it can (else this compares the diff service with itself).
    const fallback = [...staged.output.matchAll(/layer (sha256:[0-9a-f]+) goes through the diff service/g)].map((m) => m[1]);
    assert.equal(fallback.length, 1, `layer 4 only: ${fallback.join(', ')}`);
    const top = chainTop(diffIds);
    const a = await layerDirs(staged, top, LAYERS.length);
    const b = await layerDirs(service, top, LAYERS.length);
    try {
      for (let i = 0; i < LAYERS.length; i++) {
        const [wa, wb] = [await walk(a.dirs[i]!), await walk(b.dirs[i]!)];
        assert.deepEqual(wa, wb, `layer ${i + 1}`);
        assert.ok(wa.length > 1, `layer ${i + 1} has entries`);
      }
      // What the whiteout layer holds, so the comparison above covered them.
      const wl = (await walk(b.dirs[1]!)).map((e) => `${e.path} ${e.what}`).join('\n');
      assert.match(wl, /etc\/gone char .*owner=0:0.*rdev=0/);
      assert.match(wl, /opq xattrs .*trusted\.overlay\.opaque=0x79/);
      const l3 = (await walk(b.dirs[2]!)).map((e) => `${e.path} ${e.what}`).join('\n');
      assert.match(l3, /home char .*owner=1000:1001.*rdev=0/);
      assert.match(l3, /ping xattrs user\.engine-test=0x796573/);
    } finally {
      await a.done();
      await b.done();
    }
  });

  test('a layer with an entry leading out of it is refused', async () => {
    const r = await staged.docker(['pull', `${registry.host}/evil:v1`]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /failed to register layer: invalid tar archive: "\.\.\/evil" is outside of the layer/);
    const images = await staged.docker(['images', '-q', `${registry.host}/evil`]);
    assert.equal(images.stdout.trim(), '');
  });
});
