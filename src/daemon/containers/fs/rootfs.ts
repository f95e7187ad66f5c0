// Container filesystems in containerd's snapshotter: a shared "init" layer per image chain that
// holds the mount points the runtime needs (so they never leak into the container's own layer and
// a later diff/commit shows only what the process changed), then the container's writable layer.
// With --userns-remap, the init layer of a remapped container sits on a remapped copy of the chain
// (remap-copy.ts), built once per chain and root pair (`remap-<uid>.<gid>-<chain>`).
import { mkdir, writeFile, symlink, lstat, lchown } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotFound, EngineError } from '../../../errors.ts';
import type { SupervisorClient } from '../../../supervisor/client.ts';
import type { Mount } from '../../../supervisor/types.ts';
import { withMounted } from '../../../supervisor/mounts.ts';
import type { IdentityMap } from '../../../oci/userns.ts';
import { copyRemapped } from './remap-copy.ts';
import { NoSizeLimit, type LayerSizeLimit } from './layer-size.ts';

const GC_ROOT = 'containerd.io/gc.root';

/** Directories and files the runtime mounts over; created empty in the init layer. */
const INIT_DIRS = ['dev', 'dev/pts', 'dev/shm', 'dev/mqueue', 'proc', 'sys', 'etc', 'run'];
const INIT_FILES = ['etc/hosts', 'etc/hostname', 'etc/resolv.conf', '.dockerenv'];

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false; // any lstat failure: treated as absent, the mkdir/writeFile that follows reports real trouble
  }
}

export class RootfsManager {
  private readonly builds = new Map<string, Promise<string>>();
  /** Writable layers being made by `ensure`, by key. */
  private readonly preparing = new Map<string, Promise<Mount[] | undefined>>();
  /** The client with the storage driver's snapshotter as its default: every call below goes there. */
  private readonly client: SupervisorClient;

  /** `remap`: the daemon's --userns-remap identity map (containers that do not opt out use it). */
  constructor(
    client: SupervisorClient,
    readonly snapshotter: string,
    private readonly tmpDir: string,
    readonly remap?: IdentityMap,
    /** What the driver makes of a container's --storage-opt (none taken unless given). */
    private readonly sizeLimit: LayerSizeLimit = new NoSizeLimit(''),
  ) {
    this.client = client.withSnapshotter(snapshotter);
  }

  /** Whether --userns-remap is on (containers not opting out get remapped layers). */
  get remapping(): boolean {
    return this.remap !== undefined;
  }

  /** The committed init layer on top of an image chain (remapped: on its remapped copy), built once and shared. */
  initLayer(chainId: string, remapped = false): Promise<string> {
    const hex = chainId.replace(/^sha256:/, '');
    const map = remapped ? this.remap : undefined;
    if (remapped && !map) throw new Error('a remapped layer was asked for without --userns-remap');
    const name = map ? `init-${map.key}-${hex}` : `init-${hex}`;
    return this.once(name, async () => this.buildInit(name, map ? await this.remappedChain(chainId, map) : chainId, map));
  }

  private once(name: string, build: () => Promise<string>): Promise<string> {
    let p = this.builds.get(name);
    if (!p) {
      p = build().catch((err) => {
        this.builds.delete(name);
        throw err;
      });
      this.builds.set(name, p);
    }
    return p;
  }

  private async exists(name: string): Promise<boolean> {
    try {
      await this.client.snapshots.stat(name);
      return true;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return false;
    }
  }

  /** A parentless committed copy of the chain's tree with owners shifted into the remapped range. */
  private remappedChain(chainId: string, map: IdentityMap): Promise<string> {
    const name = `remap-${map.key}-${chainId.replace(/^sha256:/, '')}`;
    return this.once(name, async () => {
      if (await this.exists(name)) return name;
      const stamp = `${process.pid}-${Date.now()}`;
      const viewKey = `${name}-src-${stamp}`;
      const key = `${name}-build-${stamp}`;
      const source = await this.client.snapshots.view({ key: viewKey, parent: chainId });
      try {
        const target = await this.client.snapshots.prepare({ key, labels: { [GC_ROOT]: new Date().toISOString() } });
        try {
          await withMounted(source, this.tmpDir, (src) => withMounted(target, this.tmpDir, (dst) => copyRemapped(src, dst, map)));
          await this.client.snapshots.commit({ name, key, labels: { [GC_ROOT]: new Date().toISOString() } });
        } catch (err) {
          // The copy failed: its half snapshot goes if it can; a GC-rooted leftover is harmless and is
          // replaced by the next attempt (the key is per attempt).
          await this.client.snapshots.remove(key).catch(() => undefined); // the copy's error is the one reported
          if (err instanceof EngineError && err.code === 'CONFLICT') return name; // a concurrent build won
          throw err;
        }
      } finally {
        // The view only served the copy; a failure to drop it leaves an unlabelled snapshot that
        // containerd's garbage collector removes.
        await this.client.snapshots.remove(viewKey).catch(() => undefined); // NotFound (already gone) or containerd unavailable: containerd's GC removes the unlabelled view
      }
      return name;
    });
  }

  private async buildInit(name: string, parent: string, map?: IdentityMap): Promise<string> {
    if (await this.exists(name)) return name;
    const key = `${name}-build-${process.pid}-${Date.now()}`;
    const mounts = await this.client.snapshots.prepare({ key, parent, labels: { [GC_ROOT]: new Date().toISOString() } });
    try {
      await withMounted(mounts, this.tmpDir, async (root) => {
        // What is created here belongs to the container's root: the remapped one when remapping.
        const own = async (p: string) => {
          if (map) await lchown(p, map.rootUid, map.rootGid);
        };
        for (const d of INIT_DIRS) {
          if (await exists(join(root, d))) continue;
          await mkdir(join(root, d), { recursive: true, mode: 0o755 });
          await own(join(root, d));
        }
        for (const f of INIT_FILES) {
          if (await exists(join(root, f))) continue;
          await writeFile(join(root, f), '', { mode: 0o755 });
          await own(join(root, f));
        }
        if (!(await exists(join(root, 'etc/mtab')))) {
          await symlink('/proc/mounts', join(root, 'etc/mtab'));
          await own(join(root, 'etc/mtab'));
        }
      });
      await this.client.snapshots.commit({ name, key, labels: { [GC_ROOT]: new Date().toISOString() } });
    } catch (err) {
      // The build's error is the one reported; a half-built key that cannot be removed is a
      // leftover the next build's new key does not collide with.
      await this.client.snapshots.remove(key).catch(() => undefined); // the build's error is the one reported
      if (err instanceof EngineError && err.code === 'CONFLICT') return name; // a concurrent build won
      throw err;
    }
    return name;
  }

  /**
   * The container's writable layer over the init layer (`remapped`: over the remapped chain's).
   * Labelled as a GC root: no lease needed. `storageOpt` (HostConfig.StorageOpt) is checked before
   * anything is made and applied to the new layer (btrfs: its size limit); a failure to apply
   * leaves the layer to the caller's undo.
   */
  async prepare(key: string, chainId: string, remapped = false, storageOpt: Record<string, string> = {}): Promise<Mount[]> {
    const size = this.sizeLimit.check(storageOpt);
    const parent = await this.initLayer(chainId, remapped);
    const mounts = await this.client.snapshots.prepare({ key, parent, labels: { [GC_ROOT]: new Date().toISOString() } });
    if (size !== undefined) await this.sizeLimit.apply(mounts, size);
    return mounts;
  }

  /** Refuses a --storage-opt the driver does not take, with the error create answers (nothing is made). */
  checkStorageOpt(storageOpt: Record<string, string> = {}): void {
    this.sizeLimit.check(storageOpt);
  }

  /**
   * The writable layer `key`, made now if it is not there yet (`prepare`, once however many callers
   * ask at the same time), with its mounts. One that exists already counts as made (no mounts then):
   * an earlier call got that far before the daemon was killed.
   */
  ensure(key: string, chainId: string, remapped: boolean, storageOpt: Record<string, string> = {}): Promise<Mount[] | undefined> {
    let p = this.preparing.get(key);
    if (!p) {
      p = this.prepare(key, chainId, remapped, storageOpt)
        .catch(async (err) => {
          if (err instanceof EngineError && err.code === 'CONFLICT') return undefined;
          // A layer made whose size limit failed to apply goes: the next call makes it again.
          await this.remove(key).catch(() => undefined); // the prepare's error is the one reported
          throw err;
        })
        .finally(() => this.preparing.delete(key));
      this.preparing.set(key, p);
    }
    return p;
  }

  /**
   * Drops a chain's init layer (when no image uses the chain any more). containerd refuses while a
   * container's layer still sits on it: then it stays, and false is returned.
   */
  async removeInit(chainId: string): Promise<boolean> {
    const hex = chainId.replace(/^sha256:/, '');
    // The remapped init layer sits on the remapped copy: the layers go top down.
    const names = this.remap ? [`init-${hex}`, `init-${this.remap.key}-${hex}`, `remap-${this.remap.key}-${hex}`] : [`init-${hex}`];
    let all = true;
    for (const name of names) {
      this.builds.delete(name);
      try {
        await this.client.snapshots.remove(name);
      } catch (err) {
        if (isNotFound(err)) continue;
        if (err instanceof EngineError && err.code === 'CONFLICT') {
          all = false;
          if (name.startsWith(`init-${this.remap?.key}-`)) break; // its remapped copy is still under it
          continue;
        }
        throw err;
      }
    }
    return all;
  }

  mounts(key: string): Promise<Mount[]> {
    return this.client.snapshots.mounts(key);
  }

  async remove(key: string): Promise<void> {
    try {
      await this.client.snapshots.remove(key);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
