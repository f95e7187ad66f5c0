// Unpacked sizes of images and their layers, as list, inspect, history and system df show them:
// a layer's size is its committed snapshot's own usage, cached by chain ID (snapshots are
// immutable; the cache entry goes when the chain is deleted).
import type { SupervisorClient } from '../supervisor/client.ts';
import { chainIds, type ImageStore, type LocalImage } from './image-store.ts';

export interface ImageSizes {
  /** Unpacked size of all the image's layers. */
  size: number;
  /** Part of `size` in layers other images use too. */
  sharedSize: number;
  uniqueSize: number;
}

export class LayerSizes {
  private readonly usage = new Map<string, number>();

  constructor(
    private readonly client: SupervisorClient,
    private readonly snapshotter: string,
    private readonly images: ImageStore,
  ) {}

  /** Unpacked size of one layer (its committed snapshot's own usage), cached: snapshots are immutable. */
  async layerSize(chainId: string, fallback: number): Promise<number> {
    const hit = this.usage.get(chainId);
    if (hit !== undefined) return hit;
    try {
      const u = await this.client.snapshots.usage(chainId, { snapshotter: this.snapshotter });
      this.usage.set(chainId, Number(u.size));
      return Number(u.size);
    } catch {
      // no usage for this snapshot (removed meanwhile): the caller's fallback
      return fallback;
    }
  }

  /** Drops a deleted chain's cached size. */
  forget(chainId: string): void {
    this.usage.delete(chainId);
  }

  /** The unpacked size of one image's layers, each in the order of its manifest. */
  async layerSizes(img: LocalImage): Promise<number[]> {
    const chain = chainIds(img.config.rootfs?.diff_ids ?? []);
    return Promise.all(chain.map((c, i) => this.layerSize(c, Number(img.manifest.layers[i]?.size ?? 0))));
  }

  async imageSize(img: LocalImage): Promise<number> {
    const chain = chainIds(img.config.rootfs?.diff_ids ?? []);
    let total = 0;
    for (let i = 0; i < chain.length; i++) total += await this.layerSize(chain[i]!, Number(img.manifest.layers[i]?.size ?? 0));
    return total;
  }

  /** Per image ID: unpacked size, and how much of it is in layers shared with other images. */
  async sizes(list?: LocalImage[]): Promise<Map<string, ImageSizes>> {
    const images = list ?? (await this.images.list());
    const users = new Map<string, number>();
    const chains = new Map<string, string[]>();
    for (const img of images) {
      const c = chainIds(img.config.rootfs?.diff_ids ?? []);
      chains.set(img.id, c);
      for (const id of new Set(c)) users.set(id, (users.get(id) ?? 0) + 1);
    }
    const out = new Map<string, ImageSizes>();
    for (const img of images) {
      let size = 0;
      let shared = 0;
      const c = chains.get(img.id)!;
      for (let i = 0; i < c.length; i++) {
        const s = await this.layerSize(c[i]!, Number(img.manifest.layers[i]?.size ?? 0));
        size += s;
        if ((users.get(c[i]!) ?? 0) > 1) shared += s;
      }
      out.set(img.id, { size, sharedSize: shared, uniqueSize: size - shared });
    }
    return out;
  }

  /** The unpacked size of all distinct layers of the images together (system df's LayersSize). */
  async distinctLayersSize(images: LocalImage[]): Promise<number> {
    const layers = new Map<string, number>();
    for (const img of images) {
      const chain = chainIds(img.config.rootfs?.diff_ids ?? []);
      for (let i = 0; i < chain.length; i++)
        if (!layers.has(chain[i]!)) layers.set(chain[i]!, await this.layerSize(chain[i]!, Number(img.manifest.layers[i]?.size ?? 0)));
    }
    let total = 0;
    for (const s of layers.values()) total += s;
    return total;
  }
}
