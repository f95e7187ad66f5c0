// The local driver's filesystem side: a volume is <root>/<name>/_data; DriverOpts type/device/o
// make it a mount of its own (tmpfs, nfs, a block device, a bind) made at first use and undone when
// no running container needs it; sizes for `system df`; the copy-up of image content.
import { execFile } from 'node:child_process';
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { internal, invalidParameter } from '../../errors.ts';
import { isMounted } from '../../supervisor/mounts.ts';
import { runCommand } from '../../util/helper-shell.ts';

const execFileP = promisify(execFile);

const OPTION_KEYS = new Set(['type', 'device', 'o']);

export function validateDriverOpts(opts: Record<string, string> | null | undefined): void {
  for (const [k, v] of Object.entries(opts ?? {})) {
    if (!OPTION_KEYS.has(k)) throw invalidParameter(`invalid option key: ${JSON.stringify(k)}`);
    if (typeof v !== 'string') throw invalidParameter(`invalid option value for ${JSON.stringify(k)}: must be a string`);
  }
  if (opts?.type && !opts.device) throw invalidParameter('missing required option: "device"');
  if (opts?.device && !opts.type) throw invalidParameter('missing required option: "type"');
}

/** Whether the options ask for a mount (else the volume is a plain directory). */
export function needsMount(opts: Record<string, string> | null | undefined): boolean {
  return !!(opts && (opts.type || opts.device));
}

export async function mountVolume(opts: Record<string, string>, target: string): Promise<void> {
  if (isMounted(target)) return;
  const args = [...(opts.type ? ['-t', opts.type] : []), ...(opts.o ? ['-o', opts.o] : []), opts.device ?? 'none', target];
  try {
    await runCommand('mount', args);
  } catch (err) {
    const msg = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim();
    throw internal(
      `error while mounting volume '${target}': failed to mount local volume: mount ${opts.device ?? ''}:${target}, data: ${opts.o ?? ''}: ${msg}`,
    );
  }
}

export async function unmountVolume(target: string): Promise<void> {
  if (!isMounted(target)) return;
  await runCommand('umount', [target]).catch(() => runCommand('umount', ['-l', target]));
}

/** Apparent size of the regular files below dir (hard links counted once), as dockerd's df. */
export async function directorySize(dir: string): Promise<number> {
  let total = 0;
  const seen = new Set<string>();
  const walk = async (d: string): Promise<void> => {
    const names = await readdir(d).catch(() => [] as string[]); // A volume directory that vanished has no entries to report.
    for (const n of names) {
      const p = join(d, n);
      const st = await lstat(p).catch(() => undefined); // An entry removed while we walk the tree is simply not counted.
      if (!st) continue;
      if (st.isDirectory()) await walk(p);
      else if (st.isFile()) {
        if (st.nlink > 1) {
          const key = `${st.dev}:${st.ino}`;
          if (seen.has(key)) continue;
          seen.add(key);
        }
        total += st.size;
      }
    }
  };
  await walk(dir);
  return total;
}

export async function isEmptyDir(dir: string): Promise<boolean> {
  return (await readdir(dir)).length === 0;
}

/**
 * The image's content at a mount destination into a fresh volume: everything below `src` (a
 * directory in a private read-only mount of the container's rootfs) with owners, modes, times and
 * symlinks as they are, then the volume root takes the owner and mode of `src`.
 */
export async function copyUp(src: string, dst: string): Promise<void> {
  const st = await lstat(src).catch(() => undefined); // A missing source means nothing to copy up (an image path that does not exist).
  if (!st?.isDirectory()) return;
  try {
    // --no-dereference is part of -a: symlinks are copied as links, never followed.
    await execFileP('cp', ['-a', '--', `${src}/.`, `${dst}/`], { maxBuffer: 1 << 20 });
  } catch (err) {
    throw internal(
      `copying image content into the volume at ${dst}: ${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`,
    );
  }
  await lchown(dst, st.uid, st.gid);
  await chmod(dst, st.mode & 0o7777);
}
