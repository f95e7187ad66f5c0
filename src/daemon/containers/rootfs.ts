// Container filesystems in containerd's snapshotter: a shared "init" layer per image chain that
// holds the mount points the runtime needs (so they never leak into the container's own layer and
// a later diff/commit shows only what the process changed), then the container's writable layer.
import { mkdir, writeFile, symlink, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotFound, EngineError } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Mount } from '../../supervisor/types.ts';
import { withMounted } from '../../supervisor/mounts.ts';

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
  private readonly initBuilds = new Map<string, Promise<string>>();

  constructor(private readonly client: SupervisorClient, readonly snapshotter: string, private readonly tmpDir: string) {}

  /** The committed init layer on top of an image chain, built once and shared. */
  initLayer(chainId: string): Promise<string> {
    const name = `init-${chainId.replace(/^sha256:/, '')}`;
    let p = this.initBuilds.get(name);
    if (!p) {
      p = this.buildInit(name, chainId).catch((err) => {
        this.initBuilds.delete(name);
        throw err;
      });
      this.initBuilds.set(name, p);
    }
    return p;
  }

  private async buildInit(name: string, chainId: string): Promise<string> {
    try {
      await this.client.snapshots.stat(name);
      return name;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const key = `${name}-build-${process.pid}-${Date.now()}`;
    const mounts = await this.client.snapshots.prepare({ key, parent: chainId, labels: { [GC_ROOT]: new Date().toISOString() } });
    try {
      await withMounted(mounts, this.tmpDir, async (root) => {
        for (const d of INIT_DIRS) if (!(await exists(join(root, d)))) await mkdir(join(root, d), { recursive: true, mode: 0o755 });
        for (const f of INIT_FILES) if (!(await exists(join(root, f)))) await writeFile(join(root, f), '', { mode: 0o755 });
        if (!(await exists(join(root, 'etc/mtab')))) await symlink('/proc/mounts', join(root, 'etc/mtab'));
      });
      await this.client.snapshots.commit({ name, key, labels: { [GC_ROOT]: new Date().toISOString() } });
    } catch (err) {
      // The build's error is the one reported; a half-built key that cannot be removed is a
      // leftover the next build's new key does not collide with.
      await this.client.snapshots.remove(key).catch(() => undefined);
      if (err instanceof EngineError && err.code === 'CONFLICT') return name; // a concurrent build won
      throw err;
    }
    return name;
  }

  /** The container's writable layer over the init layer. Labelled as a GC root: no lease needed. */
  async prepare(key: string, chainId: string): Promise<void> {
    const parent = await this.initLayer(chainId);
    await this.client.snapshots.prepare({ key, parent, labels: { [GC_ROOT]: new Date().toISOString() } });
  }

  /**
   * Drops a chain's init layer (when no image uses the chain any more). containerd refuses while a
   * container's layer still sits on it: then it stays, and false is returned.
   */
  async removeInit(chainId: string): Promise<boolean> {
    const name = `init-${chainId.replace(/^sha256:/, '')}`;
    this.initBuilds.delete(name);
    try {
      await this.client.snapshots.remove(name);
      return true;
    } catch (err) {
      if (isNotFound(err)) return true;
      if (err instanceof EngineError && err.code === 'CONFLICT') return false;
      throw err;
    }
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
