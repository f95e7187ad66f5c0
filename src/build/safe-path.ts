// Paths inside a mounted image filesystem, resolved the way a chroot would: symlinks are followed
// but never out of the root (an absolute link target is taken relative to the root).
import { lstat, readlink } from 'node:fs/promises';
import { posix } from 'node:path';

const MAX_LINKS = 255;

/** The host path of `path` inside `root`, following symlinks in scope of the root. */
export async function safeJoin(root: string, path: string): Promise<string> {
  const parts = posix.normalize(`/${path}`).split('/').filter(Boolean);
  const done: string[] = [];
  let links = 0;
  while (parts.length) {
    const part = parts.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      done.pop();
      continue;
    }
    const host = posix.join(root, ...done, part);
    let st;
    try {
      st = await lstat(host);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        done.push(part, ...parts);
        break;
      }
      throw err;
    }
    if (!st.isSymbolicLink()) {
      done.push(part);
      continue;
    }
    if (++links > MAX_LINKS) throw new Error(`too many levels of symbolic links in ${path}`);
    const target = await readlink(host);
    if (target.startsWith('/')) done.length = 0;
    parts.unshift(...target.split('/').filter(Boolean));
  }
  return posix.join(root, ...done);
}
