// What a host needs for the fuse-overlayfs storage driver, checked before anything starts (its own
// module: rootless mode's driver choice asks it without loading the gRPC server).
import { accessSync, constants } from 'node:fs';
import { findOnPath } from '../containerd-process.ts';

/** What the host lacks to run the driver (one sentence), or null. `envPath` and `device`: for tests. */
export function fuseOverlayfsMissing(envPath = process.env.PATH ?? '', device = '/dev/fuse'): string | null {
  const missing: string[] = [];
  if (!findOnPath('fuse-overlayfs', envPath)) missing.push('the fuse-overlayfs program (Debian package fuse-overlayfs)');
  // containerd's shim mounts a container's root file system through this helper.
  if (!findOnPath('mount.fuse3', envPath)) missing.push('mount.fuse3 (Debian package fuse3)');
  try {
    accessSync(device, constants.R_OK | constants.W_OK);
  } catch {
    // absent, or not ours to open: the kernel's FUSE device is what every mount needs
    missing.push('a usable /dev/fuse (the fuse kernel module)');
  }
  return missing.length ? `storage driver fuse-overlayfs needs ${missing.join(', ')}` : null;
}
