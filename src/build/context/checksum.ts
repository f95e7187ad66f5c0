// The content checksum of a COPY/ADD's sources, for the layer cache key: for every entry the copy
// would write, in a fixed order — its kind, its name relative to the source, its mode (after
// --chmod), its owner (after --chown; the source's when owners are kept), its size and the SHA-256
// of its data, a symlink's target, a hard link's first path. Not mtimes and not the context's path,
// so touching a file keeps the cache and changing a byte, a mode or an owner invalidates it.
// Streaming: files are hashed in reads of at most 1 MiB, never held whole. The reads are
// synchronous (a thread-pool hop per small file costs more than the read), and the walk yields to
// the event loop every ~20 ms so a large context does not stall the daemon.
import { createHash, hash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, statSync, type Stats } from 'node:fs';
import type { CopySource } from './copy-sources.ts';
import type { Owner } from './copy.ts';
import { setImmediate as tick } from 'node:timers/promises';
import { InodeMap } from '../../util/inode-map.ts';

export interface ChecksumOptions {
  /** The owner the copy gives every entry; undefined: the sources' own owners are kept. */
  owner?: Owner;
  /** The --chmod mode, if any. */
  mode?: number;
}

const CHUNK = 1 << 20;

/**
 * The one read buffer of every digest: reads are synchronous, so it is never shared by two at a
 * time. A fresh buffer per file (as before) left ~1 MiB of garbage per large file, and the peak RSS
 * of a build grew with the context's size until a GC caught up. Let go when the last build ends
 * (releaseDigestBuffer): kept, it was 1 MiB of an idle daemon's RSS for good after its first build.
 */
let shared: Buffer | undefined;

/** Drops the shared read buffer (no build is running): the next digest allocates a fresh one. */
export function releaseDigestBuffer(): void {
  shared = undefined;
}

/** SHA-256 of a file's data, read in chunks of at most 1 MiB. */
export function fileDigest(path: string, _size?: number): string {
  const fd = openSync(path, 'r');
  try {
    const buf = (shared ??= Buffer.allocUnsafeSlow(CHUNK));
    // A file that fits the buffer: one-shot hash, no Hash object (a native-backed object per file
    // kept V8's young generation busy enough to grow it by 16 MiB over 10 000 files).
    const first = readSync(fd, buf, 0, buf.length, null);
    if (first < buf.length) return hash('sha256', buf.subarray(0, first), 'hex');
    const h = createHash('sha256').update(buf);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(n === buf.length ? buf : buf.subarray(0, n));
      if (n < buf.length) break; // a regular file ends at a short read (saves a read per file)
    }
    return h.digest('hex');
  } finally {
    closeSync(fd);
  }
}

/** `sha256:<hex>` over the sources as `copySources` would write them. */
export async function checksumSources(sources: readonly CopySource[], opts: ChecksumOptions = {}): Promise<string> {
  const total = createHash('sha256');
  const record = (fields: unknown[]) => total.update(`${JSON.stringify(fields)}\n`);
  const owner = (st: Stats) => (opts.owner ? [opts.owner.uid, opts.owner.gid] : [st.uid, st.gid]);
  const mode = (st: Stats) => opts.mode ?? (st.mode & 0o7777);
  const links = new InodeMap<string>();
  // Other requests get a turn every ~20 ms of hashing (8 MiB between turns held the loop ~145 ms
  // on a loaded machine).
  let sliceStart = performance.now();
  const pace = async () => {
    if (performance.now() - sliceStart > 20) {
      await tick();
      sliceStart = performance.now();
    }
  };

  const entry = async (path: string, name: string, st: Stats): Promise<void> => {
    await pace();
    if (st.isDirectory()) {
      // The top directory's own metadata is not copied (its contents are), so it is not recorded.
      record(name === '' ? ['dir', ''] : ['dir', name, mode(st), ...owner(st)]);
      for (const child of readdirSync(path).sort()) {
        await entry(`${path}/${child}`, name === '' ? child : `${name}/${child}`, lstatSync(`${path}/${child}`));
      }
    } else if (st.isSymbolicLink()) {
      record(['symlink', name, readlinkSync(path), ...owner(st)]);
    } else if (st.isFile()) {
      const key = st.nlink > 1;
      const first = key ? links.get(st) : undefined;
      if (first !== undefined) {
        record(['link', name, first]);
        return;
      }
      if (key) links.set(st, name);
      record(['file', name, mode(st), ...owner(st), st.size, fileDigest(path, st.size)]);
      await pace();
    } else {
      record(['other', name]); // not copied; recorded so that its appearance is noticed
    }
  };

  for (const src of sources) {
    // The source itself, followed if it is a link (as the copy follows it); its contents by name.
    record(['source', src.rel, src.isDir, !!src.fromUrl]);
    const st = statSync(src.path);
    await entry(src.path, st.isDirectory() ? '' : '.', st);
  }
  return `sha256:${total.digest('hex')}`;
}
