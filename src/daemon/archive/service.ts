// The archive endpoints' backend: stat, tar out, tar in and the change list of a container's
// filesystem, on running and stopped containers alike. Each operation holds the container's lock
// (no start, stop or removal meanwhile). A running container is reached through /proc/<pid>/root,
// which shows its volumes, binds and tmpfs mounts as the process sees them, and its processes are
// frozen while an archive is read or written (as podman's cp does): paths are checked component by
// component, and a frozen container cannot swap a checked directory for a symlink to the host
// (CVE-2018-15664). A stat (HEAD) only reads metadata and is not frozen.
// A stopped container gets its snapshot mounted on a private directory, volumes and binds mapped in
// by path. Not covered: another running container racing on a volume shared with this one.
import type { IdentityMap } from '../../oci/userns.ts';
import { access, lstat } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { conflict, invalidParameter, notFound } from '../../errors.ts';
import { decompressed } from '../../images/decompress.ts';
import { readOnlyMounts, withMounted } from '../../supervisor/mounts.ts';
import { resolveUser } from '../../oci/user.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import { TarWriter } from '../../util/tar-writer.ts';
import type { ContainerRecord } from '../containers/record.ts';
import type { Change, ContainerPathStat } from '../../types/archive.ts';
import { opaqueDirs, overlayChanges, treeChanges } from './changes.ts';
import { extractArchive } from './extract.ts';
import { encodePathStat, pathStat } from './path-stat.ts';
import { archivePath, rootEntryName } from './tar-out.ts';
import {
  checkWritable,
  cleanContainerPath,
  hostPath,
  lstatIn,
  PathNotFound,
  resolvePath,
  type ContainerView,
  type ViewMount,
} from './view.ts';

/** What the archive backend needs from the containers service. */
export interface ArchiveContainers {
  find(ref: string): ContainerRecord;
  /** fn under the container's lock; with freeze, its processes are frozen while it runs (if running). */
  exclusive<T>(ref: string, freeze: boolean, fn: (rec: ContainerRecord) => Promise<T>): Promise<T>;
  publishEvent?(ref: string, action: string, extra?: Record<string, string>): void;
  /** Makes the container's writable layer if create left it for later. */
  writableLayer(rec: ContainerRecord): Promise<void>;
}

export interface ArchiveServiceDeps {
  containers: ArchiveContainers;
  client: SupervisorClient;
  tmpDir: string;
  log: Logger;
  /** --userns-remap: the identity map of a container in the remapped namespace (undefined otherwise). */
  remapOf?: (rec: ContainerRecord) => IdentityMap | undefined;
}

/** The path as the client meant it: absolute, cleaned, keeping a trailing "/" or "/." (they mean "the directory"). */
function absolutePath(path: string): { abs: string; followFinal: boolean } {
  const clean = cleanContainerPath(path);
  if (path.endsWith('/.') || path === '.') return { abs: clean === '/' ? '/.' : `${clean}/.`, followFinal: true };
  if (path.endsWith('/') && clean !== '/') return { abs: `${clean}/`, followFinal: true };
  return { abs: clean, followFinal: false };
}

function baseName(abs: string): string {
  if (abs === '/' || abs === '/.') return abs === '/' ? '/' : '.';
  if (abs.endsWith('/.')) return '.';
  const trimmed = abs.endsWith('/') ? abs.slice(0, -1) : abs;
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

function viewMounts(rec: ContainerRecord): ViewMount[] {
  const out: ViewMount[] = rec.Mounts.map((m) => ({
    destination: cleanContainerPath(m.Destination),
    source: m.Source,
    readOnly: !m.RW,
    volume: true,
  }));
  for (const [dst, opts] of Object.entries(rec.HostConfig.Tmpfs ?? {}))
    out.push({ destination: cleanContainerPath(dst), source: '', readOnly: opts.split(',').includes('ro'), volume: true });
  for (const [dst, file] of [
    ['/etc/hosts', rec.HostsPath],
    ['/etc/resolv.conf', rec.ResolvConfPath],
    ['/etc/hostname', rec.HostnamePath],
  ] as const) {
    if (file && !out.some((m) => m.destination === dst)) out.push({ destination: dst, source: file, readOnly: false, volume: false });
  }
  return out;
}

/** Writes with backpressure; fails (instead of waiting forever) once the client went away. */
function sinkOf(out: Writable): (chunk: Buffer) => Promise<void> {
  return async (chunk) => {
    if (out.destroyed || out.writableEnded) throw new Error('the client closed the connection');
    if (out.write(chunk)) return;
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        out.off('drain', onDrain);
        out.off('close', onClose);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => done();
      const onClose = () => done(new Error('the client closed the connection'));
      out.on('drain', onDrain);
      out.on('close', onClose);
    });
  };
}

export class ArchiveService {
  constructor(private readonly d: ArchiveServiceDeps) {}

  /** Runs fn on the container's filesystem view (see the file comment). */
  private async withView<T>(rec: ContainerRecord, write: boolean, fn: (view: ContainerView) => Promise<T>): Promise<T> {
    const mounts = viewMounts(rec);
    const readonlyRootfs = rec.HostConfig.ReadonlyRootfs === true;
    if (rec.State.Running && rec.State.Pid > 0) {
      const root = `/proc/${rec.State.Pid}/root`;
      if (
        await access(root).then(
          () => true,
          () => false,
        )
      )
        return fn({ root, overlays: [], mounts, readonlyRootfs });
    }
    if (rec.State.Running) throw conflict(`container ${rec.Id} is not running any more`);
    await this.d.containers.writableLayer(rec);
    let snap = await this.d.client.snapshots.mounts(rec.Internal.snapshotKey, { snapshotter: rec.Internal.snapshotter }).catch(() => {
      throw notFound(`the filesystem of container ${rec.Id} is missing`);
    });
    if (!write) snap = readOnlyMounts(snap);
    const overlays: ViewMount[] = [];
    for (const m of mounts) if (m.source && (await lstat(m.source).catch(() => null))) overlays.push(m); // Only lower layers that still exist on disk are mounted; a missing one is skipped.
    return withMounted(snap, this.d.tmpDir, (root) => fn({ root, overlays, mounts, readonlyRootfs }));
  }

  private async statIn(
    view: ContainerView,
    ref: string,
    path: string,
  ): Promise<{ resolved: string; abs: string; stat: ContainerPathStat; isDir: boolean }> {
    const { abs, followFinal } = absolutePath(path);
    const missing = () => notFound(`Could not find the file ${path} in container ${ref}`);
    let resolved: string;
    try {
      resolved = await resolvePath(view, abs, followFinal);
    } catch (err) {
      if (err instanceof PathNotFound) throw missing();
      throw err;
    }
    const st = await lstatIn(view, resolved);
    if (!st) throw missing();
    if (followFinal && !st.isDirectory()) throw invalidParameter(`${path}: not a directory`);
    let linkTarget = '';
    if (st.isSymbolicLink()) linkTarget = await resolvePath(view, resolved, true).catch(() => resolved); // a dangling or looping link: its own path stands
    const big = await lstat(hostPath(view, resolved), { bigint: true });
    return { resolved, abs, stat: pathStat(baseName(abs), big, linkTarget), isDir: st.isDirectory() };
  }

  async stat(ref: string, path: string): Promise<ContainerPathStat> {
    if (!path) throw invalidParameter('path is required');
    // Not frozen: a stat reads metadata only, and docker cp asks for one before every copy.
    return this.d.containers.exclusive(ref, false, (rec) =>
      this.withView(rec, false, async (view) => (await this.statIn(view, ref, path)).stat),
    );
  }

  async archive(ref: string, path: string, begin: (statHeader: string) => Writable): Promise<void> {
    if (!path) throw invalidParameter('path is required');
    await this.d.containers.exclusive(ref, true, (rec) =>
      this.withView(rec, false, async (view) => {
        const s = await this.statIn(view, ref, path);
        const out = begin(encodePathStat(s.stat));
        const tw = new TarWriter(sinkOf(out));
        const map = this.d.remapOf?.(rec);
        await archivePath(
          view,
          s.resolved,
          rootEntryName(s.abs),
          tw,
          map ? { uid: (id) => map.toContainerUid(id), gid: (id) => map.toContainerGid(id) } : undefined,
        );
        await tw.finish();
        this.d.containers.publishEvent?.(rec.Id, 'archive-path');
      }),
    );
  }

  async extract(
    ref: string,
    path: string,
    body: AsyncIterable<Buffer>,
    opts: { noOverwriteDirNonDir: boolean; copyUIDGID: boolean },
  ): Promise<void> {
    if (!path) throw invalidParameter('path is required');
    await this.d.containers.exclusive(ref, true, (rec) =>
      this.withView(rec, true, async (view) => {
        const { abs } = absolutePath(path);
        let dest: string;
        try {
          dest = await resolvePath(view, abs, true);
        } catch (err) {
          if (err instanceof PathNotFound) throw notFound(`Could not find the file ${path} in container ${ref}`);
          throw err;
        }
        const st = await lstatIn(view, dest);
        if (!st) throw notFound(`Could not find the file ${path} in container ${ref}`);
        if (!st.isDirectory()) throw invalidParameter('extraction point is not a directory');
        checkWritable(view, dest);
        let chown: { uid: number; gid: number } | undefined;
        if (opts.copyUIDGID && rec.Config.User) {
          const u = resolveUser(view.root, rec.Config.User, []);
          chown = { uid: u.uid, gid: u.gid };
        }
        const map = this.d.remapOf?.(rec);
        const toHost = map ? { uid: (id: number) => map.toHostUid(id), gid: (id: number) => map.toHostGid(id) } : undefined;
        await extractArchive(view, dest, decompressed(body), {
          noOverwriteDirNonDir: opts.noOverwriteDirNonDir,
          ...(chown ? { chown } : {}),
          ...(toHost ? { toHost } : {}),
        });
        this.d.containers.publishEvent?.(rec.Id, 'extract-to-dir');
      }),
    );
  }

  async changes(ref: string): Promise<Change[] | null> {
    const rec = this.d.containers.find(ref);
    const { client } = this.d;
    const opts = { snapshotter: rec.Internal.snapshotter };
    await this.d.containers.writableLayer(rec);
    const mounts = await client.snapshots.mounts(rec.Internal.snapshotKey, opts).catch(() => {
      throw notFound(`the filesystem of container ${rec.Id} is missing`);
    });
    const option = (k: string) => mounts[0]?.options.find((o) => o.startsWith(`${k}=`))?.slice(k.length + 1);
    const upper = option('upperdir');
    let changes: Change[];
    // Kernel overlay only: fuse-overlayfs keeps markers of its own in the upper directory
    // (.wh..wh..opq files, .wh..opq devices, .wh.<name> files where it cannot make a device).
    const opaque = mounts.length === 1 && mounts[0]!.type === 'overlay' && upper ? await opaqueDirs(upper) : null;
    if (upper && opaque) {
      changes = await overlayChanges(upper, (option('lowerdir') ?? '').split(':').filter(Boolean), opaque);
    } else {
      // No upper directory to read: compare a view of the parent with a read-only mount of the container's layer.
      const info = await client.snapshots.stat(rec.Internal.snapshotKey, opts);
      const viewKey = `changes-${rec.Id.slice(0, 12)}-${Date.now()}`;
      // The view is held by a lease while it is walked: a collection started by any removal meanwhile
      // would take an unreferenced view from under the mount (on btrfs its files vanish mid-walk).
      changes = await client.withLease(async (lease) => {
        const lower = await client.snapshots.view({ key: viewKey, parent: info.parent, ...opts }, { lease });
        try {
          return await withMounted(lower, this.d.tmpDir, (oldRoot) =>
            withMounted(readOnlyMounts(mounts), this.d.tmpDir, (newRoot) => treeChanges(oldRoot, newRoot)),
          );
        } finally {
          // The view holds no data of its own; the lease's end lets containerd's GC collect it if this removal fails.
          await client.snapshots
            .remove(viewKey, opts)
            .catch((err: Error) => this.d.log.debug(`changes view ${viewKey} not removed: ${err.message}`));
        }
      });
    }
    return changes.length ? changes : null; // dockerd answers null for no changes
  }
}
