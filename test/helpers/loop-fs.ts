// Real filesystems for storage-driver tests: a sparse file made into a filesystem (mkfs.<type>),
// attached to a loop device of its own and mounted where the test says. `release()` always
// unmounts (retrying while a daemon's last mounts drain, then lazily) and detaches the loop device,
// so a failed test leaves neither a mount nor a loop behind.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './daemon.ts';
import { sleep } from './until.ts';

export interface LoopFs {
  /** Where the filesystem is mounted. */
  mountpoint: string;
  /** The loop device (/dev/loopN). */
  device: string;
  release(): Promise<void>;
}

/** Why a loop filesystem of this type cannot be made here (no mkfs, no kernel support), or undefined. */
export async function loopFsUnavailable(type: string): Promise<string | undefined> {
  const mkfs = await run('sh', ['-c', `command -v mkfs.${type}`]);
  if (mkfs.code !== 0) return `mkfs.${type} is not installed`;
  if (process.getuid?.() !== 0) return 'loop devices need root';
  if (!existsSync('/dev/loop-control')) return 'no loop devices here (/dev/loop-control is missing)';
  const fss = await readFile('/proc/filesystems', 'utf8');
  // A filesystem built as a module is listed once it is loaded; mount loads it, so only warn in the reason.
  const listed = fss.split('\n').some((l) => l.split('\t').at(-1) === type);
  const modules = listed
    ? 0
    : (await run('sh', ['-c', `find /lib/modules/$(uname -r) -name '${type}.ko*' | head -1`])).stdout.trim().length;
  return listed || modules ? undefined : `the kernel has no ${type} support (not in /proc/filesystems, no module)`;
}

/** Makes a `sizeMiB` filesystem of `type` and mounts it at `mountpoint` (created if missing). */
export async function makeLoopFs(type: string, mountpoint: string, sizeMiB = 1024): Promise<LoopFs> {
  const holder = await mkdtemp(join(tmpdir(), `engine-loopfs-${type}-`));
  const image = join(holder, 'fs.img');
  let device = '';
  let mounted = false;
  const release = async () => {
    if (mounted) {
      for (let i = 0; i < 20 && mounted; i++) {
        const r = await run('umount', [mountpoint]);
        if (r.code === 0 || !(await isMounted(mountpoint))) mounted = false;
        else await sleep(250);
      }
      if (mounted) await run('umount', ['-l', mountpoint]);
    }
    if (device) await run('losetup', ['-d', device]);
    await rm(holder, { recursive: true, force: true });
  };
  try {
    await must('truncate', ['-s', `${sizeMiB}M`, image]);
    await must(`mkfs.${type}`, ['-q', image]);
    device = (await must('losetup', ['--find', '--show', image])).trim();
    await mkdir(mountpoint, { recursive: true });
    await must('mount', ['-t', type, device, mountpoint]);
    mounted = true;
    return { mountpoint, device, release };
  } catch (err) {
    await release();
    throw err;
  }
}

async function isMounted(path: string): Promise<boolean> {
  return (await readFile('/proc/mounts', 'utf8')).split('\n').some((l) => l.split(' ')[1] === path);
}

async function must(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}
