// The one tar extractor into a directory tree on the host (extractTree): the build context and ADD's
// local archives (untar-into.ts) — the options say what differs: how names are cleaned, whether
// directories on the way may be the image's symlinks (followed inside a root), owners, and the
// build context's .dockerignore. (docker cp's daemon/archive/extract.ts works through a
// container's view of its mounts, and the pull's staged-unpack.ts is a synchronous push parser on
// a worker; both share the disk side, images/tar-disk.ts, and the header codec.)
//
// The build context: a tar stream (plain, gzip, bzip2, xz, zstd — sniffed by magic bytes) unpacked
// into an empty directory, streaming (one entry at a time, file data in writes of at most 1 MiB).
// Names are cleaned as dockerd's unpack inside a chroot of the context sees them: `../a` and `/a`
// land at `a`, a hard link's target likewise, so nothing is written outside the directory.
// Symlinks are stored as they are (absolute or leading out): COPY resolves them inside the context
// root (copy.ts). Refused with a 400 before anything is written for the entry: entries beneath a
// symlink of the archive, hard links whose target lies through a symlink. Modes, owners (when running as root), symlinks, hard links and mtimes
// are kept; device nodes and FIFOs are skipped (a context has no use for them). File data goes
// through one reused buffer, metadata and directory times as every extractor sets them
// (images/tar-disk.ts): memory per chunk is O(1) and nothing outlives it.
//
// .dockerignore is applied while extracting, in one pass: the ignore files' paths are known before
// the stream starts (`.dockerignore`, and `<Dockerfile>.dockerignore`, which wins), so an entry is
// skipped when the best ignore file seen so far ignores it. Clients put the root .dockerignore
// early (they walk the context in lexical order) and have already filtered with it; when an ignore
// file arrives after entries it ignores were written, one sweep after the stream removes them.
// So nothing ignored ever reaches COPY, and memory holds only one entry plus the list of
// directories (their mtimes are set last). The alternative, spooling the tar to read it twice,
// would double the disk traffic of every build for a case clients do not produce.
//
// Filesystem calls are synchronous on purpose (as in daemon/archive/extract.ts, measured there):
// each is a short metadata call or a write of ≤ 1 MiB, and a thread-pool hop per call made
// many-file extraction several times slower.
import { closeSync, linkSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, rmdirSync, symlinkSync, writeSync, writevSync } from 'node:fs';
import { posix } from 'node:path';
import { invalidParameter } from '../../errors.ts';
import { decompressed } from '../../images/decompress.ts';
import { readTar, TarPathGuard, type TarHeader } from '../../images/tar-reader.ts';
import { applyEntryMeta, applyFileMeta, DirTimes, EntryFileWriter, openNewFile } from '../../images/tar-disk.ts';
import { dockerfileIgnorePath, goClean, IgnoreMatcher, IgnorePatternError } from '../../wire/dockerignore.ts';
import { followSymlinkInScope } from './scoped-path.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { collectingEvery } from '../../util/heap-trim.ts';

export interface ExtractOptions {
  /** The Dockerfile's path in the context (default `Dockerfile`): it and the ignore files are always kept. */
  dockerfile?: string;
  /** Apply .dockerignore (default true). */
  applyIgnore?: boolean;
  /** Keep the archive's uids/gids (default: when running as root). */
  preserveOwners?: boolean;
  signal?: AbortSignal;
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

function writeAll(fd: number, pending: Buffer[], size: number): void {
  let written = writevSync(fd, pending);
  while (written < size) written += writeSync(fd, Buffer.concat(pending).subarray(written));
}

/** How a tree extraction treats names, parents, owners and ignore files. */
export interface TreeOptions {
  /**
   * Names (and hard links' targets) cleaned as inside a chroot of the destination, symlinks kept
   * as they are (the build context); else entries, hard links and relative symlinks leading out
   * are refused (ADD of a local tar).
   */
  rooted: boolean;
  /** Directories on the way that are symlinks are followed without leaving this root (ADD into an image's tree); else refused. */
  scope?: string;
  /** Keep the archive's uids/gids. */
  owners: boolean;
  /** The build context's .dockerignore, applied while extracting (see the header). */
  ignore?: { dockerfile: string };
  signal?: AbortSignal;
  /** What a refusal names: "invalid build context", "failed to extract archive". */
  what: string;
}

/**
 * Unpacks a build context tar into `dir` (which must exist and be empty). On an error the directory
 * holds what was unpacked so far: the caller removes it.
 */
export async function extractContext(source: AsyncIterable<Uint8Array>, dir: string, opts: ExtractOptions = {}): Promise<ExtractResult> {
  const root = realpathSync(dir);
  if (readdirSync(root).length) throw invalidParameter(`context directory ${dir} is not empty`);
  return extractTree(source, root, {
    rooted: true,
    owners: opts.preserveOwners ?? process.getuid?.() === 0,
    ...(opts.applyIgnore !== false ? { ignore: { dockerfile: goClean((opts.dockerfile || 'Dockerfile').replace(/^\/+/, '')) } } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    what: 'invalid build context',
  });
}

/**
 * The one extractor of a tar (plain or compressed) into a directory tree on the host (`dest`, a
 * real directory): the build context and ADD's local archives. On an error `dest` holds what was
 * unpacked so far.
 */
export async function extractTree(source: AsyncIterable<Uint8Array>, dest: string, o: TreeOptions): Promise<ExtractResult> {
  const bad = (msg: string) => invalidParameter(`${o.what}: ${msg}`);
  const dockerfile = o.ignore?.dockerfile ?? '';
  const dfIgnore = o.ignore ? dockerfileIgnorePath(dockerfile) : '';
  const alwaysKept = new Set(o.ignore ? ['.dockerignore', dfIgnore, dockerfile] : []);
  const owners = o.owners;
  const guard = new TarPathGuard({ absoluteSymlinks: true, rooted: o.rooted });
  const writer = new EntryFileWriter();
  /** Directories of the archive known to be real directories: relative path → where it is. */
  const dirs = new Map<string, string>([['', dest]]);
  const dirTimes = new DirTimes();
  const result: ExtractResult = { entries: 0, bytes: 0, skipped: 0, ignore: new IgnoreMatcher([]) };
  let matcherFrom: string | undefined;
  let sweep = false;
  /** What hard links' targets must stay in, through real directories. */
  const within = realpathSync(o.scope ?? dest);

  /** The real directory for `rel` (made 0755 when missing); a symlink on the way is followed inside `scope`, else refused. */
  const dirFor = (rel: string): string => {
    const known = dirs.get(rel);
    if (known !== undefined) return known;
    const parent = dirFor(posix.dirname(rel) === '.' ? '' : posix.dirname(rel));
    const path = `${parent}/${posix.basename(rel)}`;
    const real = o.scope ? followSymlinkInScope(path, o.scope) : path;
    const st = lstatOrNull(real);
    if (!st) mkdirSync(real, { mode: 0o755 });
    else if (!st.isDirectory()) throw bad(`${rel} is not a directory`);
    dirs.set(rel, real);
    return real;
  };

  // Entries already buffered follow each other in microtasks only: other requests get a turn
  // every ~20 ms (a tar of small files held the event loop ~80 ms at a time).
  let sliceStart = performance.now();
  // Each chunk is written out before the next is read: young collections keep the dead ones (and
  // a decompressor's) from piling up until V8 notices their off-heap memory (collectingEvery).
  for await (const { header: h, body } of readTar(collectingEvery(decompressed(source)), { stopAtEnd: true })) {
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
    if (h.kind === 'char' || h.kind === 'block' || h.kind === 'fifo') {
      result.skipped++;
      continue;
    }
    const target = `${dirFor(posix.dirname(rel) === '.' ? '' : posix.dirname(rel))}/${posix.basename(rel)}`;
    /**
     * Runs `make` (which creates `target`); when something is already there (an archive may hold a
     * path twice), replaces it — unless both are directories — and runs it again. Trying first
     * saves an lstat per entry in the common case of a new path.
     */
    const place = <T>(make: () => T): T => {
      try {
        return make();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      if (h.kind === 'directory' && lstatOrNull(target)?.isDirectory()) return undefined as T;
      rmSync(target, { recursive: true, force: true });
      for (const d of dirs.keys()) if (d === rel || d.startsWith(`${rel}/`)) dirs.delete(d);
      return make();
    };
    if (isIgnoreFile) {
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
      const linkSource = (): string => {
        const linkRel = guard.entryPath(h.linkname);
        if (!o.scope) return linkRel === '' ? dest : `${dest}/${linkRel}`;
        return `${dirFor(posix.dirname(linkRel) === '.' ? '' : posix.dirname(linkRel))}/${posix.basename(linkRel)}`;
      };
      result.bytes += await createEntry(within, target, h, body, place, writer, owners, linkSource, bad);
    }
    result.entries++;
    // A link has its target's metadata; a regular file got its own through its descriptor.
    if (h.kind === 'link' || (h.kind === 'file' && !isIgnoreFile)) continue;
    if (h.kind === 'directory') dirs.set(rel, target);
    applyEntryMeta(target, h, owners ? h : null, dirTimes);
  }
  if (matcherFrom !== undefined) result.ignoreFile = matcherFrom;
  if (sweep) result.skipped += sweepIgnored(dest, '', result.ignore, alwaysKept);
  dirTimes.apply(); // a directory removed by a later entry or the sweep is skipped
  return result;
}

function lstatOrNull(p: string) {
  return lstatSync(p, { throwIfNoEntry: false }) ?? null;
}

/** Creates `target` (never through a symlink: O_EXCL|O_NOFOLLOW) holding `chunks`; the mode is set later. */
function writeFileSync(target: string, chunks: Buffer[], size: number): void {
  const fd = openNewFile(target);
  try {
    if (size) writeAll(fd, chunks, size);
  } finally {
    closeSync(fd);
  }
}

/** Creates one entry (through `place`, which replaces what is there); returns the bytes of file data written. */
async function createEntry(
  root: string, target: string, h: TarHeader, body: AsyncIterable<Buffer>, place: <T>(make: () => T) => T, writer: EntryFileWriter, owners: boolean,
  linkSource: () => string, bad: (msg: string) => Error,
): Promise<number> {
  switch (h.kind) {
    case 'directory':
      place(() => mkdirSync(target, { mode: 0o700 }));
      return 0;
    case 'symlink':
      place(() => symlinkSync(h.linkname, target));
      return 0;
    case 'link': {
      const src = linkSource();
      if (src === target) throw bad(`hard link ${JSON.stringify(h.name)} points to itself`);
      const st = lstatOrNull(src);
      if (!st) throw bad(`hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)}: target not found (ignored or not in the archive)`);
      if (st.isDirectory()) throw bad(`hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)} is a directory`);
      // The target's directory must be inside the root through real directories only.
      const parent = realpathSync(posix.dirname(src));
      if (parent !== root && !parent.startsWith(root === '/' ? '/' : `${root}/`)) throw bad(`hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)} points outside the context`);
      place(() => linkSync(src, target));
      return 0;
    }
    default: {
      const fd = place(() => openNewFile(target));
      try {
        const n = await writer.write(fd, body);
        // Through the descriptor: no path walk per call (10 000 files: ~0.1 s less).
        applyFileMeta(fd, h, owners ? h : null);
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
