// The snapshotter's mounts mounted for real (the daemon's own mounts: commit, export, docker cp):
// fuse-overlayfs with the layers below, changes in the upper directory, a read-only second view.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { tempDir, type TempDir } from '../../../test/helpers/temp-dir.ts';
import { findOnPath } from '../containerd-process.ts';
import { isMounted, mountAll, readOnlyMounts, unmount } from '../mounts.ts';
import { FuseOverlaySnapshotter } from './fuse-overlayfs.ts';

const skip = !findOnPath('fuse-overlayfs', `${process.env.PATH}:/usr/bin`)
  ? 'fuse-overlayfs is not installed (Debian package fuse-overlayfs)'
  : !existsSync('/dev/fuse')
    ? 'no /dev/fuse'
    : false;

let tmp: TempDir;
let s: FuseOverlaySnapshotter;
const mounted: string[] = [];
beforeEach(async () => {
  tmp = tempDir('fuse-mount-');
  s = await FuseOverlaySnapshotter.open(join(tmp.dir, 'root'));
});
afterEach(async () => {
  for (const m of mounted.splice(0)) await unmount(m);
  s.close();
  tmp.remove();
});

async function mountAt(mounts: Parameters<typeof mountAll>[0], name: string): Promise<string> {
  const target = join(tmp.dir, name);
  mkdirSync(target);
  await mountAll(mounts, target);
  mounted.push(target);
  return target;
}

test('an active snapshot on two layers: the layers merged, writes and deletions land in its upper directory', { skip }, async () => {
  const l1 = (await s.prepare('a1', ''))[0]!.source;
  writeFileSync(join(l1, 'one'), '1');
  writeFileSync(join(l1, 'gone'), 'x');
  await s.commit('L1', 'a1');
  const m2 = await s.prepare('a2', 'L1');
  const t2 = await mountAt(m2, 'm2');
  assert.ok(isMounted(t2));
  writeFileSync(join(t2, 'two'), '2');
  await unmount(t2);
  await s.commit('L2', 'a2');

  const m3 = await s.prepare('c', 'L2');
  const root = await mountAt(m3, 'rootfs');
  assert.deepEqual(readdirSync(root).sort(), ['gone', 'one', 'two']);
  writeFileSync(join(root, 'three'), '3');
  writeFileSync(join(root, 'one'), 'changed');
  const { rmSync } = await import('node:fs');
  rmSync(join(root, 'gone'));
  const upper = m3[0]!.options.find((o) => o.startsWith('upperdir='))!.slice('upperdir='.length);
  assert.deepEqual(readdirSync(upper).sort(), ['gone', 'one', 'three']);
  const wh = lstatSync(join(upper, 'gone'));
  assert.ok(wh.isCharacterDevice() && wh.rdev === 0, 'a deletion is an overlay whiteout (0/0 character device)');
  assert.equal(readFileSync(join(l1, 'one'), 'utf8'), '1', 'the layer below is untouched');

  // A second, read-only mount of the same snapshot beside the first (commit, docker cp).
  const ro = readOnlyMounts(m3);
  assert.ok(!ro[0]!.options.some((o) => o.startsWith('upperdir=') || o.startsWith('workdir=')));
  const view = await mountAt(ro, 'view');
  assert.deepEqual(readdirSync(view).sort(), ['one', 'three', 'two']);
  assert.equal(readFileSync(join(view, 'one'), 'utf8'), 'changed');
  assert.throws(() => writeFileSync(join(view, 'x'), 'x'), /EROFS|read-only/i);
  await unmount(view);
  await unmount(root);
  assert.ok(!isMounted(root));
});

test('a view of a chain mounts read-only', { skip }, async () => {
  writeFileSync(join((await s.prepare('a1', ''))[0]!.source, 'one'), '1');
  await s.commit('L1', 'a1');
  const m2 = await s.prepare('a2', 'L1');
  writeFileSync(join(m2[0]!.options.find((o) => o.startsWith('upperdir='))!.slice(9), 'two'), '2');
  await s.commit('L2', 'a2');
  const v = await mountAt(await s.view('v', 'L2'), 'v');
  assert.deepEqual(readdirSync(v).sort(), ['one', 'two']);
  assert.throws(() => writeFileSync(join(v, 'x'), 'x'), /EROFS|read-only|EACCES|EPERM/i);
});
