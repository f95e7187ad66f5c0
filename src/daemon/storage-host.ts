// Whether this host can serve the storage driver asked for, checked before containerd starts: a
// driver the host cannot serve fails the start with one line naming what is missing (the kernel
// module, the tool, the filesystem under the data root), never a daemon that lists images it cannot
// run. containerd's own refusal of its snapshotter (init_err, storage-driver.ts) stays the backstop.
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { backingFs } from './storage-driver.ts';

export interface StorageHost {
  /** Names of the filesystems the kernel knows (/proc/filesystems). */
  filesystems(): string[];
  /** Whether a kernel module of that name is loaded, or is installed for the running kernel. */
  module(name: string): { loaded: boolean; installed: boolean };
  /** Whether an executable of that name is on PATH. */
  tool(name: string): boolean;
  /** Whether a path exists (device nodes). */
  exists(path: string): boolean;
  /** The filesystem type of the nearest existing ancestor of the path. */
  fsOf(path: string): string;
}

export const realHost: StorageHost = {
  filesystems: () => {
    try {
      return readFileSync('/proc/filesystems', 'utf8')
        .split('\n')
        .map((l) => l.split('\t').at(-1)!.trim())
        .filter(Boolean);
    } catch {
      return []; // no /proc: nothing known, the checks below then name the module as missing
    }
  },
  module: (name) => ({ loaded: existsSync(`/sys/module/${name}`), installed: moduleInstalled(name) }),
  tool: (name) =>
    (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter).some((dir) => {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return true;
      } catch {
        return false; // ENOENT or EACCES: not in this directory
      }
    }),
  exists: existsSync,
  fsOf: backingFs,
};

/** Whether `<name>.ko*` is among the running kernel's modules (a bounded walk of its kernel/fs tree). */
function moduleInstalled(name: string): boolean {
  let release: string;
  try {
    release = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    return false; // no /proc: treated as not installed
  }
  const roots = [`/lib/modules/${release}/kernel/fs/${name}`, `/lib/modules/${release}/updates/dkms`, `/lib/modules/${release}/extra`];
  for (const dir of roots) {
    try {
      if (readdirSync(dir).some((f) => f === `${name}.ko` || f.startsWith(`${name}.ko.`))) return true;
    } catch {
      // ENOENT: no such module directory on this host
    }
  }
  return false;
}

/** The snapshotter's directory under the data root, as the daemon's own containerd lays it out. */
export function snapshotterRoot(dataRoot: string, snapshotter: string): string {
  return join(dataRoot, 'containerd', `io.containerd.snapshotter.v1.${snapshotter}`);
}

/**
 * Why this host cannot serve `driver` with the data root `dataRoot`, as one sentence, or undefined.
 * `managed`: the daemon runs its own containerd (with an external one the snapshotter's root is
 * that containerd's, and only containerd's answer counts).
 */
export function storageHostRefusal(
  driver: string,
  dataRoot: string,
  managed: boolean,
  storageOpts: string[] = [],
  host: StorageHost = realHost,
): string | undefined {
  if (driver === 'zfs') {
    const missing: string[] = [];
    const kernel = host.filesystems().includes('zfs') || host.module('zfs').loaded || host.exists('/dev/zfs');
    if (!kernel)
      missing.push(
        host.module('zfs').installed
          ? 'the zfs kernel module is not loaded (modprobe zfs)'
          : 'the zfs kernel module is not loaded, nor installed for this kernel (Debian: zfs-dkms)',
      );
    if (!host.tool('zfs')) missing.push('the zfs tool is not installed (Debian: zfsutils-linux)');
    if (missing.length) return `storage driver zfs is not available on this host: ${missing.join('; ')}`;
    if (managed) {
      const fs = host.fsOf(snapshotterRoot(dataRoot, 'zfs'));
      if (fs !== 'zfs') return `storage driver zfs needs the data root on a ZFS dataset: ${dataRoot} is on ${fs}`;
    }
    return undefined;
  }
  if (driver === 'btrfs') {
    if (storageOpts.some((o) => o.trim().toLowerCase().startsWith('btrfs.min_space')) && !host.tool('btrfs'))
      return 'storage-opt btrfs.min_space needs the btrfs tool for its quotas, which is not installed (Debian: btrfs-progs)';
    if (!managed) return undefined;
    const fs = host.fsOf(snapshotterRoot(dataRoot, 'btrfs'));
    if (fs === 'btrfs') return undefined;
    const kernel = host.filesystems().includes('btrfs') || host.module('btrfs').loaded || host.module('btrfs').installed;
    return (
      `storage driver btrfs needs the data root on a btrfs filesystem: ${dataRoot} is on ${fs}` +
      (kernel ? ' (make one with mkfs.btrfs from btrfs-progs and mount it there)' : '; this kernel has no btrfs support either')
    );
  }
  return undefined;
}
