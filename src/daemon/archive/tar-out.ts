// GET /containers/{id}/archive: a tar of one path in the container's view, its entries named from
// the requested path's base name (as dockerd rebases them). Files are opened without following
// links; symlinks go in as links; directories are walked in lexical order and across the mounts
// of the view (a volume under the path is archived with it). Metadata calls are synchronous (short,
// and a thread-pool hop per call is what made a many-file copy slow); file data is read async.
import { constants, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { posix } from 'node:path';
import type { TarWriter } from '../../util/tar-writer.ts';
import { hostPath, isHiddenRoot, lstatInSync, type ContainerView } from './view.ts';

// Linux dev_t encoding (glibc's major()/minor()).
const major = (rdev: number) => Number(((BigInt(rdev) >> 8n) & 0xfffn) | ((BigInt(rdev) >> 32n) & ~0xfffn));
const minor = (rdev: number) => Number((BigInt(rdev) & 0xffn) | ((BigInt(rdev) >> 12n) & ~0xffn));

/** Exactly `size` bytes of an open file: a file that shrank meanwhile is padded with zeros. */
async function* fileBytes(path: string, size: number): AsyncGenerator<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    let left = size;
    while (left > 0) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, left)); // fresh each time: the writer keeps it
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      left -= bytesRead;
      yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
    }
    if (left > 0) yield Buffer.alloc(left);
  } finally {
    await fh.close();
  }
}

/**
 * Writes `cpath` (already resolved, existing) and, for a directory, everything below it. `rootName`
 * is the name of the top entry ("" for the container's "/": only what is inside, unprefixed).
 */
export async function archivePath(
  view: ContainerView,
  cpath: string,
  rootName: string,
  tw: TarWriter,
  ids?: { uid(id: number): number; gid(id: number): number },
): Promise<void> {
  const hardlinks = new Map<string, string>();
  const emit = async (cp: string, name: string, st: Stats): Promise<void> => {
    // `ids`: a remapped container's owners as it sees them.
    const common = { mode: st.mode & 0o7777, uid: ids ? ids.uid(st.uid) : st.uid, gid: ids ? ids.gid(st.gid) : st.gid, mtime: st.mtime };
    const host = hostPath(view, cp);
    if (st.isDirectory()) {
      await tw.directory(name, common);
    } else if (st.isSymbolicLink()) {
      await tw.symlink(name, readlinkSync(host), common);
    } else if (st.isFile()) {
      const key = `${st.dev}:${st.ino}`;
      const first = st.nlink > 1 ? hardlinks.get(key) : undefined;
      if (first) {
        await tw.hardlink(name, first, common);
        return;
      }
      if (st.nlink > 1) hardlinks.set(key, name);
      await tw.entry({ ...common, name, type: 'file', size: st.size }, fileBytes(host, st.size));
    } else if (st.isCharacterDevice() || st.isBlockDevice()) {
      await tw.entry({
        ...common,
        name,
        type: st.isCharacterDevice() ? 'char' : 'block',
        devmajor: major(st.rdev),
        devminor: minor(st.rdev),
      });
    } else if (st.isFIFO()) {
      await tw.entry({ ...common, name, type: 'fifo' });
    }
    // sockets are not archived (as in dockerd)
  };
  const walk = async (dir: string, prefix: string): Promise<void> => {
    if (isHiddenRoot(dir)) return; // /proc, /sys, /dev: the mount point only, never the kernel's files
    let names: string[];
    try {
      names = readdirSync(hostPath(view, dir)).sort();
    } catch {
      return; // vanished meanwhile
    }
    for (const n of names) {
      const cp = dir === '/' ? `/${n}` : `${dir}/${n}`;
      const st = lstatInSync(view, cp);
      if (!st) continue; // vanished meanwhile (a running container)
      const name = prefix ? `${prefix}/${n}` : n;
      await emit(cp, name, st);
      if (st.isDirectory()) await walk(cp, name);
    }
  };
  const st = lstatInSync(view, cpath);
  if (!st) return;
  if (rootName) await emit(cpath, rootName === '.' ? './' : rootName, st);
  if (st.isDirectory()) await walk(cpath, rootName === '.' ? '.' : rootName);
}

/** The name the top entry gets: the requested path's base name ("." for "dir/.", "" for "/"). */
export function rootEntryName(absPath: string): string {
  if (absPath === '/' || absPath === '/.') return '';
  if (absPath.endsWith('/.')) return '.';
  return posix.basename(absPath);
}
