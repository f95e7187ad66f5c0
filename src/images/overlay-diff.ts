// The fast path of `docker commit`: a container's writable layer read straight from its overlayfs
// upper directory (what dockerd's overlay2 driver does) instead of containerd's diff service, which
// walks the whole lower and upper trees side by side. The upper directory of the container's
// active snapshot holds exactly its changes over the parent snapshot; overlay's own markers become
// the OCI layer's: a 0/0 character device is a deleted entry (`.wh.<name>`), a directory with
// trusted.overlay.opaque=y hides everything below it (`.wh..wh..opq`). Where this is not exact (no overlay
// mount, redirect_dir/metacopy/volatile options, xattrs our writer cannot carry, no getfattr),
// `upperDirOf`/`readUpperXattrs` answer null and the caller uses the diff service.
import { closeSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { runCommand } from '../util/helper-shell.ts';
import { TarWriter, type TarEntry } from '../util/tar-writer.ts';
import { InodeMap } from '../util/inode-map.ts';
import type { Mount } from '../supervisor/types.ts';

/** The upper directory of an overlay mount whose upper holds plain changes, else null. */
export function upperDirOf(mounts: Mount[]): string | null {
  if (mounts.length !== 1 || mounts[0]!.type !== 'overlay') return null;
  let upper: string | null = null;
  for (const o of mounts[0]!.options) {
    // redirect_dir and metacopy store renames / metadata-only copies as xattrs a plain walk misreads.
    if (/^(redirect_dir|metacopy)=(?!off$)/.test(o) || o === 'volatile') return null;
    if (o.startsWith('upperdir=')) upper = o.slice('upperdir='.length);
  }
  return upper;
}

/** Undoes getfattr's escapes of a file name (`\ooo` octal, `\\`). */
function unescapeName(s: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && /^[0-7]{3}$/.test(s.slice(i + 1, i + 4))) {
      bytes.push(parseInt(s.slice(i + 1, i + 4), 8));
      i += 3;
    } else if (s[i] === '\\' && s[i + 1] === '\\') {
      bytes.push(0x5c);
      i += 1;
    } else for (const b of Buffer.from(s[i]!, 'utf8')) bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Parsed `getfattr -d -e base64` output: absolute path → name → value bytes. */
export function parseGetfattr(out: string): Map<string, Map<string, Buffer>> {
  const all = new Map<string, Map<string, Buffer>>();
  let cur: Map<string, Buffer> | null = null;
  for (const line of out.split('\n')) {
    if (line.startsWith('# file: ')) {
      cur = new Map();
      all.set(unescapeName(line.slice('# file: '.length)), cur);
      continue;
    }
    const eq = line.indexOf('=');
    if (!cur || eq < 0) continue;
    const value = line.slice(eq + 1);
    // -e base64 writes 0s<base64>; an empty value is written as "" (quoted text).
    const bytes = value.startsWith('0s') ? Buffer.from(value.slice(2), 'base64') : Buffer.from(value.replace(/^"|"$/g, ''));
    cur.set(line.slice(0, eq), bytes);
  }
  return all;
}

/** Every xattr under `upper` (one getfattr for the whole tree), or null when it cannot be read. */
export async function readUpperXattrs(upper: string): Promise<Map<string, Map<string, Buffer>> | null> {
  try {
    const out = await runCommand('getfattr', ['-R', '-P', '-h', '-d', '-m', '-', '-e', 'base64', '--absolute-names', upper]);
    return parseGetfattr(out);
  } catch {
    return null; // not installed, or an unreadable tree: the diff service will do it
  }
}

/**
 * Whether the xattrs say the plain walk is exact: overlay markers other than opaque=y (redirects,
 * metacopy, xattr whiteouts: kernel defaults can turn these on without a mount option) and values
 * PAX text cannot carry send the commit to the diff service.
 */
export function xattrsFastPathable(all: Map<string, Map<string, Buffer>>): boolean {
  for (const x of all.values())
    for (const [name, value] of x) {
      if (name === 'trusted.overlay.opaque') {
        if (value.toString() !== 'y') return false;
      } else if (name === 'trusted.overlay.origin' || name === 'trusted.overlay.impure' || name === 'trusted.overlay.uuid') continue;
      else if (name.startsWith('trusted.overlay.')) return false;
      else if (!Buffer.from(value.toString('utf8'), 'utf8').equals(value)) return false;
    }
  return true;
}

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';

/** Thrown while walking when the tree has something the fast path does not carry exactly. */
export class NotFastPathable extends Error {}

function devNumbers(rdev: number): { devmajor: number; devminor: number } {
  return { devmajor: Math.floor(rdev / 256) & 0xfff, devminor: (rdev & 0xff) | ((Math.floor(rdev / 4096) & 0xfff00) >>> 0) };
}

/** The PAX records of an entry's xattrs (overlay's own left out); throws for values PAX text cannot carry. */
function xattrPax(x: Map<string, Buffer> | undefined): Record<string, string> | undefined {
  if (!x) return undefined;
  const pax: Record<string, string> = {};
  for (const [name, value] of x) {
    if (name.startsWith('trusted.overlay.')) continue;
    const text = value.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(value)) throw new NotFastPathable(`xattr ${name} is binary`);
    pax[`SCHILY.xattr.${name}`] = text;
  }
  return Object.keys(pax).length ? pax : undefined;
}

/** A directory's names in byte order, as Go's walk gives them (UTF-16 order differs only beyond ASCII). */
function sortedNames(dir: string): string[] {
  const names = readdirSync(dir);
  if (names.every((n) => /^[\x00-\x7f]*$/.test(n))) return names.sort();
  return names
    .map((n) => [Buffer.from(n), n] as const)
    .sort((a, b) => Buffer.compare(a[0], b[0]))
    .map(([, n]) => n);
}

/**
 * Writes the layer tar of `upper` (lexical order, like Go's walk): entries with their owners,
 * modes, mtimes (seconds) and xattrs, hard links within the layer as links, whiteouts and opaque
 * markers translated. Sockets are skipped, as Go's archive/tar does. File content is read into one
 * buffer, reused once the writer's sink has returned: a sink that keeps chunks must copy them.
 * The filesystem calls are synchronous (a thread-pool hop and a promise per call cost more than a
 * metadata call or a read from the page cache, and their garbage grew V8's young generation by
 * ~17 MiB over 10 000 files); other requests get a turn every ~20 ms.
 */
export async function writeUpperTar(upper: string, xattrs: Map<string, Map<string, Buffer>>, tw: TarWriter): Promise<void> {
  const shared = Buffer.allocUnsafe(1 << 20); // one read buffer: each piece is consumed before the next read
  // Inode → first archive path of files with several links: files hard-linked from outside the
  // layer (the builder's COPY links the context's files) all have nlink 2, so this holds every
  // such file (~80 bytes each: the number key and the path; a string key per file grew V8's young
  // generation by 16 MiB over 10 000 files).
  const links = new InodeMap<string>();
  let sliceStart = performance.now();
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const name of sortedNames(dir)) {
      if (performance.now() - sliceStart > 20) {
        await nextTurn();
        sliceStart = performance.now();
      }
      const abs = join(dir, name);
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(abs);
      const x = xattrs.get(abs);
      const base = { uid: st.uid, gid: st.gid, mtime: st.mtime, mode: st.mode & 0o7777 };
      if (st.isCharacterDevice() && st.rdev === 0) {
        await tw.entry({ name: rel ? `${rel}/${WHITEOUT}${name}` : `${WHITEOUT}${name}`, type: 'file', mode: 0, mtime: st.mtime });
      } else if (st.isDirectory()) {
        await tw.entry({ ...base, name: path, type: 'directory', pax: xattrPax(x) });
        if (x?.get('trusted.overlay.opaque')?.toString() === 'y')
          await tw.entry({ name: `${path}/${OPAQUE}`, type: 'file', mode: 0, mtime: st.mtime });
        await walk(abs, path);
      } else if (st.isFile()) {
        const first = st.nlink > 1 ? links.get(st) : undefined;
        if (first) await tw.hardlink(path, first, { ...base, pax: xattrPax(x) });
        else {
          if (st.nlink > 1) links.set(st, path);
          await writeFileEntry(tw, { ...base, name: path, type: 'file', size: st.size, pax: xattrPax(x) }, abs, shared);
        }
      } else if (st.isSymbolicLink()) {
        await tw.entry({ ...base, name: path, type: 'symlink', linkname: readlinkSync(abs), pax: xattrPax(x) });
      } else if (st.isCharacterDevice() || st.isBlockDevice()) {
        await tw.entry({ ...base, name: path, type: st.isCharacterDevice() ? 'char' : 'block', ...devNumbers(st.rdev), pax: xattrPax(x) });
      } else if (st.isFIFO()) {
        await tw.entry({ ...base, name: path, type: 'fifo', pax: xattrPax(x) });
      }
      // sockets: not representable in tar; skipped like Go's archive/tar (and containerd) do
    }
  };
  await walk(upper, '');
  await tw.finish();
}

/** A regular file's entry, its data read into `buf` (a file that fits is handed over in one piece). */
async function writeFileEntry(tw: TarWriter, entry: TarEntry & { size: number }, path: string, buf: Buffer): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    const size = entry.size;
    if (size <= buf.length) {
      for (let done = 0; done < size;) {
        const n = readSync(fd, buf, done, size - done, done);
        if (n === 0) throw new Error(`${path}: shorter than its ${size} bytes`);
        done += n;
      }
      await tw.entry(entry, buf.subarray(0, size));
      return;
    }
    await tw.entry(entry, readInto(fd, path, size, buf));
  } finally {
    closeSync(fd);
  }
}

/** A large file's `size` bytes in pieces read into `buf` (each piece valid until the next is asked for). */
async function* readInto(fd: number, path: string, size: number, buf: Buffer): AsyncGenerator<Buffer> {
  for (let done = 0; done < size;) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - done), done);
    if (n === 0) throw new Error(`${path}: shorter than its ${size} bytes`);
    done += n;
    yield buf.subarray(0, n);
  }
}

/** The xattrs of the given paths (getfattr in batches), or null when they cannot be read (no getfattr). */
export async function readXattrsOf(paths: string[]): Promise<Map<string, Map<string, Buffer>> | null> {
  const all = new Map<string, Map<string, Buffer>>();
  for (let i = 0; i < paths.length; i += 200) {
    try {
      const out = await runCommand('getfattr', [
        '-P',
        '-h',
        '-d',
        '-m',
        '-',
        '-e',
        'base64',
        '--absolute-names',
        '--',
        ...paths.slice(i, i + 200),
      ]);
      for (const [p, x] of parseGetfattr(out)) all.set(p, x);
    } catch {
      return null; // not installed, or a path gone meanwhile: the diff service will do it
    }
  }
  return all;
}

/**
 * Writes the layer tar of a change list (tree-diff.ts: parents before children) read from the new
 * tree `root`: a deletion as its whiteout, a directory as its header alone (what changed below it
 * is listed on its own), anything else as writeUpperTar writes it, hard links within the layer as
 * links. Throws NotFastPathable for xattrs PAX text cannot carry.
 */
export async function writeChangesTar(
  root: string,
  changes: Array<{ Path: string; Kind: number }>,
  xattrs: Map<string, Map<string, Buffer>>,
  tw: TarWriter,
): Promise<void> {
  const shared = Buffer.allocUnsafe(1 << 20);
  const links = new InodeMap<string>();
  const now = new Date(); // whiteouts carry the time of the export, as dockerd's ExportChanges gives them
  let sliceStart = performance.now();
  for (const c of changes) {
    if (performance.now() - sliceStart > 20) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const path = c.Path.slice(1);
    if (c.Kind === 2) {
      const slash = path.lastIndexOf('/');
      await tw.entry({ name: `${path.slice(0, slash + 1)}${WHITEOUT}${path.slice(slash + 1)}`, type: 'file', mode: 0, mtime: now });
      continue;
    }
    const abs = join(root, path);
    const st = lstatSync(abs);
    const x = xattrs.get(abs);
    const base = { uid: st.uid, gid: st.gid, mtime: st.mtime, mode: st.mode & 0o7777 };
    if (st.isDirectory()) await tw.entry({ ...base, name: path, type: 'directory', pax: xattrPax(x) });
    else if (st.isFile()) {
      const first = st.nlink > 1 ? links.get(st) : undefined;
      if (first) await tw.hardlink(path, first, { ...base, pax: xattrPax(x) });
      else {
        if (st.nlink > 1) links.set(st, path);
        await writeFileEntry(tw, { ...base, name: path, type: 'file', size: st.size, pax: xattrPax(x) }, abs, shared);
      }
    } else if (st.isSymbolicLink()) await tw.entry({ ...base, name: path, type: 'symlink', linkname: readlinkSync(abs), pax: xattrPax(x) });
    else if (st.isCharacterDevice() || st.isBlockDevice())
      await tw.entry({ ...base, name: path, type: st.isCharacterDevice() ? 'char' : 'block', ...devNumbers(st.rdev), pax: xattrPax(x) });
    else if (st.isFIFO()) await tw.entry({ ...base, name: path, type: 'fifo', pax: xattrPax(x) });
    // sockets: not representable in tar; skipped like Go's archive/tar (and containerd) do
  }
  await tw.finish();
}
