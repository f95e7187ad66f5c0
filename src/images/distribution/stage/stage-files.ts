// The regular files of a staged layer (staged-unpack.ts): opened as their tar entries come, their
// bytes written synchronously, or with pooled writes (pooled-writes.ts) on libuv's pool out of
// reused buffers, each file's metadata applied and the file closed after its last write.
import { closeSync, writeSync } from 'node:fs';
import type { TarHeader } from '../../tar-reader.ts';
import { applyFileMeta, openNewFile, writeChunkSync } from '../../tar-disk.ts';
import { writeAt, type WriteBuffers } from './pooled-writes.ts';

/**
 * A regular file being written. With pooled writes its bytes go out on the pool from `cur` once it
 * is full (or at the entry's end); its owner, mode and times (and those of hard links to it, the
 * same inode) are applied, and it is closed, once its last write is done.
 */
interface OpenFile {
  fd: number;
  h: TarHeader;
  /** The file offset of the next byte. */
  pos: number;
  cur: { buf: Buffer; start: number; fill: number } | null;
  pending: number;
  /** Its entry ended: close when `pending` drops to 0. */
  closing: boolean;
  links: TarHeader[];
  names: string[];
}

export class StagedFiles {
  /** The file whose content is being written. */
  private file: OpenFile | null = null;
  /** Files (by each of their names) with writes still in flight. */
  private readonly open = new Map<string, OpenFile>();
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];

  /** `fail`: a write or a file's metadata failed; `failed`: the stage has failed (metadata no longer applied). */
  constructor(
    private readonly writes: WriteBuffers | null,
    private readonly fail: (err: Error) => void,
    private readonly failed: () => boolean,
  ) {}

  /** A regular file's entry: the file made at `abs`, its content to follow. */
  begin(abs: string, rel: string, h: TarHeader): void {
    this.file = { fd: openNewFile(abs), h, pos: 0, cur: null, pending: 0, closing: false, links: [], names: [rel] };
  }

  /** The name replaced by a later entry: a link to it now means the new one. */
  forget(rel: string): void {
    this.open.delete(rel);
  }

  /** A hard link `rel` to `target` just made: true when its metadata waits for the target's writes in flight. */
  linkDeferred(target: string, rel: string, h: TarHeader): boolean {
    const f = this.open.get(target);
    if (!f) return false;
    f.links.push({ ...h, kind: 'file' });
    f.names.push(rel);
    this.open.set(rel, f);
    return true;
  }

  data(c: Buffer): void {
    const f = this.file;
    if (!f) return;
    if (!this.writes) return writeChunkSync(f.fd, c);
    for (let off = 0; off < c.length;) {
      if (!f.cur) {
        const buf = this.writes.take();
        if (!buf) {
          // Every buffer in flight: this piece written here, at its place in the file.
          for (; off < c.length;) {
            const n = writeSync(f.fd, c, off, c.length - off, f.pos);
            off += n;
            f.pos += n;
          }
          return;
        }
        f.cur = { buf, start: f.pos, fill: 0 };
      }
      const n = c.copy(f.cur.buf, f.cur.fill, off);
      f.cur.fill += n;
      f.pos += n;
      off += n;
      if (f.cur.fill === f.cur.buf.length) this.submit(f);
    }
  }

  /** The entry's end: the file's metadata and close, now or after its last write. */
  end(): void {
    const f = this.file;
    if (!f) return;
    this.file = null;
    if (f.cur) this.submit(f);
    if (!f.pending) {
      try {
        applyFileMeta(f.fd, f.h, f.h);
      } finally {
        closeSync(f.fd);
      }
      return;
    }
    f.closing = true;
    for (const n of f.names) this.open.set(n, f);
  }

  /** The stage failed: the current file closed (once its writes are done: its descriptor could be reused meanwhile). */
  abort(): void {
    const f = this.file;
    if (!f) return;
    this.file = null;
    if (f.cur) this.writes!.give(f.cur.buf);
    f.cur = null;
    if (f.pending) f.closing = true;
    else closeQuietly(f.fd);
  }

  /** Once no write is in flight. */
  drained(): Promise<void> {
    if (!this.inFlight) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  /** The file's filled buffer written on the pool. */
  private submit(f: OpenFile): void {
    const cur = f.cur!;
    f.cur = null;
    f.pending++;
    this.inFlight++;
    writeAt(f.fd, cur.buf, cur.fill, cur.start, (err) => {
      this.writes!.give(cur.buf);
      f.pending--;
      this.inFlight--;
      if (err) this.fail(err);
      if (!f.pending && f.closing) this.finalize(f);
      if (!this.inFlight) for (const w of this.waiters.splice(0)) w();
    });
  }

  /** After the file's last write: its metadata and its hard links', then closed; a failure fails the stage. */
  private finalize(f: OpenFile): void {
    for (const n of f.names) if (this.open.get(n) === f) this.open.delete(n);
    if (this.failed()) return closeQuietly(f.fd);
    try {
      applyFileMeta(f.fd, f.h, f.h);
      // As containerd's applier: each link entry's owner, mode and time go to the shared inode, in order.
      for (const l of f.links) applyFileMeta(f.fd, l, l);
    } catch (err) {
      this.fail(err as Error);
    } finally {
      closeQuietly(f.fd);
    }
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already failing: the staged tree is removed anyway.
  }
}
