// Reclaiming the space of deleted images: their records go, containerd's GC takes what nothing
// references any more (blobs, layer snapshots) synchronously so the space is free when the call
// returns, and the init layers (rootfs.ts) of chains no image keeps go with them. Also the
// watcher that sweeps init layers left behind when containers are removed.
import { isNotFound } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { EventSubscription } from '../supervisor/events.ts';
import type { Logger } from '../util/log.ts';
import type { KeyedMutex } from '../util/mutex.ts';
import type { InitLayers } from './container-facts.ts';
import { chainIds, type ImageStore, type LocalImage } from './image-store.ts';
import type { LayerSizes } from './layer-sizes.ts';

// init layers and, with --userns-remap, the remapped copies of chains and their init layers.
const INIT_NAME = /^(?:init|remap)-(?:\d+\.\d+-)?([a-f0-9]{64})$/;

export interface ImagePurgeDeps {
  client: SupervisorClient;
  snapshotter: string;
  images: ImageStore;
  rootfs: InitLayers;
  sizes: LayerSizes;
  /** The image service's lock ('images'): a sweep runs between removals, never during one. */
  lock: KeyedMutex;
  log: Logger;
}

export class ImagePurge {
  private sweeper: EventSubscription | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly d: ImagePurgeDeps) {}

  /**
   * Watches snapshot removals (container rm) to drop init layers no image needs any more, and image
   * record changes made outside the image service (pulls, other clients) to keep the /info count fresh.
   */
  start(): void {
    const ns = this.d.client.namespace;
    this.sweeper = this.d.client.subscribe(
      [`namespace==${ns},topic=="/snapshot/remove"`, `namespace==${ns},topic~="^/images/"`],
      (e) => {
        if (e.topic.startsWith('/images/')) {
          // Only refreshes the image cache: the next list() reloads and reports a failure to its caller.
          void this.d.images.list().catch((err: Error) => this.d.log.debug(`image cache refresh: ${err.message}`));
          return;
        }
        const key = String(e.event?.key ?? '');
        if (INIT_NAME.test(key) || key.startsWith('extract-') || key.startsWith('commit-view-')) return;
        this.scheduleSweep(300);
      },
      { onError: (err) => this.d.log.debug(`snapshot events: ${(err as Error).message}`) },
    );
    // Init layers left by containers removed while the daemon was down.
    this.scheduleSweep(2000);
  }

  stop(): void {
    clearTimeout(this.sweepTimer);
    this.sweeper?.close();
  }

  /** One sweep of unused init layers after `ms` (a sweep already scheduled is replaced). */
  private scheduleSweep(ms: number): void {
    clearTimeout(this.sweepTimer);
    this.sweepTimer = setTimeout(
      () => void this.sweepInitLayers().catch((err) => this.d.log.warn(`init layer sweep: ${(err as Error).message}`)),
      ms,
    );
  }

  /**
   * Deletes the images' records and lets containerd's GC take what nothing references any more
   * (blobs, layer snapshots, and the init layers of chains no image keeps). Returns the layer
   * chains that went, and how many content bytes were freed.
   */
  async purge(victims: LocalImage[]): Promise<{ deletedChains: string[]; reclaimed: number }> {
    const { client, snapshotter } = this.d;
    const ids = new Set(victims.map((v) => v.id));
    const remaining = (await this.d.images.list()).filter((i) => !ids.has(i.id));
    const keptChains = new Set(remaining.flatMap((i) => chainIds(i.config.rootfs?.diff_ids ?? [])));
    const blobs = new Map<string, number>();
    const chains: string[] = [];
    for (const v of victims) {
      for (const l of v.manifest.layers) blobs.set(l.digest, Number(l.size));
      blobs.set(v.manifest.config.digest, Number(v.manifest.config.size));
      blobs.set(v.manifestDigest, 0);
      for (const c of chainIds(v.config.rootfs?.diff_ids ?? []).reverse()) if (!chains.includes(c) && !keptChains.has(c)) chains.push(c);
    }
    for (const b of remaining.flatMap((i) => [...i.manifest.layers.map((l) => l.digest), i.manifest.config.digest, i.manifestDigest]))
      blobs.delete(b);
    for (const v of victims) {
      // The init layer is a cache of the image's. One still holding a child (a snapshot that is going
      // away: its removal raced this one) is swept again shortly: no later event may come to sweep it.
      if (!v.chainId || remaining.some((i) => i.chainId === v.chainId)) continue;
      const removed = await this.d.rootfs.removeInit(v.chainId).catch((err: Error) => {
        this.d.log.debug(`init layer of ${v.chainId}: ${err.message}`);
        return false;
      });
      if (!removed) this.scheduleSweep(1000);
    }
    for (const v of victims) {
      for (const r of v.records) {
        await client.images.delete(r.name).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
      }
    }
    await this.collectGarbage();
    const deletedChains: string[] = [];
    for (const c of chains) {
      try {
        await client.snapshots.stat(c, { snapshotter });
      } catch (err) {
        if (isNotFound(err)) {
          deletedChains.push(c);
          this.d.sizes.forget(c);
        }
      }
    }
    let reclaimed = 0;
    for (const [digest, size] of blobs) {
      try {
        await client.contentInfo(digest);
      } catch (err) {
        if (isNotFound(err)) reclaimed += size;
      }
    }
    return { deletedChains, reclaimed };
  }

  /** One synchronous containerd GC pass (a throwaway lease deleted with sync). */
  private async collectGarbage(): Promise<void> {
    const lease = await this.d.client.leases.create({ expireMs: 60_000 });
    await this.d.client.leases.delete(lease.id, { sync: true });
  }

  /** Removes init layers of chains that no image uses and no container sits on any more. */
  async sweepInitLayers(): Promise<number> {
    return this.d.lock.run('images', async () => {
      const inits = await this.d.client.snapshots.list([], { snapshotter: this.d.snapshotter });
      const chains = new Set((await this.d.images.list()).map((i) => i.chainId));
      let removed = 0;
      for (const s of inits) {
        const m = INIT_NAME.exec(s.name);
        if (!m || chains.has(`sha256:${m[1]}`)) continue;
        // Counted only when removed; an init layer still in use by a container stays (removeInit says false).
        const gone = await this.d.rootfs.removeInit(`sha256:${m[1]}`).catch((err: Error) => {
          this.d.log.debug(`init layer sweep of sha256:${m[1]}: ${err.message}`);
          return false;
        });
        if (gone) removed++;
      }
      if (removed) await this.collectGarbage();
      return removed;
    });
  }
}
