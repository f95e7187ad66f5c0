// PUT /containers/{id}/archive: unpacks a tar into a directory of the container's view. Refused
// (400) before anything is written for that entry: absolute names, ".." components, hard links and
// relative symlinks that lead out of the target, entries beneath a symlink of the archive, and
// entries whose parent in the container is a symlink (they would be written through it). Absolute
// symlinks are allowed, as in dockerd: they are created, never followed here, and resolve inside
// the container's own root when it uses them.
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { chmod, lchown, link, lutimes, mkdir, open, rm, symlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { invalidParameter } from '../../errors.ts';
import { readTar, safeEntryPath, TarPathGuard, type TarHeader } from '../../images/tar-reader.ts';
import { checkWritable, hostPath, lstatIn, type ContainerView } from './view.ts';

const execFileP = promisify(execFile);

export interface ExtractOptions {
  /** Refuse to replace a directory with a non-directory and the reverse. */
  noOverwriteDirNonDir: boolean;
  /** Owner for everything extracted (copyUIDGID: the container's user); else the archive's ids. */
  chown?: { uid: number; gid: number };
}

const bad = (msg: string) => invalidParameter(msg);
const join = (dir: string, rel: string) => (rel === '' ? dir : dir === '/' ? `/${rel}` : `${dir}/${rel}`);
const under = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);

export async function extractArchive(view: ContainerView, dest: string, source: AsyncIterable<Buffer>, opts: ExtractOptions): Promise<void> {
  const guard = new TarPathGuard({ absoluteSymlinks: true });
  /** Directories known to be real directories (created or checked during this extraction). */
  const verified = new Set<string>([dest]);
  const dirTimes: Array<{ host: string; mtime: number }> = [];

  /** Every directory between dest and cpath exists as a real directory (created when missing). */
  const ensureParents = async (cpath: string, entryName: string, create: boolean): Promise<void> => {
    const rel = cpath.slice(dest === '/' ? 1 : dest.length + 1).split('/');
    rel.pop();
    let cur = dest;
    for (const part of rel) {
      cur = join(cur, part);
      if (verified.has(cur)) continue;
      const st = await lstatIn(view, cur);
      if (!st) {
        if (!create) throw bad(`invalid tar archive: ${JSON.stringify(entryName)}: ${cur} does not exist`);
        checkWritable(view, cur);
        await mkdir(hostPath(view, cur), { mode: 0o755 });
      } else if (st.isSymbolicLink()) {
        throw bad(`invalid tar archive: entry ${JSON.stringify(entryName)} would be written through the symlink ${cur}`);
      } else if (!st.isDirectory()) {
        throw bad(`invalid tar archive: entry ${JSON.stringify(entryName)}: ${cur} is not a directory`);
      }
      verified.add(cur);
    }
  };

  for await (const { header: h, body } of readTar(source)) {
    const rel = guard.check(h);
    if (h.kind === 'other') continue; // PAX/GNU extensions we do not act on
    if (rel === '') continue; // the archive's "./": the target directory itself stays as it is
    const cpath = join(dest, rel);
    await ensureParents(cpath, h.name, true);
    checkWritable(view, cpath);
    const host = hostPath(view, cpath);
    const existing = await lstatIn(view, cpath);
    if (existing) {
      const isDir = h.kind === 'directory';
      if (opts.noOverwriteDirNonDir && existing.isDirectory() && !isDir) throw bad(`cannot overwrite directory "${cpath}" with non-directory "${h.name}"`);
      if (opts.noOverwriteDirNonDir && !existing.isDirectory() && isDir) throw bad(`cannot overwrite non-directory "${cpath}" with directory "${h.name}"`);
      if (!(existing.isDirectory() && isDir)) {
        // Never remove a mount point or anything holding one (a volume's content would go with it).
        if (view.mounts.some((m) => under(m.destination, cpath))) throw bad(`cannot replace ${cpath}: a volume or bind mount is mounted there`);
        await rm(host, { recursive: true, force: true });
        for (const v of verified) if (under(v, cpath)) verified.delete(v);
      }
    }
    await createEntry(view, dest, cpath, host, h, body, !!existing && existing.isDirectory() && h.kind === 'directory', ensureParents);
    if (h.kind === 'link') continue; // the linked file's metadata stays as its own entry set it
    const uid = opts.chown?.uid ?? h.uid;
    const gid = opts.chown?.gid ?? h.gid;
    await lchown(host, uid, gid);
    if (h.kind !== 'symlink') await chmod(host, h.mode & 0o7777); // after chown, which clears setuid
    if (h.kind === 'directory') {
      verified.add(cpath);
      dirTimes.push({ host, mtime: h.mtime });
    } else {
      await lutimes(host, h.mtime, h.mtime);
    }
  }
  // Directory times last: creating their entries changed them.
  for (const d of dirTimes.reverse()) await lutimes(d.host, d.mtime, d.mtime).catch(() => undefined);
}

async function createEntry(
  view: ContainerView, dest: string, cpath: string, host: string, h: TarHeader, body: AsyncIterable<Buffer>, keepDir: boolean,
  ensureParents: (cpath: string, entryName: string, create: boolean) => Promise<void>,
): Promise<void> {
  switch (h.kind) {
    case 'directory':
      if (!keepDir) await mkdir(host, { mode: 0o700 });
      return;
    case 'file': {
      const fh = await open(host, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        // Gathered into ~1 MiB writes: one system call per chunk of the request is slow.
        let pending: Buffer[] = [];
        let size = 0;
        for await (const chunk of body) {
          pending.push(chunk);
          size += chunk.length;
          if (size >= 1 << 20) {
            await fh.writev(pending);
            pending = [];
            size = 0;
          }
        }
        if (pending.length) await fh.writev(pending);
      } finally {
        await fh.close();
      }
      return;
    }
    case 'symlink':
      await symlink(h.linkname, host);
      return;
    case 'link': {
      const target = join(dest, safeEntryPath(h.linkname));
      await ensureParents(target, h.name, false);
      const st = await lstatIn(view, target);
      if (!st) throw bad(`invalid tar archive: hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)}: no such file`);
      if (st.isDirectory()) throw bad(`invalid tar archive: hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)} is a directory`);
      await link(hostPath(view, target), host);
      return;
    }
    case 'char':
    case 'block':
    case 'fifo': {
      const type = h.kind === 'char' ? 'c' : h.kind === 'block' ? 'b' : 'p';
      await execFileP('mknod', ['-m', (h.mode & 0o777).toString(8), host, type, ...(type === 'p' ? [] : [String(h.devmajor), String(h.devminor)])]);
      return;
    }
  }
}
