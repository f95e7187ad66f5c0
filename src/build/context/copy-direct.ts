// The bulk of a COPY/ADD of a context directory, written straight into the step snapshot's upper
// directory once the overlay is unmounted (copy.ts decides which names may go this way: those the
// image does not have yet, so no overlay marker is needed for them). Files whose copy would carry
// the source's own owner, mode and mtime (the common case: the CLI sends the context as root's,
// and COPY keeps modes and mtimes) are hard-linked to the context's file instead of copied: no data
// written and no inode allocated, which cost ~0.1–0.4 ms of kernel time per file here. A link
// shares the inode, so nothing may write to either name afterwards: the context is only read, and
// the snapshot is committed read-only. Files needing --chown or --chmod, and sources on another
// filesystem (COPY --from mounts, ENGINE_TMPDIR elsewhere), are copied as through the mount.
import { chmodSync, constants, copyFileSync, lchownSync, linkSync, lstatSync, lutimesSync, mkdirSync, readdirSync, readlinkSync, symlinkSync, type Stats } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { InodeMap } from '../../util/inode-map.ts';
import type { CopyOptions, CopyStats } from './copy-options.ts';

/** How long a tree copy runs synchronously before other requests get a turn. */
const SLICE_MS = 20;

export interface DirectCopy {
  /** Hard links to the source were refused (another filesystem): copy every file from then on. */
  noLinks: boolean;
  /** Source hard links (their first target), so they stay links in the layer. */
  links: InodeMap<string>;
  slice: { start: number };
}

export function newDirectCopy(): DirectCopy {
  return { noLinks: false, links: new InodeMap(), slice: { start: performance.now() } };
}

/** The copy keeps the source's own owner and mode (mtimes are always kept): a link is the same file. */
export function shareable(st: Stats, opts: CopyOptions): boolean {
  const owner = opts.owner ?? st;
  return owner.uid === st.uid && owner.gid === st.gid && (opts.mode === undefined || opts.mode === (st.mode & 0o7777));
}

function setMeta(path: string, st: Stats, opts: CopyOptions, isDir: boolean): void {
  const owner = opts.owner ?? { uid: st.uid, gid: st.gid };
  lchownSync(path, owner.uid, owner.gid);
  chmodSync(path, opts.mode ?? (st.mode & 0o7777)); // after chown, which clears setuid
  if (!isDir) lutimesSync(path, st.atime, st.mtime);
}

function placeFile(src: string, target: string, st: Stats, opts: CopyOptions, stats: CopyStats, d: DirectCopy): void {
  const key = st.nlink > 1;
  const first = key ? d.links.get(st) : undefined;
  if (first) {
    linkSync(first, target);
    return;
  }
  let linked = false;
  if (!d.noLinks && shareable(st, opts)) {
    try {
      linkSync(src, target);
      linked = true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Another filesystem or mount, or a link count at its limit: a copy does it.
      if (code === 'EXDEV') d.noLinks = true;
      else if (code !== 'EMLINK' && code !== 'EPERM') throw err;
    }
  }
  if (!linked) {
    copyFileSync(src, target, constants.COPYFILE_EXCL);
    setMeta(target, st, opts, false);
  }
  if (key) d.links.set(st, target);
  stats.files++;
  stats.bytes += st.size;
}

/**
 * Copies `names` of `srcDir` into `destDir`, a directory of a plain (unmounted) tree in which none
 * of them exists: directories are created, files linked or copied, symlinks made; each entry gets
 * the metadata copy.ts gives it. Yields to other requests every SLICE_MS.
 */
export async function copyTreeDirect(srcDir: string, destDir: string, names: readonly string[], opts: CopyOptions, stats: CopyStats, d: DirectCopy): Promise<void> {
  for (const name of names) {
    if (performance.now() - d.slice.start > SLICE_MS) {
      await nextTurn();
      d.slice.start = performance.now();
    }
    const src = `${srcDir}/${name}`;
    const target = `${destDir}/${name}`;
    const st = lstatSync(src);
    if (st.isDirectory()) {
      mkdirSync(target, { mode: 0o700 });
      await copyTreeDirect(src, target, readdirSync(src).sort(), opts, stats, d);
      setMeta(target, st, opts, true);
      lutimesSync(target, st.atime, st.mtime); // after its content was written
      stats.dirs++;
    } else if (st.isFile()) {
      placeFile(src, target, st, opts, stats, d);
    } else if (st.isSymbolicLink()) {
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
