// Rootless mode's storage driver when none is configured: overlay2 where the kernel mounts an
// overlay inside the user namespace (Linux 5.11 and later, or distributions that allowed it before),
// else fuse-overlayfs when the host has it — dockerd-rootless makes the same choice by trying its
// drivers in order. The check mounts a throwaway overlay under the data root's tmp directory (the
// backing filesystem matters too) as the daemon is then placed: root of rootlesskit's namespaces.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandError, runCommand } from '../../util/helper-shell.ts';
import { unmount } from '../mounts.ts';

/** Whether a kernel overlay mounts here; the mount's error when it does not. */
export async function kernelOverlayMounts(tmpDir: string): Promise<{ ok: true } | { ok: false; error: string }> {
  const dir = await mkdtemp(join(tmpDir, 'overlay-check-'));
  try {
    const [lower, upper, work, merged] = ['lower', 'upper', 'work', 'merged'].map((d) => join(dir, d)) as [string, string, string, string];
    for (const d of [lower, upper, work, merged]) await mkdir(d);
    let error = '';
    // userxattr: what an unprivileged overlay needs on kernels that have it (containerd adds it too).
    for (const extra of [[], ['userxattr']]) {
      try {
        await runCommand('mount', [
          '-t',
          'overlay',
          'overlay',
          '-o',
          [`lowerdir=${lower}`, `upperdir=${upper}`, `workdir=${work}`, ...extra].join(','),
          merged,
        ]);
        await unmount(merged);
        return { ok: true };
      } catch (err) {
        // mount's first line ("mount: <dir>: wrong fs type, …"), not the whole command line.
        error = err instanceof CommandError ? err.stderr.trim().split('\n')[0]! : (err as Error).message;
      }
    }
    return { ok: false, error };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined); // an empty throwaway under tmp, emptied at every start
  }
}

/** The driver rootless mode takes, and the line that says why when it is not overlay2. */
export function rootlessDriver(
  overlay: { ok: true } | { ok: false; error: string },
  fuseMissing: string | null,
): { driver: 'overlay2' | 'fuse-overlayfs'; note?: string } {
  if (overlay.ok) return { driver: 'overlay2' };
  if (!fuseMissing)
    return {
      driver: 'fuse-overlayfs',
      note: `kernel overlay does not mount in this user namespace (${overlay.error}): using fuse-overlayfs`,
    };
  return { driver: 'overlay2', note: `kernel overlay does not mount in this user namespace (${overlay.error}), and ${fuseMissing}` };
}
