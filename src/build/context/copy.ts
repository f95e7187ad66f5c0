// The write half of COPY and ADD: resolved sources (copy-sources.ts) into a destination inside a
// filesystem root (the step's mounted snapshot, given as a path), as dockerd's classic builder does
// it: a directory source copies its *contents*; a file goes to `dest` itself, or into it when `dest`
// ends in `/` or is an existing directory; several sources need a `/`-terminated destination; new
// parent directories are 0755; owners are root (or `--chown`, resolved in the image's /etc/passwd
// and /etc/group), kept from the source for `COPY --from` without --chown; modes and mtimes are the
// source's (`--chmod` sets files and directories); ADD extracts local tar archives (untar-into.ts).
// Every destination path is resolved inside the root: an image's symlinks never lead a write out.
// Where a directory of the source meets a symlink to a directory in the image, the copy goes
// through the link (BuildKit's behaviour; dockerd replaced the link with a directory).
import {
  chmodSync, copyFileSync, constants, lchownSync, linkSync, lstatSync, lutimesSync, mkdirSync, readdirSync, readFileSync,
  readlinkSync, rmSync, statSync, symlinkSync, type Stats,
} from 'node:fs';
import { posix } from 'node:path';
import { invalidParameter } from '../../errors.ts';
import type { CopySource } from './copy-sources.ts';
import { followSymlinkInScope } from './scoped-path.ts';
import { isArchive, untarInto } from './untar-into.ts';
import type { CopyOptions, CopyStats, Owner } from './copy-options.ts';

export type { CopyOptions, CopyStats, Owner } from './copy-options.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { InodeMap } from '../../util/inode-map.ts';
import { copyTreeDirect, newDirectCopy } from './copy-direct.ts';

/** The destination as an absolute path in the image: relative to WORKDIR; a trailing `/` kept. */
export function normalizeDest(workdir: string, dest: string): string {
  if (dest.startsWith('/')) return dest;
  const joined = posix.join('/', workdir || '/', dest);
  return dest.endsWith('/') && !joined.endsWith('/') ? `${joined}/` : joined;
}

/** dockerd's rule: several sources (after wildcards) need a directory destination ending in `/`. */
export function checkDestForSources(cmd: 'COPY' | 'ADD', count: number, dest: string): void {
  if (count > 1 && !dest.endsWith('/')) {
    throw invalidParameter(`When using ${cmd} with more than one source file, the destination must be a directory and end with a /`);
  }
}

/** `--chmod` as dockerd/BuildKit take it: an octal number. */
export function parseChmod(value: string): number {
  if (!/^[0-7]{1,4}$/.test(value)) throw invalidParameter(`invalid chmod parameter: ${JSON.stringify(value)}: must be an octal mode such as 0755`);
  return parseInt(value, 8);
}

/**
 * `--chown=user[:group]` → ids: numbers are taken as they are, names are looked up in the image's
 * /etc/passwd and /etc/group (resolved inside `rootfs`); a lone user means the group of that name.
 */
export function resolveChown(chown: string, rootfs: string): Owner {
  const parts = chown.split(':');
  if (parts.length > 2) throw invalidParameter(`invalid chown string format: ${chown}`);
  const [userStr, groupStr] = parts.length === 1 ? [parts[0]!, parts[0]!] : [parts[0]!, parts[1]!];
  const lookup = (file: string, name: string, what: 'user' | 'group'): number => {
    if (/^[+-]?\d+$/.test(name)) return Number(name);
    const path = followSymlinkInScope(posix.join(rootfs, 'etc', file), rootfs);
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw invalidParameter(`unable to convert uid/gid chown string to host mapping: can't find ${what === 'user' ? 'uid' : 'gid'} for ${what} ${name}: open /etc/${file}: ${(err as Error).message}`);
    }
    for (const line of text.split('\n')) {
      const f = line.split(':');
      if (f[0] === name && f.length >= 3 && /^\d+$/.test(f[2]!)) return Number(f[2]);
    }
    throw invalidParameter(`unable to convert uid/gid chown string to host mapping: can't find ${what === 'user' ? 'uid' : 'gid'} for ${what} ${name}: no such ${what}: ${name}`);
  };
  return { uid: lookup('passwd', userStr, 'user'), gid: lookup('group', groupStr, 'group') };
}

export interface CopyResult extends CopyStats {
  /** With opts.direct: the writes left for the snapshot's upper directory, to run once it is unmounted (the stats count them then). */
  afterUnmount?: (upper: string) => Promise<void>;
}

/** Copies each source to `dest` (absolute in the image, as normalizeDest returns it) under `rootfs`. */
export async function copySources(sources: readonly CopySource[], rootfs: string, dest: string, opts: CopyOptions = {}): Promise<CopyResult> {
  const root = posix.resolve(rootfs);
  const stats: CopyResult = { files: 0, dirs: 0, symlinks: 0, bytes: 0, skipped: 0 };
  // One source only: with several, a later one may write where an earlier one's deferred part goes.
  const direct = opts.direct && sources.length === 1 ? (fn: (upper: string) => Promise<void>) => (stats.afterUnmount = fn) : undefined;
  for (const src of sources) {
    const destPath = followSymlinkInScope(posix.join(root, dest), root);
    if (src.isDir) {
      await copyDirectory(root, src.path, destPath, opts, stats, direct);
    } else if (opts.decompress && !src.fromUrl && await isArchive(src.path)) {
      mkdirAllScoped(root, destPath, undefined); // dockerd's Untar makes it root's, whatever --chown says
      await untarInto(src.path, destPath, root);
    } else {
      // dockerd follows links in the destination path, the last one included; a name appended to
      // a directory is not followed: whatever is there is replaced.
      const target = dest.endsWith('/') || statSync(destPath, { throwIfNoEntry: false })?.isDirectory()
        ? posix.join(destPath, posix.basename(src.rel))
        : destPath;
      mkdirAllScoped(root, posix.dirname(target), opts.owner);
      const st = statSync(src.path);
      replaceWithFile(src.path, target, st, opts, stats);
    }
  }
  return stats;
}

/** mkdir -p inside the root; directories it creates are 0755 and belong to `owner` (root if none). */
function mkdirAllScoped(root: string, path: string, owner?: Owner): void {
  const real = followSymlinkInScope(path, root);
  const st = lstatSync(real, { throwIfNoEntry: false });
  if (st?.isDirectory()) return;
  if (st) throw invalidParameter(`failed to copy files: ${real.slice(root.length) || '/'} is not a directory`);
  mkdirAllScoped(root, posix.dirname(real), owner);
  mkdirSync(real, { mode: 0o755 });
  chmodSync(real, 0o755);
  if (owner) lchownSync(real, owner.uid, owner.gid);
}

function setMeta(path: string, st: Stats, opts: CopyOptions, isDir: boolean): void {
  const owner = opts.owner ?? { uid: st.uid, gid: st.gid };
  lchownSync(path, owner.uid, owner.gid);
  chmodSync(path, opts.mode ?? (st.mode & 0o7777)); // after chown, which clears setuid
  if (!isDir) lutimesSync(path, st.atime, st.mtime);
}

/** Removes whatever is at `target` unless it is a directory and `keepDir`. */
function clear(target: string, keepDir: boolean): Stats | undefined {
  const st = lstatSync(target, { throwIfNoEntry: false });
  if (st && !(keepDir && st.isDirectory())) {
    rmSync(target, { recursive: true, force: true });
    return undefined;
  }
  return st;
}

function replaceWithFile(src: string, target: string, st: Stats, opts: CopyOptions, stats: CopyStats, links?: InodeMap<string>): void {
  clear(target, false);
  const key = st.nlink > 1 && links !== undefined;
  const first = key ? links.get(st) : undefined;
  if (first) {
    linkSync(first, target);
    return;
  }
  copyFileSync(src, target, constants.COPYFILE_EXCL);
  if (key) links.set(st, target);
  setMeta(target, st, opts, false);
  stats.files++;
  stats.bytes += st.size;
}

async function copyDirectory(
  root: string, srcDir: string, destDir: string, opts: CopyOptions, stats: CopyStats, direct?: (fn: (upper: string) => Promise<void>) => void,
): Promise<void> {
  const existed = lstatSync(destDir, { throwIfNoEntry: false })?.isDirectory() === true;
  mkdirAllScoped(root, destDir, undefined);
  const links = new InodeMap<string>();
  let names = readdirSync(srcDir).sort();
  if (direct) {
    // Names the image does not have need no overlay marker: they go straight into the upper
    // directory after the unmount. The others (replacing or merging with the image's) go through
    // the mount now. A hard link between the two groups becomes two files.
    const fresh = names.filter((n) => !lstatSync(`${destDir}/${n}`, { throwIfNoEntry: false }));
    if (fresh.length) {
      // A chown to its own owner copies an image's directory up, metadata kept: then it is in the upper directory.
      if (existed) {
        const st = lstatSync(destDir);
        lchownSync(destDir, st.uid, st.gid);
      }
      const rel = destDir.slice(root.length);
      direct((upper) => copyTreeDirect(srcDir, `${upper}${rel}`, fresh, opts, stats, newDirectCopy()));
      const deferred = new Set(fresh);
      names = names.filter((n) => !deferred.has(n));
    }
  }
  await copyTree(root, srcDir, destDir, opts, stats, links, { start: performance.now() }, names);
  // A destination directory the copy created stays 0755 and goes to the new owner (dockerd's
  // fixPermissions); an existing one keeps its metadata.
  if (!existed && opts.owner) lchownSync(destDir, opts.owner.uid, opts.owner.gid);
}

/** How long a tree copy runs synchronously before other requests get a turn. */
const SLICE_MS = 20;

/**
 * Copies the tree with synchronous calls (a thread-pool hop per call would cost more than the
 * copy of a small file), yielding every SLICE_MS: `COPY . /ctx` of 10 000 files held the event
 * loop ~370 ms in one piece.
 */
async function copyTree(
  root: string,
  srcDir: string,
  destDir: string,
  opts: CopyOptions,
  stats: CopyStats,
  links: InodeMap<string>,
  slice: { start: number },
  names: readonly string[] = readdirSync(srcDir).sort(),
): Promise<void> {
  for (const name of names) {
    if (performance.now() - slice.start > SLICE_MS) {
      await nextTurn();
      slice.start = performance.now();
    }
    const src = `${srcDir}/${name}`;
    const target = `${destDir}/${name}`;
    const st = lstatSync(src);
    if (st.isDirectory()) {
      let into = target;
      const existing = lstatSync(target, { throwIfNoEntry: false });
      if (existing?.isSymbolicLink()) {
        const resolved = followSymlinkInScope(target, root);
        if (statSync(resolved, { throwIfNoEntry: false })?.isDirectory()) into = resolved;
        else clear(target, false);
      } else if (existing && !existing.isDirectory()) {
        clear(target, false);
      }
      const created = !lstatSync(into, { throwIfNoEntry: false });
      if (created) mkdirSync(into, { mode: 0o700 });
      await copyTree(root, src, into, opts, stats, links, slice);
      if (into === target) {
        setMeta(into, st, opts, true);
        lutimesSync(into, st.atime, st.mtime); // after its content was written
      }
      stats.dirs++;
    } else if (st.isFile()) {
      replaceWithFile(src, target, st, opts, stats, links);
    } else if (st.isSymbolicLink()) {
      clear(target, false);
      symlinkSync(readlinkSync(src), target);
      const owner = opts.owner ?? { uid: st.uid, gid: st.gid };
      lchownSync(target, owner.uid, owner.gid);
      lutimesSync(target, st.atime, st.mtime);
      stats.symlinks++;
    } else {
      stats.skipped++;
    }
  }
}
