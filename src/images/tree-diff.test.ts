import assert from 'node:assert/strict';
import { existsSync, linkSync, lutimesSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { findOnPath } from '../supervisor/containerd-process.ts';
import { mountAll, readOnlyMounts, unmount } from '../supervisor/mounts.ts';
import { FuseOverlaySnapshotter } from '../supervisor/snapshotter/fuse-overlayfs.ts';
import type { Mount } from '../supervisor/types.ts';
import { TarWriter } from '../util/tar-writer.ts';
import { readXattrsOf, writeChangesTar } from './overlay-diff.ts';
import { readTar } from './tar-reader.ts';
import { CHANGE_DELETE, treeChanges } from './tree-diff.ts';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'engine-treediff-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The same small tree under both roots, with the times an image's files have (whole seconds). */
function twin(): { oldRoot: string; newRoot: string } {
  const oldRoot = join(dir, 'old');
  const newRoot = join(dir, 'new');
  for (const r of [oldRoot, newRoot]) {
    mkdirSync(join(r, 'etc/keep'), { recursive: true });
    mkdirSync(join(r, 'bin'), { recursive: true });
    writeFileSync(join(r, 'etc/passwd'), 'root\n');
    writeFileSync(join(r, 'etc/keep/a'), 'a\n');
    writeFileSync(join(r, 'bin/tool'), 'same size');
    symlinkSync('tool', join(r, 'bin/alias'));
    lutimesSync(join(r, 'bin/alias'), 1704067200, 1704067200); // a symlink's own time, as an image's
    for (const p of ['etc/passwd', 'etc/keep/a', 'bin/tool', 'etc/keep', 'etc', 'bin']) utimesSync(join(r, p), 1704067200, 1704067200);
  }
  return { oldRoot, newRoot };
}

describe('two trees compared by metadata, as dockerd', () => {
  test('additions, deletions, modifications, parents listed before children; contents never read', async () => {
    const { oldRoot, newRoot } = twin();
    writeFileSync(join(newRoot, 'etc/keep/a'), 'a\nmore\n');
    rmSync(join(newRoot, 'etc/passwd'));
    mkdirSync(join(newRoot, 'new/sub'), { recursive: true });
    writeFileSync(join(newRoot, 'new/sub/f'), 'f');
    // Same size and mtime, other content: not a change (dockerd compares no contents either).
    writeFileSync(join(newRoot, 'bin/tool'), 'SAME SIZE');
    utimesSync(join(newRoot, 'bin/tool'), 1704067200, 1704067200);
    utimesSync(join(newRoot, 'bin'), 1704067200, 1704067200);
    const changes = (await treeChanges(oldRoot, newRoot)).map((c) => `${'CAD'[c.Kind]} ${c.Path}`);
    assert.deepEqual(changes, ['C /etc', 'C /etc/keep', 'C /etc/keep/a', 'D /etc/passwd', 'A /new', 'A /new/sub', 'A /new/sub/f']);
  });

  test('the change list as a layer tar: whiteouts, directory headers, contents, hard links within the layer', async () => {
    const { oldRoot, newRoot } = twin();
    rmSync(join(newRoot, 'etc/passwd'));
    writeFileSync(join(newRoot, 'etc/keep/b'), 'bee');
    linkSync(join(newRoot, 'etc/keep/b'), join(newRoot, 'etc/keep/b2'));
    symlinkSync('../bin/tool', join(newRoot, 'etc/link'));
    const changes = await treeChanges(oldRoot, newRoot);
    const xattrs = await readXattrsOf(changes.filter((c) => c.Kind !== CHANGE_DELETE).map((c) => join(newRoot, c.Path)));
    assert.ok(xattrs, 'getfattr is installed (Debian attr)');
    const chunks: Buffer[] = [];
    await writeChangesTar(newRoot, changes, xattrs, new TarWriter((c) => void chunks.push(Buffer.from(c))));
    const got: string[] = [];
    for await (const e of readTar([Buffer.concat(chunks)])) {
      let data = '';
      for await (const c of e.body) data += c.toString();
      got.push(`${e.header.kind}:${e.header.name}${e.header.linkname ? `->${e.header.linkname}` : ''}${data ? `=${data}` : ''}`);
    }
    assert.deepEqual(got, [
      'directory:etc/',
      'directory:etc/keep/',
      'file:etc/keep/b=bee',
      'link:etc/keep/b2->etc/keep/b',
      'symlink:etc/link->../bin/tool',
      'file:etc/.wh.passwd',
    ]);
  });
});

describe('on fuse-overlayfs mounts (the fuse-overlayfs storage driver: docker diff and commit)', () => {
  const skip = !findOnPath('fuse-overlayfs', `${process.env.PATH}:/usr/bin`)
    ? 'fuse-overlayfs is not installed (Debian package fuse-overlayfs)'
    : !existsSync('/dev/fuse')
      ? 'no /dev/fuse'
      : false;

  test('a directory replaced by a new one of the same name: what the old one held is deleted', { skip }, async () => {
    const s = await FuseOverlaySnapshotter.open(join(dir, 'root'));
    const mounted: string[] = [];
    const mountAt = async (mounts: Mount[], name: string) => {
      const target = join(dir, name);
      mkdirSync(target);
      await mountAll(mounts, target);
      mounted.push(target);
      return target;
    };
    try {
      writeFileSync(join((await s.prepare('a1', ''))[0]!.source, 'top'), '1');
      await s.commit('L1', 'a1');
      // The layer is written through a FUSE mount, as a pull unpacks it: its new directories are
      // marked opaque there (what makes fuse-overlayfs before 1.15 show the old entries by name).
      const l2 = await mountAt(await s.prepare('a2', 'L1'), 'l2');
      mkdirSync(join(l2, 'data/keep'), { recursive: true });
      writeFileSync(join(l2, 'data/keep/a'), 'a\n');
      await unmount(l2);
      await s.commit('L2', 'a2');
      const c = await s.prepare('c', 'L2');
      const root = await mountAt(c, 'rootfs');
      rmSync(join(root, 'data/keep'), { recursive: true });
      mkdirSync(join(root, 'data/keep'));
      writeFileSync(join(root, 'data/keep/b'), 'b\n');
      await unmount(root);

      const oldRoot = await mountAt(await s.view('v', 'L2'), 'old');
      const newRoot = await mountAt(readOnlyMounts(c), 'new');
      const changes = await treeChanges(oldRoot, newRoot);
      assert.deepEqual(
        changes.map((x) => `${x.Kind} ${x.Path}`),
        ['0 /data', '0 /data/keep', '2 /data/keep/a', '1 /data/keep/b'],
      );
    } finally {
      for (const m of mounted) await unmount(m);
      s.close();
    }
  });
});
