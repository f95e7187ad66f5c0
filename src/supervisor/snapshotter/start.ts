// The fuse-overlayfs storage driver's snapshotter as the daemon runs it: what the host must have
// (checked before anything starts, so a host that cannot serve the driver fails the start with one
// line), the store under <data-root>/fuse-overlayfs, and its gRPC server on
// <exec-root>/fuse-overlayfs/snapshotter.sock, started before containerd so that containerd's first
// call to the proxy plugin finds it listening.
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../util/log.ts';
import { findOnPath } from '../containerd-process.ts';
import { FuseOverlaySnapshotter } from './fuse-overlayfs.ts';
import { serveSnapshotter } from './server.ts';

/** The proxy plugin's name: containerd's snapshotter id, as the storage driver maps it. */
export const FUSE_SNAPSHOTTER = 'fuse-overlayfs';

export interface RunningSnapshotter {
  name: string;
  address: string;
  close(): Promise<void>;
}

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

export async function startFuseSnapshotter(o: { dataRoot: string; execRoot: string; log: Logger }): Promise<RunningSnapshotter> {
  const log = o.log.child({ module: 'fuse-overlayfs' });
  const snapshotter = await FuseOverlaySnapshotter.open(join(o.dataRoot, 'fuse-overlayfs'), {
    warn: (message, fields) => log.warn(message, fields),
  });
  try {
    const server = await serveSnapshotter(snapshotter, join(o.execRoot, 'fuse-overlayfs', 'snapshotter.sock'), FUSE_SNAPSHOTTER);
    log.debug('fuse-overlayfs snapshotter listening', { address: server.address });
    let closing: Promise<void> | undefined;
    return {
      name: FUSE_SNAPSHOTTER,
      address: server.address,
      // Once: a failed start-up reaches it both from the service runner and from engined.ts.
      close: () => (closing ??= server.close().then(() => snapshotter.close())),
    };
  } catch (err) {
    snapshotter.close();
    throw err;
  }
}
