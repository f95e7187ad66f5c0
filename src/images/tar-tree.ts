// The one tar extractor into a directory tree (extractTree): the build context
// (build/context/tar-extract.ts), ADD's local archives (build/context/untar-into.ts) and docker cp
// into a container (daemon/archive/extract.ts). A tar (plain or compressed, sniffed) is read one
// entry at a time and each entry is made before the next is read; what differs between the callers
// is an option: how names are cleaned (`rooted`: as inside a chroot, else refused when they lead
// out), where a directory of the archive is on the host (`layout`: plain paths under the
// destination — optionally following the image's symlinks inside a root — or a container's view
// of its mounts with its checks), owners (kept, or given), device nodes (skipped or made), and the
// build context's .dockerignore (applied while extracting, see tar-extract.ts).
//
// An existing path is replaced unless both are directories (the layout may refuse first); the make
// is tried before any lstat (an archive may hold a path twice, but most paths are new). Entries
// beneath a symlink of the archive are refused by TarPathGuard; hard links must point at a file of
// the tree reached through real directories. The pull's staged unpack (distribution/
// staged-unpack.ts) is a synchronous push parser on a worker thread and shares the disk side
// (tar-disk.ts) and the header codec, not this loop.
import {
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { posix } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { invalidParameter } from '../errors.ts';
import { collectingEvery } from '../util/heap-trim.ts';
import { dockerfileIgnorePath, IgnoreMatcher, IgnorePatternError } from '../wire/dockerignore.ts';
import { decompressed } from './decompress.ts';
import { applyEntryMeta, applyFileMeta, DirTimes, EntryFileWriter, openNewFile, type EntryOwner } from './tar-disk.ts';
import { readTar, TarPathGuard, type TarHeader } from './tar-reader.ts';

/** Where the archive's directories and entries are on the host. */
export interface TreeLayout {
  /**
   * The host path of the archive's directory `rel`, its parent being at `parentHost`: checked to
   * be a real directory, made 0755 when missing and `create`; undefined when missing otherwise.
   */
  dir(rel: string, parentHost: string, entryName: string, create: boolean): string | undefined;
  /** The host path of the entry `rel` in the directory at `dirHost` (checks before writing there). */
  entry?(rel: string, dirHost: string): string;
  /** Before what is at `rel` is replaced by the entry `h` (both directories: never asked). */
  replacing?(rel: string, existingIsDir: boolean, h: TarHeader): void;
}

export interface TreeOptions {
  /**
   * Names (and hard links' targets) cleaned as inside a chroot of the destination, symlinks kept
   * as they are (the build context); else entries, hard links and relative symlinks leading out
   * are refused.
   */
  rooted: boolean;
  /** Default layout: a directory on the way that is a symlink is followed by this (inside a root); else refused. */
  follow?: (hostPath: string) => string;
  layout?: TreeLayout;
  /** Where hard links' targets must stay through real directories (default: the destination). */
  within?: string;
  /** The owner each entry gets: the archive's (true), the process's (false), or given. */
  owners: boolean | ((h: TarHeader) => EntryOwner);
  /** Device nodes and FIFOs: skipped (counted), or made with mknod (skipped where the kernel refuses). */
  devices?: 'skip' | 'make';
  /** Makes a device node or FIFO at `host` (devices: 'make'); false when the kernel refuses it. */
  mknod?: (host: string, h: TarHeader) => Promise<boolean>;
  /** The build context's .dockerignore: the Dockerfile's path (it and the ignore files are always kept). */
  ignore?: { dockerfile: string };
  /** Nothing after the end-of-archive marker is read (the rest of a padded stream costs nothing). */
  stopAtEnd?: boolean;
  signal?: AbortSignal;
  /** What a refusal names: "invalid build context", "failed to extract archive", "invalid tar archive". */
  what: string;
}

export interface ExtractResult {
  /** Entries written (directories, files, links). */
  entries: number;
  /** Bytes of file data written. */
  bytes: number;
  /** Entries skipped: ignored by .dockerignore, or devices and FIFOs. */
  skipped: number;
  /** The ignore file that applied, if any, and its matcher (empty when none). */
  ignoreFile?: string;
  ignore: IgnoreMatcher;
}

/** An ignore file larger than this is not a list of patterns. */
const MAX_IGNORE_FILE = 4 << 20;

function lstatOrNull(p: string) {
  return lstatSync(p, { throwIfNoEntry: false }) ?? null;
}

/** Plain directories under the destination; a symlink on the way followed by `follow`, else refused. */
function plainLayout(bad: (msg: string) => Error, follow?: (p: string) => string): TreeLayout {
  return {
    dir(rel, parentHost, _name, create) {
      const path = `${parentHost}/${posix.basename(rel)}`;
      // A hard link's source in the build context: as it is; where it really is gets checked after.
      if (!create && !follow) return path;
      const real = follow ? follow(path) : path;
      const st = lstatOrNull(real);
      if (!st) {
        if (!create) return undefined;
        mkdirSync(real, { mode: 0o755 });
      } else if (!st.isDirectory()) throw bad(`${rel} is not a directory`);
      return real;
    },
  };
}

/**
 * Extracts `source` into the directory `dest` (the host path of the archive's root). On an error
 * `dest` holds what was extracted so far.
 */
export async function extractTree(source: AsyncIterable<Uint8Array>, dest: string, o: TreeOptions): Promise<ExtractResult> {
  const bad = (msg: string) => invalidParameter(`${o.what}: ${msg}`);
  const layout = o.layout ?? plainLayout(bad, o.follow);
  const dockerfile = o.ignore?.dockerfile ?? '';
  const dfIgnore = o.ignore ? dockerfileIgnorePath(dockerfile) : '';
  const alwaysKept = new Set(o.ignore ? ['.dockerignore', dfIgnore, dockerfile] : []);
  const ownerOf = (h: TarHeader): EntryOwner => (typeof o.owners === 'function' ? o.owners(h) : o.owners ? h : null);
  const guard = new TarPathGuard({ absoluteSymlinks: true, rooted: o.rooted });
  const writer = new EntryFileWriter();
  /** Directories of the archive known to be real directories: relative path → host path. */
  const dirs = new Map<string, string>([['', dest]]);
  const dirTimes = new DirTimes();
  const result: ExtractResult = { entries: 0, bytes: 0, skipped: 0, ignore: new IgnoreMatcher([]) };
  let matcherFrom: string | undefined;
  let sweep = false;
  /** What hard links' targets must stay in, through real directories. */
  const within = realpathSync(o.within ?? dest);
  const parentOf = (rel: string) => (posix.dirname(rel) === '.' ? '' : posix.dirname(rel));

  /** The host directory of `rel` (made when missing and `create`). */
  const dirFor = (rel: string, name: string, create = true): string | undefined => {
    const known = dirs.get(rel);
    if (known !== undefined) return known;
    const parent = dirFor(parentOf(rel), name, create);
    const host = parent === undefined ? undefined : layout.dir(rel, parent, name, create);
    if (host !== undefined) dirs.set(rel, host);
    return host;
  };

  // Entries already buffered follow each other in microtasks only: other requests get a turn
  // every ~20 ms (a tar of small files held the event loop ~80 ms at a time).
  let sliceStart = performance.now();
  // Each chunk is written out before the next is read: young collections keep the dead ones (and
  // a decompressor's) from piling up until V8 notices their off-heap memory (collectingEvery).
  for await (const { header: h, body } of readTar(collectingEvery(decompressed(source)), { stopAtEnd: !!o.stopAtEnd })) {
    if (performance.now() - sliceStart > 20) {
      await nextTurn();
      sliceStart = performance.now();
    }
    if (o.signal?.aborted) throw o.signal.reason ?? new Error('aborted');
    const rel = guard.check(h);
    if (rel === '' || h.kind === 'other') continue;
    const isIgnoreFile = !!o.ignore && h.kind === 'file' && (rel === '.dockerignore' || rel === dfIgnore);
    if (!isIgnoreFile && !alwaysKept.has(rel) && result.ignore.ignores(rel)) {
      result.skipped++;
      continue;
    }
    const device = h.kind === 'char' || h.kind === 'block' || h.kind === 'fifo';
    if (device && o.devices !== 'make') {
      result.skipped++;
      continue;
    }
    const dirHost = dirFor(parentOf(rel), h.name)!;
    const target = layout.entry ? layout.entry(rel, dirHost) : `${dirHost}/${posix.basename(rel)}`;
    /** Replaces what is at the target (the layout may refuse); false: both are directories, kept. */
    const clear = (): boolean => {
      const isDir = !!lstatOrNull(target)?.isDirectory();
      if (h.kind === 'directory' && isDir) return false;
      layout.replacing?.(rel, isDir, h);
      rmSync(target, { recursive: true, force: true });
      for (const d of dirs.keys()) if (d === rel || d.startsWith(`${rel}/`)) dirs.delete(d);
      return true;
    };
    /** Runs `make` (which creates the target); when something is already there, clears it and runs it again. */
    const place = <T>(make: () => T): T => {
      try {
        return make();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      return clear() ? make() : (undefined as T);
    };
    if (device) {
      if (lstatOrNull(target)) clear();
      if (!(await o.mknod!(target, h))) continue; // refused by the kernel (a userns, a device cgroup): skipped, as dockerd
    } else if (isIgnoreFile) {
      const data = await readSmall(body, rel, bad);
      place(() => writeFileSync(target, [data], data.length));
      result.bytes += data.length;
      // The Dockerfile's own ignore file wins over the root one, whichever comes first.
      if (rel === dfIgnore || matcherFrom !== dfIgnore) {
        try {
          result.ignore = IgnoreMatcher.fromFile(data.toString('utf8'));
        } catch (e) {
          throw e instanceof IgnorePatternError ? invalidParameter(e.message) : e;
        }
        matcherFrom = rel;
        if (result.entries > 0) sweep = true;
      }
    } else {
      const linkSource = (): string | undefined => {
        const linkRel = guard.entryPath(h.linkname);
        if (linkRel === '') return dest;
        const dir = dirFor(parentOf(linkRel), h.name, false);
        return dir === undefined ? undefined : layout.entry ? layout.entry(linkRel, dir) : `${dir}/${posix.basename(linkRel)}`;
      };
      result.bytes += await createEntry(within, target, h, body, place, writer, ownerOf(h), linkSource, bad);
    }
    result.entries++;
    // A link has its target's metadata; a regular file got its own through its descriptor.
    if (h.kind === 'link' || (h.kind === 'file' && !isIgnoreFile)) continue;
    if (h.kind === 'directory') dirs.set(rel, target);
    applyEntryMeta(target, h, ownerOf(h), dirTimes);
  }
  if (matcherFrom !== undefined) result.ignoreFile = matcherFrom;
  if (sweep) result.skipped += sweepIgnored(dest, '', result.ignore, alwaysKept);
  dirTimes.apply(); // a directory removed by a later entry or the sweep is skipped
  return result;
}

async function readSmall(body: AsyncIterable<Buffer>, name: string, bad: (msg: string) => Error): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of body) {
    n += c.length;
    if (n > MAX_IGNORE_FILE) throw bad(`${name} is larger than ${MAX_IGNORE_FILE} bytes`);
    parts.push(c);
  }
  return Buffer.concat(parts);
}

/** Creates `target` (never through a symlink: O_EXCL|O_NOFOLLOW) holding `chunks`; the mode is set later. */
function writeFileSync(target: string, chunks: Buffer[], size: number): void {
  const fd = openNewFile(target);
  try {
    if (size) {
      let written = writevSync(fd, chunks);
      while (written < size) written += writeSync(fd, Buffer.concat(chunks).subarray(written));
    }
  } finally {
    closeSync(fd);
  }
}

/** Creates one entry (through `place`, which replaces what is there); returns the bytes of file data written. */
async function createEntry(
  within: string,
  target: string,
  h: TarHeader,
  body: AsyncIterable<Buffer>,
  place: <T>(make: () => T) => T,
  writer: EntryFileWriter,
  owner: EntryOwner,
  linkSource: () => string | undefined,
  bad: (msg: string) => Error,
): Promise<number> {
  switch (h.kind) {
    case 'directory':
      place(() => mkdirSync(target, { mode: 0o700 }));
      return 0;
    case 'symlink':
      place(() => symlinkSync(h.linkname, target));
      return 0;
    case 'link': {
      const link = `hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)}`;
      const src = linkSource();
      if (src === target) throw bad(`hard link ${JSON.stringify(h.name)} points to itself`);
      const st = src === undefined ? null : lstatOrNull(src);
      if (!st) throw bad(`${link}: target not found (ignored or not in the archive)`);
      if (st.isDirectory()) throw bad(`${link} is a directory`);
      // The target's directory must be inside the tree through real directories only.
      const parent = realpathSync(posix.dirname(src!));
      if (parent !== within && !parent.startsWith(within === '/' ? '/' : `${within}/`)) throw bad(`${link} points outside the context`);
      place(() => linkSync(src!, target));
      return 0;
    }
    default: {
      const fd = place(() => openNewFile(target));
      try {
        const n = await writer.write(fd, body);
        // Through the descriptor: no path walk per call (10 000 files: ~0.1 s less).
        applyFileMeta(fd, h, owner);
        return n;
      } finally {
        closeSync(fd);
      }
    }
  }
}

/**
 * Removes what `matcher` ignores under `rel` (used when an ignore file arrived after entries it
 * ignores). A directory that is ignored is removed whole unless exceptions could keep something
 * inside it; then it is walked, and removed if nothing was kept. Returns the entries removed.
 */
function sweepIgnored(root: string, rel: string, matcher: IgnoreMatcher, keep: Set<string>): number {
  let removed = 0;
  const dir = rel === '' ? root : `${root}/${rel}`;
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    const childRel = rel === '' ? ent.name : `${rel}/${ent.name}`;
    if (keep.has(childRel)) continue;
    const ignored = matcher.ignores(childRel);
    if (ent.isDirectory() && (!ignored || matcher.hasExceptions)) {
      removed += sweepIgnored(root, childRel, matcher, keep);
      if (ignored && readdirSync(`${dir}/${ent.name}`).length === 0) {
        rmdirSync(`${dir}/${ent.name}`);
        removed++;
      }
    } else if (ignored) {
      rmSync(`${dir}/${ent.name}`, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}
