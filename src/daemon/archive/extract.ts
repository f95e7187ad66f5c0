// PUT /containers/{id}/archive: unpacks a tar into a directory of the container's view. Refused
// (400) before anything is written for that entry: absolute names, ".." components, hard links and
// relative symlinks that lead out of the target, entries beneath a symlink of the archive, and
// entries whose parent in the container is a symlink (they would be written through it). Absolute
// symlinks are allowed, as in dockerd: they are created, never followed here, and resolve inside
// the container's own root when it uses them.
//
// The filesystem calls are synchronous on purpose: each is a short metadata call or a write of about
// 1 MiB, and a thread-pool hop for every one of them made an upload of many files two to three times
// slower on a busy machine (measured), while the event loop only waits that long here. File data,
// owners, modes, times and directory times are written as every extractor writes them
// (images/tar-disk.ts).
import { closeSync, linkSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { applyEntryMeta, DirTimes, EntryFileWriter, openNewFile } from '../../images/tar-disk.ts';
import { invalidParameter } from '../../errors.ts';
import { readTar, safeEntryPath, TarPathGuard, type TarHeader } from '../../images/tar-reader.ts';
import { checkWritable, hostPath, lstatInSync, type ContainerView } from './view.ts';
import { runCommand } from '../../util/helper-shell.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';

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

export async function extractArchive(
  view: ContainerView,
  dest: string,
  source: AsyncIterable<Buffer>,
  opts: ExtractOptions,
): Promise<void> {
  const guard = new TarPathGuard({ absoluteSymlinks: true });
  /** Directories known to be real directories (created or checked during this extraction). */
  const verified = new Set<string>([dest]);
  const dirTimes = new DirTimes();
  const writer = new EntryFileWriter();

  /** Every directory between dest and cpath exists as a real directory (created when missing). */
  const ensureParents = (cpath: string, entryName: string, create: boolean): void => {
    const rel = cpath.slice(dest === '/' ? 1 : dest.length + 1).split('/');
    rel.pop();
    let cur = dest;
    for (const part of rel) {
      cur = join(cur, part);
      if (verified.has(cur)) continue;
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
      verified.add(cur);
    }
  };

  // Entries already buffered follow each other in microtasks only: other requests get a turn
  // every ~20 ms (a tar of small files held the event loop ~80 ms at a time).
  let sliceStart = performance.now();
  for await (const { header: h, body } of readTar(source)) {
    if (performance.now() - sliceStart > 20) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const rel = guard.check(h);
    if (h.kind === 'other') continue; // PAX/GNU extensions we do not act on
    if (rel === '') continue; // the archive's "./": the target directory itself stays as it is
    const cpath = join(dest, rel);
    ensureParents(cpath, h.name, true);
    checkWritable(view, cpath);
    const host = hostPath(view, cpath);
    const existing = lstatInSync(view, cpath);
    const isDir = h.kind === 'directory';
    if (existing) {
      if (opts.noOverwriteDirNonDir && existing.isDirectory() && !isDir)
        throw bad(`cannot overwrite directory "${cpath}" with non-directory "${h.name}"`);
      if (opts.noOverwriteDirNonDir && !existing.isDirectory() && isDir)
        throw bad(`cannot overwrite non-directory "${cpath}" with directory "${h.name}"`);
      if (!(existing.isDirectory() && isDir)) {
        // Never remove a mount point or anything holding one (a volume's content would go with it).
        if (view.mounts.some((m) => under(m.destination, cpath)))
          throw bad(`cannot replace ${cpath}: a volume or bind mount is mounted there`);
        rmSync(host, { recursive: true, force: true });
        for (const v of verified) if (under(v, cpath)) verified.delete(v);
      }
    }
    const created = await createEntry(view, dest, cpath, host, h, body, !!existing?.isDirectory() && isDir, ensureParents, writer);
    if (!created || h.kind === 'link') continue; // the linked file's metadata stays as its own entry set it
    const uid = opts.chown?.uid ?? h.uid;
    const gid = opts.chown?.gid ?? h.gid;
    applyEntryMeta(host, h, opts.toHost ? { uid: opts.toHost.uid(uid), gid: opts.toHost.gid(gid) } : { uid, gid }, dirTimes);
    if (isDir) verified.add(cpath);
  }
  dirTimes.apply();
}

async function createEntry(
  view: ContainerView,
  dest: string,
  cpath: string,
  host: string,
  h: TarHeader,
  body: AsyncIterable<Buffer>,
  keepDir: boolean,
  ensureParents: (cpath: string, entryName: string, create: boolean) => void,
  writer: EntryFileWriter,
): Promise<boolean> {
  switch (h.kind) {
    case 'directory':
      if (!keepDir) mkdirSync(host, { mode: 0o700 });
      return true;
    case 'file': {
      const fd = openNewFile(host);
      try {
        await writer.write(fd, body);
      } finally {
        closeSync(fd);
      }
      return true;
    }
    case 'symlink':
      symlinkSync(h.linkname, host);
      return true;
    case 'link': {
      const target = join(dest, safeEntryPath(h.linkname));
      ensureParents(target, h.name, false);
      const st = lstatInSync(view, target);
      if (!st) throw bad(`invalid tar archive: hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)}: no such file`);
      if (st.isDirectory())
        throw bad(`invalid tar archive: hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)} is a directory`);
      linkSync(hostPath(view, target), host);
      return true;
    }
    case 'char':
    case 'block':
    case 'fifo': {
      const type = h.kind === 'char' ? 'c' : h.kind === 'block' ? 'b' : 'p';
      try {
        await runCommand('mknod', [
          '-m',
          (h.mode & 0o777).toString(8),
          host,
          type,
          ...(type === 'p' ? [] : [String(h.devmajor), String(h.devminor)]),
        ]);
      } catch (err) {
        // Where the kernel refuses the node (a device cgroup, a user namespace), dockerd's
        // extraction skips it and goes on ("skipping device nodes in a userns"): the copy
        // succeeds without it, never a 500.
        if (/Operation not permitted/i.test((err as Error).message)) return false;
        throw err;
      }
      return true;
    }
  }
  return false; // other kinds (PAX/GNU extensions) were skipped before
}
