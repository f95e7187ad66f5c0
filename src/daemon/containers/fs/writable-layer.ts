// A container's writable layer is made at its first use — start, cp, export, commit, diff, or a
// forced removal of its image — not at create. Each layer is a snapshot in containerd's bolt
// database (and the overlay snapshotter's), files that never shrink and that containerd reads
// through a memory mapping: 500 containers created and removed left ~4 MiB of those pages resident
// in containerd for good, where dockerd's containerd sees a container only once it starts. A
// container that is created and removed without running now costs containerd nothing.
import { usesRemap } from '../../../oci/userns.ts';
import type { ContainerRecord } from '../record.ts';
import type { Mount } from '../../../supervisor/types.ts';
import type { RootfsManager } from './rootfs.ts';

/** Makes `rec`'s writable layer if create left it for later, answering its mounts; a no-op once it exists. */
export async function ensureWritableLayer(rootfs: RootfsManager, rec: ContainerRecord): Promise<Mount[] | undefined> {
  const i = rec.Internal;
  if (!i.layerPending) return undefined;
  if (!i.chainId) throw new Error(`container ${rec.Id}: no image chain recorded for its writable layer`);
  if (i.snapshotter !== rootfs.snapshotter)
    throw new Error(`container ${rec.Id} was created with the ${i.snapshotter} snapshotter, not the daemon's ${rootfs.snapshotter}`);
  const mounts = await rootfs.ensure(
    i.snapshotKey,
    i.chainId,
    usesRemap(rec.HostConfig.UsernsMode, rootfs.remapping),
    rec.HostConfig.StorageOpt ?? {},
  );
  // Kept in the stored record until it is next written: a layer found made counts as made.
  delete i.layerPending;
  return mounts;
}
