// The daemon's root directories: data-root (persistent state), exec-root (runtime state) and the
// temporary directory. Each may be a symbolic link (spec §8); callers get the resolved paths so
// that later path comparisons and mounts see the real locations.
import { chmod, chown, lstat, mkdir, readdir, readlink, realpath, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { mountsUnder, unmount } from '../supervisor/mounts.ts';
import type { Logger } from '../util/log.ts';

export interface Roots {
  dataRoot: string;
  execRoot: string;
  tmpDir: string;
}

export interface PrepareOptions {
  env?: NodeJS.ProcessEnv; // where ENGINE_TMPDIR is read; defaults to process.env
  /**
   * Empty the default <data-root>/tmp of a previous run's leftovers (ENGINE_TMPDIR is never
   * emptied). Only safe once the pid file is held, or a second daemon would wipe the first's files.
   */
  cleanTmp?: boolean;
  /** Where a leftover that cannot be removed is reported (start-up goes on without it). */
  log?: Pick<Logger, 'warn'>;
}

const DATA_ROOT_MODE = 0o711; // others may traverse to reach e.g. container rootfs, not list
const EXEC_ROOT_MODE = 0o700;
const TMP_MODE = 0o700;

export async function prepareRoots(dataRoot: string, execRoot: string, opts: PrepareOptions = {}): Promise<Roots> {
  const env = opts.env ?? process.env;
  const data = await ensureDir(dataRoot, DATA_ROOT_MODE, 'data-root');
  const exec = await ensureDir(execRoot, EXEC_ROOT_MODE, 'exec-root');

  const custom = env.ENGINE_TMPDIR?.trim();
  let tmpDir: string;
  if (custom) {
    tmpDir = await ensureDir(custom, TMP_MODE, 'ENGINE_TMPDIR');
  } else {
    tmpDir = await ensureDir(join(data, 'tmp'), TMP_MODE, 'temporary directory');
    // Only the contents go: the directory itself may be a symbolic link that must survive.
    if (opts.cleanTmp) await emptyDir(tmpDir, opts.log);
  }
  return { dataRoot: data, execRoot: exec, tmpDir };
}

/**
 * mkdir -p with `mode` on the last component when we create it (an existing directory keeps its
 * mode: the administrator may have chosen it). Returns the real path.
 */
async function ensureDir(path: string, mode: number, what: string): Promise<string> {
  const absolute = resolve(path);
  let existing;
  try {
    existing = await stat(absolute); // follows symbolic links
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`cannot use ${what} ${absolute}: ${(err as Error).message}`, { cause: err });
  }
  if (existing) {
    if (!existing.isDirectory()) throw new Error(`cannot use ${what} ${absolute}: not a directory`);
  } else {
    if (
      await lstat(absolute).then(
        (st) => st.isSymbolicLink(),
        () => false,
      )
    ) {
      throw new Error(`cannot use ${what} ${absolute}: it is a symbolic link to ${await readlink(absolute)}, which does not exist`);
    }
    try {
      await mkdir(absolute, { recursive: true, mode });
    } catch (err) {
      throw new Error(`cannot create ${what} ${absolute}: ${(err as Error).message}`, { cause: err });
    }
    await chmod(absolute, mode); // mkdir's mode is narrowed by the umask
  }
  return realpath(absolute);
}

/**
 * Removes a previous run's leftovers. A daemon killed while a snapshot was mounted here (commit,
 * copy-up, docker cp) leaves that mount behind: it is detached first (lazily, deepest first), or
 * removing the directory would descend into a container's filesystem and delete its files. An
 * entry that still cannot go is reported and left: it must never keep the daemon from starting.
 */
export async function emptyDir(dir: string, log?: Pick<Logger, 'warn'>): Promise<void> {
  for (const mount of mountsUnder(dir)) {
    if (mount !== dir) await unmount(mount);
  }
  for (const name of await readdir(dir)) {
    await rm(join(dir, name), { recursive: true, force: true }).catch((err: unknown) => {
      log?.warn(`could not remove the leftover ${join(dir, name)}: ${(err as Error).message}`);
    });
  }
}

/**
 * --userns-remap keeps its state apart, as dockerd does: `<data-root>/<uid>.<gid>` (mode 0710,
 * group the remapped root's) becomes the data root, so images, containers and volumes of the
 * remapped root never mix with those of a daemon without it. The remapped root must be able to
 * traverse every directory above it (bind sources such as volumes and /etc/hosts live there).
 */
export async function remappedDataRoot(dataRoot: string, uid: number, gid: number): Promise<string> {
  const top = await ensureDir(dataRoot, DATA_ROOT_MODE, 'data-root');
  await allowTraversal(top);
  const root = await ensureDir(join(top, `${uid}.${gid}`), 0o710, 'remapped data-root');
  await chown(root, process.getuid!(), gid);
  await checkAncestors(root, uid, gid);
  return root;
}

/**
 * The exec-root with --userns-remap: runc mounts the container's rootfs from containerd's bundle
 * below it from inside the remapped namespace, so the remapped root must be able to traverse it.
 */
export async function remappedExecRoot(execRoot: string, uid: number, gid: number): Promise<void> {
  await allowTraversal(execRoot);
  await checkAncestors(execRoot, uid, gid);
}

async function allowTraversal(dir: string): Promise<void> {
  const st = await stat(dir);
  if ((st.mode & 0o001) === 0) await chmod(dir, (st.mode & 0o7777) | 0o011);
}

async function checkAncestors(root: string, uid: number, gid: number): Promise<void> {
  for (let dir = dirname(root); dir !== '/'; dir = dirname(dir)) {
    if (!(await canTraverse(dir, uid, gid))) {
      throw new Error(
        `a subdirectory in your graphroot path (${root}) restricts access to the remapped root uid/gid; please fix by allowing 'o+x' permissions on existing directories`,
      );
    }
  }
}

async function canTraverse(dir: string, uid: number, gid: number): Promise<boolean> {
  const st = await stat(dir).catch(() => undefined); // A directory that cannot be read counts as one the remapped root cannot traverse.
  if (!st) return false;
  if (st.mode & 0o001) return true;
  if (st.uid === uid && st.mode & 0o100) return true;
  return st.gid === gid && (st.mode & 0o010) !== 0;
}
