// --storage-driver → containerd snapshotter. overlay2 is containerd's overlayfs; the others map to
// their snapshotters and fail with a clear message where the backing filesystem or binary is missing.
import { invalidParameter } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';

const SNAPSHOTTERS: Record<string, string> = {
  overlay2: 'overlayfs',
  'fuse-overlayfs': 'fuse-overlayfs',
  btrfs: 'btrfs',
  zfs: 'zfs',
};

export async function snapshotterFor(client: SupervisorClient, driver: string, storageOpts: string[]): Promise<string> {
  const snapshotter = SNAPSHOTTERS[driver];
  if (!snapshotter) throw invalidParameter(`unknown storage driver: ${driver}`);
  for (const opt of storageOpts) {
    const [key] = opt.split('=');
    // overlay2.size needs xfs with pquota; containerd's overlayfs snapshotter has no quota support.
    throw invalidParameter(`storage-opt ${key} is not supported by the ${driver} driver on this daemon`);
  }
  const plugins = await client.introspection.plugins([`type==io.containerd.snapshotter.v1`]);
  const p = plugins.find((x) => x.id === snapshotter);
  if (!p) throw invalidParameter(`storage driver ${driver}: the ${snapshotter} snapshotter is not available in this containerd`);
  const initErr = (p as { init_err?: { message?: string } | null }).init_err;
  if (initErr && initErr.message) throw invalidParameter(`storage driver ${driver} is not usable here: ${initErr.message}`);
  return snapshotter;
}
