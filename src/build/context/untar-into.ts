// ADD's auto-extraction of a local tar archive (plain, gzip, bzip2, xz, zstd) into a directory of
// an image's filesystem, as dockerd's archive.Untar does it: owners, modes and mtimes from the
// archive, an existing path replaced unless both are directories. dockerd ran it in a chroot;
// here every parent directory is resolved inside the root (symlinks of the image followed without
// leaving it) and the last component is never followed. Entries with `..`, absolute names, links
// leading out or entries beneath a symlink of the archive are refused (400).
import { createReadStream, closeSync, linkSync, lstatSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { posix } from 'node:path';
import { invalidParameter } from '../../errors.ts';
import { decompressed } from '../../images/decompress.ts';
import { readTar, safeEntryPath, TarPathGuard } from '../../images/tar-reader.ts';
import { followSymlinkInScope } from './scoped-path.ts';
import { isTarHeader } from '../../wire/tar-header.ts';
import { applyEntryMeta, DirTimes, EntryFileWriter, openNewFile } from '../../images/tar-disk.ts';

/** Whether the file is a tar archive, compressed or not (dockerd's IsArchivePath: a readable first header). */
export async function isArchive(path: string): Promise<boolean> {
  const stream = createReadStream(path, { highWaterMark: 64 << 10 });
  try {
    let head = Buffer.alloc(0);
    for await (const chunk of decompressed(stream as AsyncIterable<Buffer>)) {
      head = Buffer.concat([head, chunk]);
      if (head.length >= 512) break;
    }
    return isTarHeader(head);
  } catch {
    return false; // not decompressible: not an archive, copied as a file
  } finally {
    stream.destroy();
  }
}

/** Extracts `file` into `destDir` (a real directory inside `root`). */
export async function untarInto(file: string, destDir: string, root: string): Promise<{ entries: number }> {
  const guard = new TarPathGuard({ absoluteSymlinks: true });
  const parents = new Map<string, string>([['', destDir]]);
  const dirTimes = new DirTimes();
  const writer = new EntryFileWriter();
  let entries = 0;
  /** The real directory for `rel` (created 0755 when missing), resolved inside the root. */
  const dirFor = (rel: string): string => {
    const known = parents.get(rel);
    if (known) return known;
    const parent = dirFor(posix.dirname(rel) === '.' ? '' : posix.dirname(rel));
    const real = followSymlinkInScope(`${parent}/${posix.basename(rel)}`, root);
    const st = lstatSync(real, { throwIfNoEntry: false });
    if (!st) mkdirSync(real, { mode: 0o755 });
    else if (!st.isDirectory()) throw invalidParameter(`failed to extract archive: ${rel} is not a directory`);
    parents.set(rel, real);
    return real;
  };
  for await (const { header: h, body } of readTar(decompressed(createReadStream(file) as AsyncIterable<Buffer>))) {
    const rel = guard.check(h);
    if (rel === '' || h.kind === 'other' || h.kind === 'char' || h.kind === 'block' || h.kind === 'fifo') continue;
    const dir = dirFor(posix.dirname(rel) === '.' ? '' : posix.dirname(rel));
    const target = `${dir}/${posix.basename(rel)}`;
    const existing = lstatSync(target, { throwIfNoEntry: false });
    if (existing && !(existing.isDirectory() && h.kind === 'directory')) {
      rmSync(target, { recursive: true, force: true });
      for (const k of parents.keys()) if (k === rel || k.startsWith(`${rel}/`)) parents.delete(k);
    }
    switch (h.kind) {
      case 'directory':
        if (!existing?.isDirectory()) mkdirSync(target, { mode: 0o700 });
        parents.set(rel, target);
        break;
      case 'symlink':
        symlinkSync(h.linkname, target);
        break;
      case 'link': {
        const linkRel = safeEntryPath(h.linkname);
        const ldir = dirFor(posix.dirname(linkRel) === '.' ? '' : posix.dirname(linkRel));
        linkSync(`${ldir}/${posix.basename(linkRel)}`, target);
        break;
      }
      default: {
        const fd = openNewFile(target);
        try {
          await writer.write(fd, body);
        } finally {
          closeSync(fd);
        }
      }
    }
    entries++;
    if (h.kind !== 'link') applyEntryMeta(target, h, h, dirTimes);
  }
  dirTimes.apply();
  return { entries };
}
