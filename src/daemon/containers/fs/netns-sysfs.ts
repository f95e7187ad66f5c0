// /sys for a container in a remapped user namespace that joins a network namespace made outside it
// (ours, bound under exec-root/netns, or another container's): the kernel lets only a holder of
// CAP_SYS_ADMIN over the network namespace's owner mount a sysfs, so runc's own mount fails with
// EPERM. The daemon mounts one while inside that network namespace (nsenter --net), so it shows
// the container's interfaces, and the spec binds it read-only at /sys.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isMounted } from '../../../supervisor/mounts.ts';
import { runCommand } from '../../../util/helper-shell.ts';

/** Where that sysfs is mounted on the host. */
export function sysfsPath(containerDir: string): string {
  return join(containerDir, 'mounts', 'sys');
}

/** Mounts it for the namespace at `netns` (idempotent: a leftover from an earlier run is replaced). */
export async function mountNetnsSysfs(netns: string, path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o755 });
  if (isMounted(path)) await runCommand('umount', ['-l', path]);
  await runCommand('nsenter', [`--net=${netns}`, 'mount', '-t', 'sysfs', '-o', 'ro,nosuid,nodev,noexec', 'sysfs', path]);
}

/** Unmounts it (the mount holds a reference on the network namespace); never throws. */
export async function unmountNetnsSysfs(path: string): Promise<void> {
  // No directory, no mount on it: /proc/self/mountinfo (slow to read with many mounts) is skipped.
  if (!existsSync(path)) return;
  try {
    if (isMounted(path)) await runCommand('umount', ['-l', path]);
  } catch {
    // umount fails (not mounted, EINVAL) or the directory went meanwhile (ENOENT): nothing to detach
  }
}
