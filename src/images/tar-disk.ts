// Writing tar entries to disk, what every extractor shares (the build context's tar-extract.ts,
// ADD's untar-into.ts, `docker cp`'s daemon/archive/extract.ts, the pull's staged-unpack.ts): new
// files opened so that nothing is written through a link or over what is there (O_EXCL|O_NOFOLLOW,
// 0600 until their mode is set), an entry's owner, mode and time in the order that keeps set-id
// bits (chown, then chmod, then the time), directory times set last (creating their entries
// changed them), and file data written through one reused buffer.
//
// The buffer: incoming chunks are copied into it and dropped at once, and it is written when full
// (1 MiB) or at the entry's end. Before, the chunks themselves were kept until 1 MiB had arrived,
// i.e. across several socket reads: long enough for the young-generation collector to promote
// them, so that their off-heap memory waited for a full GC. Now memory per chunk is O(1) and
// nothing outlives its chunk; the copy costs a memcpy, far less than the write that follows.
//
// The calls are synchronous on purpose: each is a short metadata call or a write of ≤ 1 MiB, and a
// thread-pool hop per call made many-file extraction several times slower (measured).
import { chmodSync, constants, fchmodSync, fchownSync, futimesSync, lchownSync, lutimesSync, openSync, writeSync } from 'node:fs';
import type { TarEntryKind } from './tar-reader.ts';

const SIZE = 1 << 20;

/** A new regular file, never through a link nor over an existing path; its mode is set later. */
export function openNewFile(path: string): number {
  return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
}

/** What an entry's metadata is made of. */
export interface EntryMeta {
  kind: TarEntryKind;
  mode: number;
  mtime: number;
}

/** The owner to give an entry; null keeps the file's (the extracting process's ids). */
export type EntryOwner = { uid: number; gid: number } | null;

/** Directory times, set last and innermost first; a directory gone since (replaced) is skipped. */
export class DirTimes {
  private readonly list: Array<[string, number]> = [];

  defer(path: string, mtime: number): void {
    this.list.push([path, mtime]);
  }

  apply(): void {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const [p, t] = this.list[i]!;
      try {
        lutimesSync(p, t, t);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // replaced or removed by a later entry
      }
    }
    this.list.length = 0;
  }
}

/**
 * Owner, mode and time of an entry made at `path`: chown first (it clears set-id bits), the mode
 * (a symlink has none of its own), the time (a directory's deferred to `dirs`).
 */
export function applyEntryMeta(path: string, h: EntryMeta, owner: EntryOwner, dirs: DirTimes): void {
  if (owner) lchownSync(path, owner.uid, owner.gid);
  if (h.kind !== 'symlink') chmodSync(path, h.mode & 0o7777);
  if (h.kind === 'directory') dirs.defer(path, h.mtime);
  else lutimesSync(path, h.mtime, h.mtime);
}

/** The same for a regular file through its descriptor, after its data (whose writes set the mtime). */
export function applyFileMeta(fd: number, h: EntryMeta, owner: EntryOwner): void {
  if (owner) fchownSync(fd, owner.uid, owner.gid);
  fchmodSync(fd, h.mode & 0o7777);
  futimesSync(fd, h.mtime, h.mtime);
}

export class EntryFileWriter {
  private readonly buf = Buffer.allocUnsafeSlow(SIZE);
  private fill = 0;

  /** Writes `body` to `fd` (from its current offset); returns the bytes written. */
  async write(fd: number, body: AsyncIterable<Buffer>): Promise<number> {
    let total = 0;
    this.fill = 0;
    for await (const chunk of body) {
      let off = 0;
      while (off < chunk.length) {
        const n = chunk.copy(this.buf, this.fill, off);
        this.fill += n;
        off += n;
        if (this.fill === SIZE) total += this.flush(fd);
      }
    }
    return total + this.flush(fd);
  }

  private flush(fd: number): number {
    const size = this.fill;
    let written = 0;
    while (written < size) written += writeSync(fd, this.buf, written, size - written);
    this.fill = 0;
    return size;
  }
}

/** Writes all of `chunk` at the file's offset (a push parser's piece of an entry). */
export function writeChunkSync(fd: number, chunk: Buffer): void {
  for (let off = 0; off < chunk.length;) off += writeSync(fd, chunk, off, chunk.length - off);
}
