// A container's filesystem as the archive endpoints see it, from the daemon's side: a host
// directory holding the container's "/" plus the mounts laid over it (volumes, binds, the
// hosts/resolv.conf/hostname files). Container paths are resolved here component by component —
// symlinks are read and re-rooted at the container's "/", ".." stops there — so the kernel never
// follows a link the container controls and no path can lead out of the container's view.
import { lstatSync, type Stats } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import { posix } from 'node:path';
import { EngineError, invalidParameter } from '../../errors.ts';

export interface ViewMount {
  /** Clean absolute container path. */
  destination: string;
  /** Host path of what is mounted there (a directory or, for the /etc files, a file). */
  source: string;
  readOnly: boolean;
  /** A volume (or bind) rather than the container's own layer: ReadonlyRootfs does not apply. */
  volume: boolean;
}

export interface ContainerView {
  /** Host directory that is the container's "/" (a private mount of its rootfs, or /proc/<pid>/root). */
  root: string;
  /** Mounts to apply by path (empty when the root already shows them, as /proc/<pid>/root does). */
  overlays: ViewMount[];
  /** What is mounted where, for the read-only checks (always the full list). */
  mounts: ViewMount[];
  readonlyRootfs: boolean;
}

/** Kernel filesystems the runtime mounts: their content is not the container's (dockerd sees empty dirs). */
const HIDDEN = ['/proc', '/sys', '/dev'];
const MAX_LINKS = 255;

export class PathNotFound extends Error {
  constructor(readonly containerPath: string) {
    super(`no such file or directory: ${containerPath}`);
  }
}

export function cleanContainerPath(p: string): string {
  const c = posix.normalize(`/${p}`);
  return c.length > 1 && c.endsWith('/') ? c.slice(0, -1) : c;
}

const within = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);

/** Strictly below a kernel filesystem's mount point (the mount point itself is an empty directory). */
export function isHidden(cpath: string): boolean {
  return HIDDEN.some((h) => cpath.startsWith(`${h}/`));
}

export function isHiddenRoot(cpath: string): boolean {
  return HIDDEN.includes(cpath);
}

/** The host path of a clean, already resolved container path. */
export function hostPath(view: ContainerView, cpath: string): string {
  let best: ViewMount | undefined;
  for (const m of view.overlays) if (within(cpath, m.destination) && (!best || m.destination.length > best.destination.length)) best = m;
  if (best) return best.source + cpath.slice(best.destination.length);
  // The root with a slash: a running container's /proc/<pid>/root is a link an lstat would not follow.
  return cpath === '/' ? `${view.root}/` : view.root + cpath;
}

/** The mount a container path lies in (undefined: the container's own layer). */
export function mountOf(view: ContainerView, cpath: string): ViewMount | undefined {
  let best: ViewMount | undefined;
  for (const m of view.mounts) if (within(cpath, m.destination) && (!best || m.destination.length > best.destination.length)) best = m;
  return best;
}

/** Throws the 403 dockerd gives when the path cannot be written. */
export function checkWritable(view: ContainerView, cpath: string): void {
  if (isHidden(cpath) || isHiddenRoot(cpath))
    throw invalidParameter(`cannot write to ${cpath}: it belongs to a kernel filesystem of the container`);
  const m = mountOf(view, cpath);
  if (m) {
    if (m.readOnly) throw new EngineError('FORBIDDEN', 'mounted volume is marked read-only');
  } else if (view.readonlyRootfs) {
    throw new EngineError('FORBIDDEN', 'container rootfs is marked read-only');
  }
}

export async function lstatIn(view: ContainerView, cpath: string): Promise<Stats | undefined> {
  if (isHidden(cpath)) return undefined;
  checkPathBytes(cpath);
  try {
    return await lstat(hostPath(view, cpath));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw pathError(err, 'lstat', cpath);
  }
}

/**
 * A path the kernel cannot take: a NUL byte (Go's lstat answers EINVAL) is refused before it
 * reaches the file system, with the container path only (never the host path behind it).
 */
function checkPathBytes(cpath: string): void {
  if (cpath.includes('\0')) throw invalidParameter(`lstat ${cpath}: invalid argument`);
}

/**
 * The file system's refusal of a container path the client chose, in Go's words with the
 * container path: a name over NAME_MAX or a path over PATH_MAX is the client's error (a 400;
 * dockerd wraps it as a system error, a 500, with the same words).
 */
export function pathError(err: unknown, op: string, cpath: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENAMETOOLONG') return invalidParameter(`${op} ${cpath}: file name too long`);
  if (code === 'ELOOP') return invalidParameter(`${op} ${cpath}: too many levels of symbolic links`);
  return err;
}

/** lstatIn without the thread-pool hop (the extractor's many small metadata calls). */
export function lstatInSync(view: ContainerView, cpath: string): Stats | undefined {
  if (isHidden(cpath)) return undefined;
  checkPathBytes(cpath);
  try {
    return lstatSync(hostPath(view, cpath));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw pathError(err, 'lstat', cpath);
  }
}

/**
 * Resolves `path` in the container: every symlink on the way is followed inside the container's
 * view, the last component only with followFinal. Returns the clean container path (the last
 * component may not exist); throws PathNotFound when a directory on the way is missing.
 */
export async function resolvePath(view: ContainerView, path: string, followFinal: boolean): Promise<string> {
  let pending = path.split('/').filter((p) => p !== '' && p !== '.');
  const done: string[] = [];
  let links = 0;
  while (pending.length) {
    const part = pending.shift()!;
    if (part === '..') {
      done.pop();
      continue;
    }
    const cpath = `/${[...done, part].join('/')}`;
    const st = await lstatIn(view, cpath);
    if (!st) {
      if (pending.length) throw new PathNotFound(cpath);
      done.push(part);
      break;
    }
    if (st.isSymbolicLink() && (pending.length || followFinal)) {
      if (++links > MAX_LINKS) throw invalidParameter(`too many levels of symbolic links: ${path}`);
      const target = await readlink(hostPath(view, cpath));
      if (target.startsWith('/')) done.length = 0;
      pending = [...target.split('/').filter((p) => p !== '' && p !== '.'), ...pending];
      continue;
    }
    if (pending.length && !st.isDirectory()) throw new PathNotFound(cpath);
    done.push(part);
  }
  return `/${done.join('/')}`;
}
