// Mounting on the host: a snapshot's mounts (as containerd returns them) on a directory, a
// read-only view of a writable snapshot, and whether a path is a mount point. Shared by the
// containers (init layer, user lookup), images (export, commit), volumes (copy-up) and archive
// (docker cp, docker diff) code; the mount commands run through the helper shells. FUSE types
// (`fuse3.<program>`, as the fuse-overlayfs snapshotter returns) are mounted by their program, as
// containerd's mount helper does; they are detached like any other mount.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../util/helper-shell.ts';
import type { Mount } from './types.ts';

/** `fuse3.fuse-overlayfs` → `fuse-overlayfs`; null for a kernel filesystem type. */
export function fuseProgram(type: string): string | null {
  const m = /^fuse3?\.(.+)$/.exec(type);
  return m ? m[1]! : null;
}

/** Whether a mount is an overlay, in the kernel or in FUSE (same options: lowerdir, upperdir, workdir). */
export function isOverlayMount(m: Mount): boolean {
  return m.type === 'overlay' || fuseProgram(m.type) === 'fuse-overlayfs';
}

export async function mountAll(mounts: Mount[], target: string): Promise<void> {
  for (const m of mounts) {
    const opts = m.options.filter((o) => o !== 'rbind' && o !== 'bind');
    const fuse = fuseProgram(m.type);
    if (m.type === 'bind') await runCommand('mount', ['--rbind', ...(opts.includes('ro') ? ['-o', 'ro'] : []), m.source, target]);
    // fuse-overlayfs forks its server and returns once the mount is in place.
    else if (fuse === 'fuse-overlayfs') await runCommand('fuse-overlayfs', ['-o', m.options.join(','), target]);
    else if (fuse)
      await runCommand(m.type.startsWith('fuse3.') ? 'mount.fuse3' : 'mount.fuse', [
        m.source,
        target,
        '-o',
        m.options.join(','),
        '-t',
        fuse,
      ]);
    else await runCommand('mount', ['-t', m.type, m.source, '-o', m.options.join(','), target]);
  }
}

/** Lazy unmount; a target that is not mounted (any more) is not an error. */
export async function unmount(target: string): Promise<void> {
  await runCommand('umount', ['-l', target]).catch(() => undefined); // Not mounted (any more) is the state wanted; umount -l detaches a busy mount anyway.
}

/** Mounts the snapshot's mounts on a temporary directory for the duration of fn. */
export async function withMounted<T>(mounts: Mount[], tmpDir: string, fn: (root: string) => Promise<T>): Promise<T> {
  await mkdir(tmpDir, { recursive: true });
  const root = await mkdtemp(join(tmpDir, 'mnt-'));
  try {
    await mountAll(mounts, root);
    try {
      return await fn(root);
    } finally {
      await unmount(root);
    }
  } finally {
    await rm(root, { recursive: true, force: true }).catch(() => undefined); // An empty mount point directory under tmp; the next start empties tmp anyway.
  }
}

/** Mount points of this process (octal escapes of mountinfo undone). */
function mountPoints(): Set<string> {
  const out = new Set<string>();
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const f = line.split(' ');
    if (f.length > 4) out.add(f[4]!.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8))));
  }
  return out;
}

export function isMounted(path: string): boolean {
  return mountPoints().has(path);
}

/** Mount points at or below `dir`, deepest first (the order to detach them in). */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return [...mountPoints()].filter((m) => m === dir || m.startsWith(prefix)).sort((a, b) => b.length - a.length);
}

/**
 * A read-only view of a writable snapshot's mounts: an overlay becomes one with only lower
 * layers (its upperdir first), so it can be mounted a second time beside the container's own
 * mount without sharing an upperdir; a bind mount just becomes read-only.
 */
export function readOnlyMounts(mounts: Mount[]): Mount[] {
  return mounts.map((m) => {
    if (isOverlayMount(m)) {
      const opt = (k: string) => m.options.find((o) => o.startsWith(`${k}=`))?.slice(k.length + 1);
      const upper = opt('upperdir');
      const lower = opt('lowerdir');
      if (!upper) return { ...m, options: [...m.options.filter((o) => o !== 'rw'), 'ro'] };
      const rest = m.options.filter((o) => !/^(upperdir|workdir|lowerdir)=/.test(o) && o !== 'rw');
      return { ...m, options: [...rest, `lowerdir=${lower ? `${upper}:${lower}` : upper}`, 'ro'] };
    }
    return { ...m, options: [...m.options.filter((o) => o !== 'rw'), 'ro'] };
  });
}
