// The reading side of a LogFile: every file generation is a Segment that owns an open handle, and
// a follower holds a reference on its segment and on every newer one, so a rotated (or already
// deleted) file stays readable until the follower has drained it. A follower that falls absurdly
// far behind (maxLag generations) stops pinning new segments and may skip some. Snapshots (the
// rotated files opened plus the current generation pinned) are taken consistently with rotations:
// a rotation waits for snapshots in progress, and a snapshot waits for a rotation under way.

import { open, type FileHandle } from 'node:fs/promises';

/** One generation of the current file. */
export class Segment {
  refs = 0;
  /** No more bytes will be written (rotated or closed). */
  complete = false;
  next: Segment | null = null;
  constructor(
    readonly gen: number,
    public handle: FileHandle | null,
    /** Bytes written and readable. */
    public size: number,
  ) {}

  release(): void {
    if (--this.refs === 0 && this.handle) {
      const h = this.handle;
      this.handle = null;
      h.close().catch(() => {}); // The last reader let go of the handle: a failed close loses nothing (it was opened read-only).
    }
  }
}

/** A reader that keeps up with the writer. */
export interface Follower {
  seg: Segment;
  /** Newest generation this follower holds a reference on. */
  heldUntil: number;
}

/** A rotated file opened for a read. */
export interface HistoryFile {
  handle: FileHandle;
  gz: boolean;
  size: number;
}

export interface Snapshot {
  /** Rotated files, oldest first. */
  history: HistoryFile[];
  /** The current generation and how much of it existed at snapshot time. */
  current: Segment;
  limit: number;
  follower: Follower | null;
}

/** How many generations a follower may fall behind and still pin every new one. */
export function maxLagFor(maxSize: number): number {
  return maxSize === Infinity ? 1 : Math.min(1024, Math.max(8, Math.ceil((64 * 1024 * 1024) / maxSize)));
}

export class SegmentReaders {
  private followers = new Set<Follower>();
  private changed = deferred();
  /** Odd while a rotation renames files. */
  private epoch = 0;
  private rotationDone = deferred();
  /** Snapshots in progress; rotations wait for them. */
  private holds = 0;
  private holdsReleased = deferred();

  constructor(
    /** The current file's path (rotated files are `<path>.N[.gz]`). */
    private readonly path: string,
    private readonly maxFiles: number,
    private readonly maxLag: number,
  ) {}

  /** Wakes every reader waiting in changedOrAborted (a write, rotation or close happened). */
  notify(): void {
    const d = this.changed;
    this.changed = deferred();
    d.resolve();
  }

  /** Resolves on the next write, rotation or close (or when the signal aborts). */
  changedOrAborted(signal: AbortSignal | undefined): Promise<void> {
    const p = this.changed.promise;
    if (!signal) return p;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /**
   * Opens the rotated files (unless `history` is false) and pins the current generation (`live()`:
   * the writer's segment while the file is open, else null: then what is on disk is read). With
   * follow on a live file, also registers a follower.
   */
  async snapshot(live: () => Segment | null, follow: boolean, history: boolean): Promise<Snapshot> {
    this.holds++;
    try {
      while (this.epoch & 1) await this.rotationDone.promise;
      if (!live()) return await diskSnapshot(this.path, this.maxFiles, history);
      const files = history ? await openHistory(this.path, this.maxFiles) : [];
      const current = live();
      if (!current) {
        await closeAll(files);
        return await diskSnapshot(this.path, this.maxFiles, history);
      }
      current.refs++;
      let follower: Follower | null = null;
      if (follow) {
        follower = { seg: current, heldUntil: current.gen };
        this.followers.add(follower);
      }
      return { history: files, current, limit: current.size, follower };
    } finally {
      if (--this.holds === 0) {
        const released = this.holdsReleased;
        this.holdsReleased = deferred();
        released.resolve();
      }
    }
  }

  /** Runs a rotation's work once no snapshot is being taken; snapshots wait until it is done. */
  async rotating(work: () => Promise<void>): Promise<void> {
    while (this.holds > 0) await this.holdsReleased.promise; // a reader is taking a snapshot
    this.epoch++;
    try {
      await work();
    } finally {
      this.epoch++;
      const done = this.rotationDone;
      this.rotationDone = deferred();
      done.resolve();
      this.notify();
    }
  }

  /** A new generation: every follower not more than maxLag behind holds a reference on it. */
  pin(seg: Segment): void {
    for (const f of this.followers) {
      if (seg.gen - f.seg.gen <= this.maxLag) {
        seg.refs++;
        f.heldUntil = seg.gen;
      }
    }
  }

  /** Moves a follower from its finished segment to the next one; false when there is none. */
  advance(f: Follower): boolean {
    const next = f.seg.next;
    if (!next) return false;
    if (next.gen <= f.heldUntil) {
      f.seg.release();
      f.seg = next;
      return true;
    }
    // Fell more than maxLag behind: take whatever is still open from here on.
    let s: Segment | null = next;
    while (s && !s.handle) s = s.next;
    if (!s) return false;
    for (let x: Segment | null = s; x; x = x.next) {
      x.refs++;
      f.heldUntil = x.gen;
    }
    f.seg.release();
    f.seg = s;
    return true;
  }

  /** Drops a follower's references. */
  endFollow(f: Follower): void {
    if (!this.followers.delete(f)) return;
    let s: Segment | null = f.seg;
    while (s && s.gen <= f.heldUntil) {
      const next: Segment | null = s.next;
      s.release();
      s = next;
    }
  }
}

/** What is on disk, for a file that is not open for writing: a complete current generation. */
async function diskSnapshot(path: string, maxFiles: number, withHistory: boolean): Promise<Snapshot> {
  const history = withHistory ? await openHistory(path, maxFiles) : [];
  let handle: FileHandle | null = null;
  let size = 0;
  try {
    handle = await open(path, 'r');
    size = (await handle.stat()).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      await closeAll(history);
      throw err;
    }
  }
  const current = new Segment(0, handle, size);
  current.refs = 1;
  current.complete = true;
  return { history, current, limit: size, follower: null };
}

/** The rotated files that exist, oldest first, opened for reading. */
async function openHistory(path: string, maxFiles: number): Promise<HistoryFile[]> {
  const files: HistoryFile[] = [];
  try {
    for (let i = maxFiles - 1; i >= 1; i--) {
      const f = (await openIfExists(`${path}.${i}`, false)) ?? (await openIfExists(`${path}.${i}.gz`, true));
      if (f) files.push(f);
    }
  } catch (err) {
    await closeAll(files);
    throw err;
  }
  return files;
}

async function openIfExists(path: string, gz: boolean): Promise<HistoryFile | null> {
  try {
    const handle = await open(path, 'r');
    const { size } = await handle.stat();
    return { handle, gz, size };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export async function closeAll(files: HistoryFile[]): Promise<void> {
  await Promise.all(files.map((f) => f.handle.close().catch(() => {}))); // Read handles of a reader that is done: a failed close loses nothing.
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
