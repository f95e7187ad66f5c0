// /dev/shm for IpcMode "shareable": a tmpfs the daemon mounts under the container's directory and
// bind-mounts into it, so that containers joining its IPC namespace (IpcMode "container:<id>") can
// bind the same one (as dockerd). "private" needs none of this: runc mounts a tmpfs itself.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isMounted } from '../../../supervisor/mounts.ts';
import { runCommand } from '../../../util/helper-shell.ts';

/** Where a container's shareable /dev/shm lives on the host. */
export function shmPath(containerDir: string): string {
  return join(containerDir, 'mounts', 'shm');
}

/** Mounts the tmpfs (idempotent: a leftover mount from an earlier run is reused). */
export async function mountShm(path: string, sizeBytes: number): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o755 });
  if (isMounted(path)) return;
  await runCommand('mount', ['-t', 'tmpfs', '-o', `mode=1777,nosuid,nodev,noexec,size=${sizeBytes}`, 'shm', path]);
}

/** Unmounts it if mounted; never throws (called from clean-up paths). */
export async function unmountShm(path: string): Promise<void> {
  // No directory, no mount on it: /proc/self/mountinfo (slow to read with many mounts) is skipped.
  if (!existsSync(path)) return;
  try {
    if (isMounted(path)) await runCommand('umount', ['-l', path]);
  } catch {
    // umount fails (not mounted, EINVAL) or the directory went meanwhile (ENOENT): nothing to detach
  }
}
