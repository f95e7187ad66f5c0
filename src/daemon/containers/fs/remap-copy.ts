// The remapped copy of an image's filesystem for --userns-remap: the chain's merged tree copied
// (cp -a: hard links, symlinks, devices, modes, times) into a parentless snapshot, then every entry's
// owner shifted into the remapped range. containerd 1.6's overlayfs snapshotter has no uid-mapping
// option and runc 1.1 cannot idmap a rootfs, so — as containerd's own WithRemappedSnapshot does —
// the remapped container root must find its files owned by mapped ids on disk.
import { execFile } from 'node:child_process';
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { IdentityMap } from '../../../oci/userns.ts';

const execFileP = promisify(execFile);

/**
 * Copies `src` (a read-only view of the chain) into `dst` (an empty writable snapshot) and shifts
 * owners. lchown drops set-user-id/set-group-id bits of files, so modes are written back; file
 * capabilities (security.capability) are dropped by the kernel on chown and not restored: a v2
 * capability set would not apply inside the remapped namespace anyway.
 */
export async function copyRemapped(src: string, dst: string, map: IdentityMap): Promise<void> {
  try {
    await execFileP('cp', ['-a', '--', `${src}/.`, `${dst}/`], { maxBuffer: 4 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`copying the image for the remapped root ${map.key}: ${(e.stderr || e.message).trim()}`, { cause: err });
  }
  await shiftOwners(dst, map);
}

/** Every entry below (and including) `root` gets owner toHost(uid), toHost(gid); hard links once. */
export async function shiftOwners(root: string, map: IdentityMap): Promise<void> {
  const seen = new Set<string>();
  const visit = async (path: string): Promise<void> => {
    const st = await lstat(path);
    const inode = `${st.dev}:${st.ino}`;
    if (!seen.has(inode)) {
      seen.add(inode);
      await lchown(path, map.toHostUid(st.uid), map.toHostGid(st.gid));
      if (!st.isSymbolicLink() && (st.mode & 0o6000) !== 0) await chmod(path, st.mode & 0o7777);
    }
    if (st.isDirectory()) {
      for (const name of await readdir(path)) await visit(join(path, name));
    }
  };
  await visit(root);
}
