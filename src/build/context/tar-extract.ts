// The build context through the one tree extractor (images/tar-tree.ts, which ADD and docker cp use
// too), with the context's options: names cleaned as inside a chroot, .dockerignore applied.
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
import { readdirSync, realpathSync } from 'node:fs';
import { invalidParameter } from '../../errors.ts';
import { extractTree, type ExtractResult } from '../../images/tar-tree.ts';
import { goClean } from '../../wire/dockerignore.ts';

export type { ExtractResult };

export interface ExtractOptions {
  /** The Dockerfile's path in the context (default `Dockerfile`): it and the ignore files are always kept. */
  dockerfile?: string;
  /** Apply .dockerignore (default true). */
  applyIgnore?: boolean;
  /** Keep the archive's uids/gids (default: when running as root). */
  preserveOwners?: boolean;
  signal?: AbortSignal;
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
    stopAtEnd: true,
    what: 'invalid build context',
  });
}
