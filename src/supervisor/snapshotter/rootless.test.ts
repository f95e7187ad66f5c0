import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { tempDir, type TempDir } from '../../../test/helpers/temp-dir.ts';
import { findOnPath } from '../containerd-process.ts';
import { mountAll, unmount } from '../mounts.ts';
import { kernelOverlayMounts, rootlessDriver } from './rootless.ts';

let tmp: TempDir;
beforeEach(() => {
  tmp = tempDir('rl-overlay-');
});
afterEach(() => tmp.remove());

test('the choice: overlay2 where the kernel mounts an overlay, else fuse-overlayfs if the host has it', () => {
  assert.deepEqual(rootlessDriver({ ok: true }, null), { driver: 'overlay2' });
  assert.deepEqual(rootlessDriver({ ok: true }, 'needs x'), { driver: 'overlay2' });
  const fuse = rootlessDriver({ ok: false, error: 'mount: permission denied' }, null);
  assert.equal(fuse.driver, 'fuse-overlayfs');
  assert.match(fuse.note!, /kernel overlay does not mount in this user namespace \(mount: permission denied\): using fuse-overlayfs/);
  const none = rootlessDriver({ ok: false, error: 'EPERM' }, 'storage driver fuse-overlayfs needs mount.fuse3 (Debian package fuse3)');
  assert.equal(none.driver, 'overlay2');
  assert.match(none.note!, /\(EPERM\), and storage driver fuse-overlayfs needs mount\.fuse3/);
});

test('the check mounts a kernel overlay where one mounts, and leaves nothing behind', async () => {
  assert.deepEqual(await kernelOverlayMounts(tmp.dir), { ok: true });
  const { readdirSync } = await import('node:fs');
  assert.deepEqual(readdirSync(tmp.dir), []);
});

test(
  'the check reports the kernel’s refusal: an overlay whose upper directory is on a FUSE file system',
  {
    skip:
      !findOnPath('fuse-overlayfs', `${process.env.PATH}:/usr/bin`) || !existsSync('/dev/fuse') ? 'fuse-overlayfs not installed' : false,
  },
  async () => {
    const [lower, upper, work, fuse] = ['l', 'u', 'w', 'fuse'].map((d) => join(tmp.dir, d)) as [string, string, string, string];
    for (const d of [lower, upper, work, fuse]) mkdirSync(d);
    await mountAll(
      [{ type: 'fuse3.fuse-overlayfs', source: 'overlay', options: [`lowerdir=${lower}`, `upperdir=${upper}`, `workdir=${work}`] }],
      fuse,
    );
    try {
      const r = await kernelOverlayMounts(fuse);
      assert.equal(r.ok, false);
      assert.match((r as { error: string }).error, /mount/);
    } finally {
      await unmount(fuse);
    }
  },
);
