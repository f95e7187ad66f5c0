// The fuse-overlayfs snapshotter (the `fuse-overlayfs` storage driver): containerd 1.6 has none
// built in, so the daemon serves one over containerd's proxy-plugin API (server.ts). Layout under
// its root (<data-root>/fuse-overlayfs): metadata.db (meta-store.ts) and snapshots/<id>/{fs,work},
// as containerd's fuse-overlayfs snapshotter lays them out. A snapshot with parents is mounted as
// `fuse3.fuse-overlayfs` (lowerdir = the parents' fs directories, nearest first; upperdir and workdir
// for an active one); one without parents, or a view of a single layer, is a bind mount.
//
// A new snapshot's directory is made under a temporary name and renamed to its id inside the
// transaction that records it: after a kill -9 there is either a row with its directory, or a
// directory without a row, which the cleanup at open (and containerd's Cleanup calls) removes.
import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import { lchown, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { diskUsage } from './disk-usage.ts';
import { notFound } from './errors.ts';
import { parseFilters } from './filters.ts';
import { MetaStore, type Kind, type SnapshotInfo, type SnapshotRef, type Usage } from './meta-store.ts';

export type { Kind, SnapshotInfo, Usage } from './meta-store.ts';

export interface SnapshotMount {
  type: string;
  source: string;
  options: string[];
}

export const FUSE_MOUNT_TYPE = 'fuse3.fuse-overlayfs';

/**
 * Points where a test kills the process (kill -9 atomicity): after a snapshot's directory is
 * prepared, after it was renamed to its id inside the open transaction, after a removal's row is
 * gone but before its directory is.
 */
export interface CrashPoints {
  prepared?: () => void;
  placed?: () => void;
  forgotten?: () => void;
}

export interface SnapshotterOptions {
  crashPoints?: CrashPoints;
  /** Told about a directory left by an earlier run and removed at open, or one removal could not finish. */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

const ID_MAPPING_LABELS = [
  ['containerd.io/snapshot/uidmapping', 'uidmapping'],
  ['containerd.io/snapshot/gidmapping', 'gidmapping'],
] as const;

export class FuseOverlaySnapshotter {
  private readonly snapshotsDir: string;
  /** Directory names being made or removed right now: never leftovers, whatever a concurrent cleanup sees. */
  private readonly pending = new Set<string>();

  private constructor(
    readonly root: string,
    private readonly meta: MetaStore,
    private readonly opts: SnapshotterOptions,
  ) {
    this.snapshotsDir = join(root, 'snapshots');
  }

  /** Opens (creating) the store under `root` and removes what a killed run left half-made. */
  static async open(root: string, opts: SnapshotterOptions = {}): Promise<FuseOverlaySnapshotter> {
    await mkdir(join(root, 'snapshots'), { recursive: true, mode: 0o700 });
    const s = new FuseOverlaySnapshotter(root, new MetaStore(join(root, 'metadata.db')), opts);
    await s.cleanup();
    return s;
  }

  close(): void {
    this.meta.close();
  }

  upperPath(id: string): string {
    return join(this.snapshotsDir, id, 'fs');
  }

  private workPath(id: string): string {
    return join(this.snapshotsDir, id, 'work');
  }

  prepare(key: string, parent: string, labels: Record<string, string> = {}): Promise<SnapshotMount[]> {
    return this.create('active', key, parent, labels);
  }

  view(key: string, parent: string, labels: Record<string, string> = {}): Promise<SnapshotMount[]> {
    return this.create('view', key, parent, labels);
  }

  private async create(kind: Kind, key: string, parent: string, labels: Record<string, string>): Promise<SnapshotMount[]> {
    const temp = `new-${randomBytes(8).toString('hex')}`;
    const dir = join(this.snapshotsDir, temp);
    this.pending.add(temp); // before the directory exists: a cleanup running meanwhile leaves it
    let id: string | undefined;
    try {
      await mkdir(dir, { mode: 0o700 });
      await mkdir(join(dir, 'fs'), { mode: 0o755 });
      if (kind === 'active') await mkdir(join(dir, 'work'), { mode: 0o711 });
      // The new layer's root belongs to whoever owns the parent's (a user namespace's root, say).
      const parentId = parent ? this.idOf(parent) : undefined;
      if (parentId) {
        const st = await stat(this.upperPath(parentId));
        await lchown(join(dir, 'fs'), st.uid, st.gid);
      }
      this.opts.crashPoints?.prepared?.();
      id = this.meta.reserveId();
      const target = join(this.snapshotsDir, id);
      const ref = this.meta.create(kind, key, parent, labels, id, () => {
        renameSync(dir, target);
        this.opts.crashPoints?.placed?.();
      });
      id = undefined; // recorded: it stays
      return this.mountsOf(ref, labels);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      if (id) await rm(join(this.snapshotsDir, id), { recursive: true, force: true }); // renamed, but the transaction did not commit
      throw err;
    } finally {
      this.pending.delete(temp);
    }
  }

  /** The id of `key`, or undefined when there is none (the create then reports the missing parent). */
  private idOf(key: string): string | undefined {
    try {
      return this.meta.get(key).id;
    } catch {
      return undefined; // not found: meta.create answers with containerd's message
    }
  }

  private mountsOf(s: SnapshotRef, labels: Record<string, string>): SnapshotMount[] {
    if (!s.parentIds.length)
      // No parent: overlay needs at least one lower directory, so the layer itself is bound.
      return [{ type: 'bind', source: this.upperPath(s.id), options: [s.kind === 'view' ? 'ro' : 'rw', 'rbind'] }];
    if (s.kind === 'view' && s.parentIds.length === 1)
      return [{ type: 'bind', source: this.upperPath(s.parentIds[0]!), options: ['ro', 'rbind'] }];
    const options: string[] = [];
    if (s.kind === 'active') options.push(`workdir=${this.workPath(s.id)}`, `upperdir=${this.upperPath(s.id)}`);
    options.push(`lowerdir=${s.parentIds.map((p) => this.upperPath(p)).join(':')}`);
    for (const [label, option] of ID_MAPPING_LABELS) {
      const mapping = labels[label];
      if (mapping) options.push(`${option}=${mapping.replaceAll(',', ':')}`);
    }
    return [{ type: FUSE_MOUNT_TYPE, source: 'overlay', options }];
  }

  async mounts(key: string): Promise<SnapshotMount[]> {
    const ref = this.meta.ref(key);
    return this.mountsOf(ref, this.meta.get(key).info.labels);
  }

  async commit(name: string, key: string, labels: Record<string, string> = {}): Promise<void> {
    const { id } = this.meta.get(key);
    const usage = await diskUsage(this.upperPath(id));
    this.meta.commit(key, name, usage, labels);
  }

  /** Forgets the snapshot, then removes its directory (a failure there is left to cleanup). */
  async remove(key: string): Promise<void> {
    const { id } = this.meta.remove(key);
    this.opts.crashPoints?.forgotten?.();
    this.pending.add(id); // being removed: not a leftover for a cleanup running meanwhile
    try {
      await rm(join(this.snapshotsDir, id), { recursive: true, force: true });
    } catch (err) {
      this.opts.warn?.('failed to remove snapshot directory; the next cleanup retries', { id, error: (err as Error).message });
    } finally {
      this.pending.delete(id);
    }
  }

  async stat(key: string): Promise<SnapshotInfo> {
    return this.meta.get(key).info;
  }

  async update(info: { name: string; labels: Record<string, string> }, paths: readonly string[]): Promise<SnapshotInfo> {
    return this.meta.update(info.name, info.labels, paths);
  }

  async list(filters: readonly string[] = []): Promise<SnapshotInfo[]> {
    return this.meta.list(parseFilters(filters));
  }

  /** An active snapshot's usage is measured now; a committed one's was recorded at commit. */
  async usage(key: string): Promise<Usage> {
    const { id, info, usage } = this.meta.get(key);
    if (info.kind !== 'active') return usage;
    try {
      return await diskUsage(this.upperPath(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`snapshot ${key} has no directory`);
      throw err;
    }
  }

  /** Removes directories no snapshot owns (left by a kill -9 or a removal that failed). */
  async cleanup(): Promise<string[]> {
    const names = await readdir(this.snapshotsDir);
    const ids = this.meta.ids(); // read after the listing: a snapshot recorded meanwhile is in it
    const stale = names.filter((n) => !ids.has(n) && !this.pending.has(n));
    for (const n of stale) {
      this.opts.warn?.('removing a snapshot directory no snapshot owns', { dir: n });
      await rm(join(this.snapshotsDir, n), { recursive: true, force: true });
    }
    return stale;
  }
}
