// ADD's auto-extraction of a local tar archive (plain, gzip, bzip2, xz, zstd) into a directory of
// an image's filesystem, as dockerd's archive.Untar does it: owners, modes and mtimes from the
// archive, an existing path replaced unless both are directories. dockerd ran it in a chroot;
// here every parent directory is resolved inside the root (symlinks of the image followed without
// leaving it) and the last component is never followed. Entries with `..`, absolute names, links
// leading out or entries beneath a symlink of the archive are refused (400).
import { createReadStream } from 'node:fs';
import { decompressed } from '../../images/decompress.ts';
import { isTarHeader } from '../../wire/tar-header.ts';
import { extractTree } from '../../images/tar-tree.ts';
import { followSymlinkInScope } from './scoped-path.ts';

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

/**
 * Extracts `file` into `destDir` (a real directory inside `root`) with the one tree extractor
 * (images/tar-tree.ts): names that lead out refused, directories on the way resolved inside `root`.
 */
export async function untarInto(file: string, destDir: string, root: string): Promise<{ entries: number }> {
  const r = await extractTree(createReadStream(file) as AsyncIterable<Buffer>, destDir, {
    rooted: false,
    follow: (p) => followSymlinkInScope(p, root),
    within: root,
    owners: true,
    stopAtEnd: true,
    what: 'failed to extract archive',
  });
  return { entries: r.entries };
}
