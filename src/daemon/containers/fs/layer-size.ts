// A container's `--storage-opt` (HostConfig.StorageOpt) on its writable layer, per storage driver,
// as dockerd's graph drivers take it: btrfs limits the layer's subvolume with a qgroup (`size`, not
// below the daemon's `btrfs.min_space`); overlay2 refuses `size` without xfs project quotas (which
// containerd's overlayfs snapshotter does not do) and any other key; the others take none.
// Messages are dockerd's; like its graph drivers' errors they answer 500.
import { internal } from '../../../errors.ts';
import { parseSize } from '../../../logging/units.ts';
import { humanSize } from '../../../images/distribution/progress.ts';
import { readFile } from 'node:fs/promises';
import type { Mount } from '../../../supervisor/types.ts';
import { runCommand } from '../../../util/helper-shell.ts';

export interface LayerSizeLimit {
  /** Checks a container's storage options before its layer is made: the bytes to limit it to, if any. */
  check(storageOpt: Record<string, string>): number | undefined;
  /** Limits the prepared (active) writable layer to `bytes`. */
  apply(mounts: Mount[], bytes: number): Promise<void>;
}

/** go-units' RAMInBytes (binary units), with its error words. */
function ramInBytes(text: string): number {
  try {
    return parseSize(text, true);
  } catch {
    throw internal(`invalid size: '${text}'`);
  }
}

/** The daemon's `btrfs.min_space` in bytes (0: none); dockerd's words for a bad option. */
export function btrfsMinSpace(storageOpts: string[]): number {
  let min = 0;
  for (const opt of storageOpts) {
    const eq = opt.indexOf('=');
    if (eq < 0) throw internal(`unable to parse key/value option: ${opt}`);
    const key = opt.slice(0, eq).trim().toLowerCase();
    if (key !== 'btrfs.min_space') throw internal(`unknown option ${key}`);
    min = ramInBytes(opt.slice(eq + 1).trim());
  }
  return min;
}

/** btrfs: qgroup limits on the layer's subvolume (quotas enabled on the snapshotter's filesystem first). */
export class BtrfsSizeLimit implements LayerSizeLimit {
  private quotaOn: Promise<void> | undefined;

  /**
   * `root`: the snapshotter's directory (on the btrfs filesystem), unknown with an external
   * containerd (then where the layer's device is mounted); `minSpace`: btrfs.min_space.
   */
  constructor(
    private readonly root: string | undefined,
    private readonly minSpace: number,
  ) {}

  check(storageOpt: Record<string, string>): number | undefined {
    // As dockerd's btrfs driver: the options are read only when `size` is among them.
    if (!Object.hasOwn(storageOpt, 'size')) return undefined;
    let size: number | undefined;
    for (const [k, v] of Object.entries(storageOpt)) {
      const key = k.toLowerCase();
      if (key !== 'size') throw internal(`unknown option ${key}`);
      size = ramInBytes(v);
    }
    if (size === undefined) return undefined;
    if (size === 0) throw internal(`btrfs: invalid storage size: ${humanSize(0)}`);
    if (this.minSpace > 0 && size < this.minSpace) throw internal(`btrfs: storage size cannot be less than ${humanSize(this.minSpace)}`);
    return size;
  }

  get enabled(): boolean {
    return this.minSpace > 0;
  }

  /** Turns quotas on (once; dockerd does it at start when btrfs.min_space is set). */
  enableQuota(root = this.root): Promise<void> {
    if (!root) return Promise.reject(internal('btrfs: the snapshotter directory is unknown'));
    this.quotaOn ??= runCommand('btrfs', ['quota', 'enable', root])
      .then(() => undefined)
      .catch((err: Error) => {
        this.quotaOn = undefined;
        throw internal(`Failed to enable btrfs quota for ${root}: ${err.message}`);
      });
    return this.quotaOn;
  }

  async apply(mounts: Mount[], bytes: number): Promise<void> {
    const m = mounts.length === 1 && mounts[0]!.type === 'btrfs' ? mounts[0]! : undefined;
    const id = m?.options.find((o) => o.startsWith('subvolid='));
    if (!m || !id) throw internal(`btrfs: the layer's mount names no subvolume: ${JSON.stringify(mounts)}`);
    const root = this.root ?? (await mountpointOf(m.source));
    await this.enableQuota(root);
    // A subvolume's own qgroup is 0/<subvolume id>.
    const qgroup = `0/${id.slice('subvolid='.length)}`;
    await runCommand('btrfs', ['qgroup', 'limit', String(bytes), qgroup, root]).catch((err: Error) => {
      throw internal(`Failed to limit qgroup for ${qgroup}: ${err.message}`);
    });
  }
}

/** Where a block device is mounted (the first such mount), for a path on its filesystem. */
async function mountpointOf(device: string): Promise<string> {
  const line = (await readFile('/proc/self/mounts', 'utf8')).split('\n').find((l) => l.split(' ')[0] === device);
  if (!line) throw internal(`btrfs: ${device} is not mounted where the daemon can see it`);
  return line.split(' ')[1]!.replace(/\\040/g, ' ');
}

/** The driver's handling of containers' --storage-opt; `root`: the snapshotter's directory when known. */
export function layerSizeLimit(driver: string, storageOpts: string[], root: string | undefined): LayerSizeLimit {
  return driver === 'btrfs' ? new BtrfsSizeLimit(root, btrfsMinSpace(storageOpts)) : new NoSizeLimit(driver);
}

/** overlay2 (containerd's overlayfs snapshotter: no project quotas) and every driver without limits. */
export class NoSizeLimit implements LayerSizeLimit {
  constructor(private readonly driver: string) {}

  check(storageOpt: Record<string, string>): number | undefined {
    const keys = Object.keys(storageOpt);
    if (!keys.length) return undefined;
    if (this.driver === 'overlay2') {
      if (keys.includes('size')) throw internal("--storage-opt is supported only for overlay over xfs with 'pquota' mount option");
      const unknown = keys.find((k) => k.toLowerCase() !== 'size');
      if (unknown) throw internal(`Unknown option ${unknown.toLowerCase()}`);
      throw internal("--storage-opt is supported only for overlay over xfs with 'pquota' mount option");
    }
    throw internal('--storage-opt is not supported');
  }

  apply(): Promise<void> {
    return Promise.resolve();
  }
}
