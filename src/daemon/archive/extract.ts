// PUT /containers/{id}/archive: unpacks a tar into a directory of the container's view. Refused
// (400) before anything is written for that entry: absolute names, ".." components, hard links and
// relative symlinks that lead out of the target, entries beneath a symlink of the archive, and
// entries whose parent in the container is a symlink (they would be written through it). Absolute
// symlinks are allowed, as in dockerd: they are created, never followed here, and resolve inside
// the container's own root when it uses them.
//
// The extraction itself is the one tree extractor's (images/tar-tree.ts), with the container's
// view as its layout: every path goes through the container's mounts, is checked writable, and a
// symlink of the container on the way refuses the entry; owners given or mapped; device nodes made.
import { mkdirSync } from 'node:fs';
import { invalidParameter } from '../../errors.ts';
import type { TarHeader } from '../../images/tar-reader.ts';
import { extractTree, type TreeLayout } from '../../images/tar-tree.ts';
import { checkWritable, hostPath, lstatInSync, type ContainerView } from './view.ts';
import { runCommand } from '../../util/helper-shell.ts';

export interface ExtractOptions {
  /** Refuse to replace a directory with a non-directory and the reverse. */
  noOverwriteDirNonDir: boolean;
  /** Owner for everything extracted (copyUIDGID: the container's user); else the archive's ids. */
  chown?: { uid: number; gid: number };
  /** --userns-remap: the container's ids as they are stored on disk (remapped host ids). */
  toHost?: { uid(id: number): number; gid(id: number): number };
}

const bad = (msg: string) => invalidParameter(msg);
const join = (dir: string, rel: string) => (rel === '' ? dir : dir === '/' ? `/${rel}` : `${dir}/${rel}`);
const under = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);

/** The container's view as the tree extractor's layout: paths through its mounts, with its checks. */
function viewLayout(view: ContainerView, dest: string, opts: ExtractOptions): TreeLayout {
  return {
    dir(rel, _parentHost, entryName, create) {
      const cur = join(dest, rel);
      const st = lstatInSync(view, cur);
      if (!st) {
        if (!create) throw bad(`invalid tar archive: ${JSON.stringify(entryName)}: ${cur} does not exist`);
        checkWritable(view, cur);
        mkdirSync(hostPath(view, cur), { mode: 0o755 });
      } else if (st.isSymbolicLink()) {
        throw bad(`invalid tar archive: entry ${JSON.stringify(entryName)} would be written through the symlink ${cur}`);
      } else if (!st.isDirectory()) {
        throw bad(`invalid tar archive: entry ${JSON.stringify(entryName)}: ${cur} is not a directory`);
      }
      return hostPath(view, cur);
    },
    entry(rel) {
      const cpath = join(dest, rel);
      checkWritable(view, cpath);
      lstatInSync(view, cpath); // a name the kernel would refuse (too long) is a 400 before anything is written
      return hostPath(view, cpath);
    },
    replacing(rel, existingIsDir, h) {
      const cpath = join(dest, rel);
      const isDir = h.kind === 'directory';
      if (opts.noOverwriteDirNonDir && existingIsDir && !isDir)
        throw bad(`cannot overwrite directory "${cpath}" with non-directory "${h.name}"`);
      if (opts.noOverwriteDirNonDir && !existingIsDir && isDir)
        throw bad(`cannot overwrite non-directory "${cpath}" with directory "${h.name}"`);
      // Never remove a mount point or anything holding one (a volume's content would go with it).
      if (view.mounts.some((m) => under(m.destination, cpath)))
        throw bad(`cannot replace ${cpath}: a volume or bind mount is mounted there`);
    },
  };
}

export async function extractArchive(
  view: ContainerView,
  dest: string,
  source: AsyncIterable<Buffer>,
  opts: ExtractOptions,
): Promise<void> {
  await extractTree(source, hostPath(view, dest), {
    rooted: false,
    layout: viewLayout(view, dest, opts),
    // Directories on the way are the container's real ones (the layout refuses symlinks), mounts included.
    within: '/',
    owners: (h) => {
      const uid = opts.chown?.uid ?? h.uid;
      const gid = opts.chown?.gid ?? h.gid;
      return opts.toHost ? { uid: opts.toHost.uid(uid), gid: opts.toHost.gid(gid) } : { uid, gid };
    },
    devices: 'make',
    mknod,
    what: 'invalid tar archive',
  });
}

/** A device node or FIFO; false where the kernel refuses it. */
async function mknod(host: string, h: TarHeader): Promise<boolean> {
  const type = h.kind === 'char' ? 'c' : h.kind === 'block' ? 'b' : 'p';
  try {
    await runCommand('mknod', [
      '-m',
      (h.mode & 0o777).toString(8),
      host,
      type,
      ...(type === 'p' ? [] : [String(h.devmajor), String(h.devminor)]),
    ]);
    return true;
  } catch (err) {
    // Where the kernel refuses the node (a device cgroup, a user namespace), dockerd's extraction
    // skips it and goes on ("skipping device nodes in a userns"): the copy succeeds without it,
    // never a 500.
    if (/Operation not permitted/i.test((err as Error).message)) return false;
    throw err;
  }
}
