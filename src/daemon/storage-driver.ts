// --storage-driver → containerd snapshotter. overlay2 is containerd's overlayfs; the others map to
// their snapshotters and fail with a clear message where the backing filesystem or binary is missing.
import { accessSync, constants, statfsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { invalidParameter } from '../errors.ts';
import { btrfsMinSpace } from './containers/fs/layer-size.ts';
import type { SupervisorClient } from '../supervisor/client.ts';

const SNAPSHOTTERS: Record<string, string> = {
  overlay2: 'overlayfs',
  'fuse-overlayfs': 'fuse-overlayfs',
  btrfs: 'btrfs',
  zfs: 'zfs',
};

const FS_NAMES: Record<number, string> = {
  0x58465342: 'xfs',
  0xef53: 'extfs',
  0x9123683e: 'btrfs',
  0x01021994: 'tmpfs',
  0x794c7630: 'overlayfs',
  0x2fc12fc1: 'zfs',
  0x6969: 'nfs',
  0x65735546: 'fuse',
};

/** The filesystem type of the nearest existing ancestor of `path` (the data root may not exist yet). */
export function backingFs(path: string): string {
  for (let p = path; ; p = dirname(p)) {
    try {
      const type = Number(statfsSync(p).type);
      return FS_NAMES[type] ?? `0x${type.toString(16)}`;
    } catch {
      if (p === dirname(p)) return 'unknown';
    }
  }
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // ENOENT or EACCES: not in this directory
      return false;
    }
  });
}

/**
 * Storage options the snapshotter could honour: btrfs.min_space (the daemon applies containers'
 * size limits itself); containerd 1.6's snapshotters take none per daemon, so the rest are refused
 * with the reason (overlay2.size: xfs with pquota, and even there no quota support
 * in containerd's overlayfs snapshotter).
 */
function checkStorageOpts(driver: string, opts: string[], dataRoot: string): void {
  if (driver === 'btrfs') {
    btrfsMinSpace(opts); // btrfs.min_space: containers' size limits (containers/fs/layer-size.ts)
    return;
  }
  for (const opt of opts) {
    const key = opt.split('=')[0]!.trim().toLowerCase();
    if (key === 'overlay2.size' && driver === 'overlay2') {
      const fs = backingFs(dataRoot);
      if (fs !== 'xfs')
        throw invalidParameter(
          `storage-opt overlay2.size: only supported on an xfs backing filesystem mounted with pquota; ${dataRoot} is on ${fs}`,
        );
      throw invalidParameter(
        'storage-opt overlay2.size: the overlayfs snapshotter of this containerd has no project-quota support (xfs with pquota is not enough here)',
      );
    }
    throw invalidParameter(`storage-opt ${key} is not supported by the ${driver} driver on this daemon`);
  }
}

export async function snapshotterFor(
  client: SupervisorClient,
  driver: string,
  storageOpts: string[],
  dataRoot = '/var/lib/engine',
): Promise<string> {
  const snapshotter = SNAPSHOTTERS[driver];
  if (!snapshotter) throw invalidParameter(`unknown storage driver: ${driver} (supported: ${Object.keys(SNAPSHOTTERS).join(', ')})`);
  checkStorageOpts(driver, storageOpts, dataRoot);
  const plugins = await client.introspection.plugins([`type==io.containerd.snapshotter.v1`]);
  const p = plugins.find((x) => x.id === snapshotter);
  if (!p) {
    if (driver === 'fuse-overlayfs') {
      throw invalidParameter(
        `storage driver fuse-overlayfs: the fuse-overlayfs snapshotter is not available in this containerd (the daemon serves it to the containerd it runs itself; a containerd given with --supervisor needs a proxy plugin named fuse-overlayfs in its config)` +
          (onPath('fuse-overlayfs') ? '' : '; the fuse-overlayfs binary is not installed either'),
      );
    }
    throw invalidParameter(`storage driver ${driver}: the ${snapshotter} snapshotter is not available in this containerd`);
  }
  const initErr = (p as { init_err?: { message?: string } | null }).init_err;
  if (initErr && initErr.message)
    throw invalidParameter(`storage driver ${driver} is not usable here: ${initErr.message.replace(/: skip plugin$/, '')}`);
  return snapshotter;
}
