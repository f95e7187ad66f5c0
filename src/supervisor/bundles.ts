// Stale task bundles: <containerd state>/io.containerd.runtime.v2.task/<namespace>/<id> directories
// of tasks containerd no longer has. containerd removes a dead task's bundle itself, but not when
// the rootfs in it is still mounted and busy (a process of the host holds it): the directory
// stays, and every later start of that container fails with "mkdir …: file exists". Such a
// bundle's mounts are detached lazily (deepest first), then the directory goes.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../util/log.ts';
import { mountsUnder, unmount } from './mounts.ts';

export const TASK_BUNDLES_DIR = 'io.containerd.runtime.v2.task';

export interface StaleBundleOptions {
  /** containerd's state directory (its `state` setting). */
  stateDir: string;
  /** Task IDs containerd knows, per namespace; other namespaces are left alone. */
  tasks: Map<string, Set<string>>;
  log: Pick<Logger, 'warn' | 'info'>;
}

/** Removes the bundles of tasks containerd does not know in our namespaces; returns their IDs. */
export async function removeStaleBundles(o: StaleBundleOptions): Promise<string[]> {
  const removed: string[] = [];
  for (const [ns, known] of o.tasks) {
    const dir = path.join(o.stateDir, TASK_BUNDLES_DIR, ns);
    let ids: string[];
    try {
      ids = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // no task ever ran in it
      throw err;
    }
    for (const id of ids) {
      if (known.has(id)) continue;
      const bundle = path.join(dir, id);
      const mounts = mountsUnder(bundle);
      o.log.info('removing the bundle of a task containerd does not know', { namespace: ns, id, mounts: mounts.length });
      for (const m of mounts) await unmount(m);
      const still = mountsUnder(bundle);
      if (still.length) {
        // Never delete through a mount: that would remove the container's files.
        o.log.warn(`left the stale bundle ${bundle}: ${still.join(', ')} could not be unmounted`);
        continue;
      }
      try {
        await rm(bundle, { recursive: true, force: true });
        removed.push(id);
      } catch (err) {
        o.log.warn(`could not remove the stale bundle ${bundle}: ${(err as Error).message}`);
      }
    }
  }
  return removed;
}
