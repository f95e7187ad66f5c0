// Mounting on the host: a snapshot's mounts (as containerd returns them) on a directory, a
// read-only view of a writable snapshot, and whether a path is a mount point. Shared by the
// containers (init layer, user lookup), images (export, commit), volumes (copy-up) and archive
// (docker cp, docker diff) code; the mount commands run through the helper shells.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../util/helper-shell.ts';
import type { Mount } from './types.ts';

export async function mountAll(mounts: Mount[], target: string): Promise<void> {
  for (const m of mounts) {
    const opts = m.options.filter((o) => o !== 'rbind' && o !== 'bind');
    if (m.type === 'bind') await runCommand('mount', ['--rbind', ...(opts.includes('ro') ? ['-o', 'ro'] : []), m.source, target]);
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
    if (m.type === 'overlay') {
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
