// A container's root file system of a FUSE snapshotter (fuse-overlayfs) is mounted by the daemon
// under the container's directory and handed to the task as a bind mount. containerd 1.6's shim
// would mount it itself through mount.fuse3, but the shim reaps every child on SIGCHLD and the mount
// helper's own wait then fails with ECHILD (containerd's retries lose the same race under load:
// "failed with ECHILD (retired 10 times)"); a bind mount is a plain mount(2) call. The FUSE server
// outlives the daemon, so a container survives a daemon restart on it.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fuseProgram, isMounted, mountAll, unmount } from '../../../supervisor/mounts.ts';
import type { Mount } from '../../../supervisor/types.ts';

/** Where a container's FUSE root file system is mounted on the host. */
export function fuseRootPath(containerDir: string): string {
  return join(containerDir, 'mounts', 'rootfs');
}

/**
 * The rootfs to give Tasks.Create: the snapshot's mounts, or, for a FUSE snapshot, a bind of the
 * daemon's own mount of it (a fresh one: a leftover's server may be gone).
 */
export async function taskRootfs(mounts: Mount[], containerDir: string): Promise<Mount[]> {
  if (mounts.length !== 1 || !fuseProgram(mounts[0]!.type)) return mounts;
  const path = fuseRootPath(containerDir);
  await mkdir(path, { recursive: true, mode: 0o755 });
  if (isMounted(path)) await unmount(path);
  await mountAll(mounts, path);
  return [{ type: 'bind', source: path, options: ['rbind', 'rw'] }];
}

/** Detaches it (lazily: the shim may still hold its bind for a moment); never throws. */
export async function unmountFuseRoot(containerDir: string): Promise<void> {
  const path = fuseRootPath(containerDir);
  // No directory, no mount: /proc/self/mountinfo is not read for containers of other drivers.
  if (existsSync(path) && isMounted(path)) await unmount(path);
}
