// Writing the image of one build step, as the classic builder commits one per step: the parent's
// layers plus (for a step that changed the filesystem) one new uncompressed layer, the runtime
// config as the instructions so far left it, one more history entry, and the parent image ID as a
// record label (what inspect shows as Parent). Each image gets a dangling record; the image list
// hides unnamed images that have children (intermediate images), as dockerd does.
import { randomBytes } from 'node:crypto';
import { EngineError } from '../errors.ts';
import { nowIso } from '../util/time.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { Descriptor, Mount } from '../supervisor/types.ts';
import type { Logger } from '../util/log.ts';
import { readOnlyMounts, withMounted } from '../supervisor/mounts.ts';
import { chainIds, type ImageStore, type LocalImage, type OciImageConfig } from '../images/image-store.ts';
import { ensureReachable, LABEL, MT, unpackLayers, writeConfig, writeManifest, type WriteContext } from '../images/image-write.ts';
import { diffContainerLayer } from '../images/commit.ts';
import { layerFromMountedTrees, layerFromTrees, layerFromUpper } from '../images/commit-fast.ts';
import { upperDirOf } from '../images/overlay-diff.ts';

export type RuntimeConfig = NonNullable<OciImageConfig['config']>;
export type ImageConfig = OciImageConfig & Record<string, unknown>;

/** The state a step starts from: an image, or scratch (id ''). */
export interface StepImage {
  id: string;
  config: ImageConfig;
  layers: Descriptor[];
}

/** The digest of an empty tar (two zero blocks): a diff without changes. */
export const EMPTY_TAR_DIGEST = 'sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef';

export function scratchImage(platform: { os: string; architecture: string }): StepImage {
  return { id: '', config: { architecture: platform.architecture, os: platform.os, config: {}, rootfs: { type: 'layers', diff_ids: [] }, history: [] }, layers: [] };
}

export function stepImageOf(img: LocalImage): StepImage {
  return { id: img.id, config: structuredClone(img.config) as ImageConfig, layers: [...img.manifest.layers] };
}

export function topChain(img: StepImage): string {
  return chainIds(img.config.rootfs?.diff_ids ?? []).at(-1) ?? '';
}

export interface WriterDeps {
  client: SupervisorClient;
  images: ImageStore;
  snapshotter: string;
  tmpDir: string;
  /** containerd's content directory when the daemon runs its own: filesystem steps' layers are then read from the snapshot's upper directory. */
  contentRoot?: string;
  log?: Logger;
}

/**
 * Writes a filesystem step leaves for the snapshot's upper directory once it is unmounted (no
 * overlayfs in between: e.g. hard links to the context's files, which cannot cross into a mount).
 */
export type AfterUnmount = (upper: string) => Promise<void>;

export interface NewLayer {
  desc: Descriptor;
  /** Whether the snapshot for the new chain exists already (filesystem steps commit it themselves). */
  unpacked: boolean;
  /** The layer's diff ID when the blob is compressed (a cachefrom image's layer); else its digest. */
  diffId?: string;
}

export class StepImageWriter {
  constructor(private readonly d: WriterDeps) {}

  /** Writes the step's image; `layer` undefined (or an empty diff) makes an empty-layer history entry. */
  /**
   * `restore`: the step comes from a cachefrom image's history entry, kept as it is (its time,
   * comment), with that image's author (cache-from.ts).
   */
  async write(
    parent: StepImage, runtime: RuntimeConfig, createdBy: string, layer: NewLayer | undefined, lease: string,
    restore?: { entry: NonNullable<ImageConfig['history']>[number]; author?: string | undefined },
  ): Promise<StepImage> {
    const w: WriteContext = { client: this.d.client, snapshotter: this.d.snapshotter, lease, log: this.d.log };
    const created = restore?.entry.created ?? nowIso();
    const diffIds = [...(parent.config.rootfs?.diff_ids ?? [])];
    const layers = [...parent.layers];
    const empty = !layer || layer.desc.digest === EMPTY_TAR_DIGEST;
    if (!empty) {
      diffIds.push(layer.diffId ?? layer.desc.digest); // uncompressed: the blob digest is the diff ID
      layers.push({ media_type: layer.diffId ? layer.desc.media_type : MT.ociLayer, digest: layer.desc.digest, size: layer.desc.size });
    }
    const top = empty || layer.unpacked ? (chainIds(diffIds).at(-1) ?? '') : await unpackLayers(w, layers, diffIds);
    const base = structuredClone(parent.config);
    for (const legacy of ['container', 'container_config', 'docker_version', 'parent', 'id']) delete base[legacy];
    const config: ImageConfig = {
      ...base,
      created,
      config: runtime,
      rootfs: { type: 'layers', diff_ids: diffIds },
      history: [...(parent.config.history ?? []), restore ? { ...restore.entry } : { created, created_by: createdBy, ...(empty ? { empty_layer: true } : {}) }],
    };
    if (restore) {
      if (restore.author) config.author = restore.author;
      else delete config.author;
    }
    const configDesc = await writeConfig(w, Buffer.from(JSON.stringify(config)), top);
    const manifest = await writeManifest(w, { config: configDesc, layers });
    const labels: Record<string, string> = parent.id ? { [LABEL.parent]: parent.id } : {};
    await ensureReachable(this.d.client, this.d.images, manifest, labels, configDesc.digest);
    return { id: configDesc.digest, config, layers };
  }

  /** The filesystem changes of a step's container (RUN) as a layer to be unpacked. */
  async containerLayer(snapshotKey: string, snapshotter: string, containerId: string, lease: string): Promise<NewLayer> {
    const { contentRoot } = this.d;
    // Off overlayfs the two trees compared by metadata (commit-fast.ts), as dockerd's builder does;
    // containerd's diff service where that is not exact.
    const viaTrees =
      contentRoot && snapshotter !== 'overlayfs'
        ? await layerFromTrees({ client: this.d.client, snapshotter, lease, contentRoot }, this.d.tmpDir, {
            snapshotKey,
            snapshotter,
            id: containerId,
          }).catch((err: unknown) => {
            this.d.log?.debug(`build step layer: the tree comparison failed, using the diff service: ${(err as Error).message}`);
            return null;
          })
        : null;
    return { desc: viaTrees ?? (await diffContainerLayer(this.d.client, snapshotKey, snapshotter, lease, containerId)), unpacked: false };
  }

  /**
   * Runs fn on a writable snapshot of the parent's filesystem (COPY, ADD, WORKDIR) and returns its
   * changes as a layer; the snapshot itself becomes the new chain's, so nothing is applied twice.
   * fn gets the mounted root and, on overlayfs, the upper directory, which it may write directly
   * through the AfterUnmount it returns. The layer is the upper directory read once into the
   * content store where that is exact (as commit's fast path), off overlayfs the two trees compared
   * by metadata (then applied as the new chain, not the snapshot kept), else containerd's diff service.
   */
  async fsLayer(parent: StepImage, lease: string, fn: (root: string, upper: string | null) => Promise<AfterUnmount | void>): Promise<NewLayer> {
    const { client, snapshotter } = this.d;
    const key = `build-${randomBytes(8).toString('hex')}`;
    const parentChain = topChain(parent);
    const mounts = await client.snapshots.prepare({ key, parent: parentChain, snapshotter }, { lease });
    let committed = false;
    try {
      const upper = upperDirOf(mounts);
      const after = await withMounted(mounts, this.d.tmpDir, (root) => fn(root, upper));
      if (after && upper) await after(upper);
      const fromUpper = upper ? await this.layerFromUpper(upper, key, lease) : null;
      const { desc, byMetadata } = fromUpper ? { desc: fromUpper, byMetadata: false } : await this.diffLayer(key, parentChain, mounts, lease);
      if (desc.digest === EMPTY_TAR_DIGEST) return { desc, unpacked: true };
      // A layer from the metadata comparison is applied as the new chain (as dockerd registers a
      // layer from its tar): a file rewritten with its size and mtime kept is not in it.
      if (byMetadata) return { desc, unpacked: false };
      const chain = chainIds([...(parent.config.rootfs?.diff_ids ?? []), desc.digest]).at(-1)!;
      try {
        await client.snapshots.commit({ name: chain, key, snapshotter }, { lease });
        committed = true;
      } catch (err) {
        // The same content was committed before (an identical step): that chain serves.
        if (!(err instanceof EngineError && err.code === 'CONFLICT')) throw err;
      }
      return { desc, unpacked: true };
    } finally {
      // Under the lease, so gone with it anyway if this removal fails.
      if (!committed)
        await client.snapshots
          .remove(key, { snapshotter, lease })
          .catch((err: Error) => this.d.log?.debug(`build step layer: snapshot ${key} not removed: ${err.message}`));
    }
  }

  /** The upper directory as the layer blob (see commit-fast.ts), or null: the diff service does it. */
  private async layerFromUpper(upper: string, key: string, lease: string): Promise<Descriptor | null> {
    const { contentRoot } = this.d;
    if (!contentRoot) return null;
    const w = { client: this.d.client, snapshotter: this.d.snapshotter, lease, contentRoot };
    return layerFromUpper(w, upper, `build-${key.slice(6)}`).catch((err: unknown) => {
      this.d.log?.debug(`build step layer: reading the upper directory failed, using the diff service: ${(err as Error).message}`);
      return null;
    });
  }

  /** The snapshot's changes over its parent by containerd's diff service. */
  private async diffLayer(key: string, parentChain: string, mounts: Mount[], lease: string): Promise<{ desc: Descriptor; byMetadata: boolean }> {
    const { client, snapshotter, contentRoot } = this.d;
    const viewKey = `${key}-view`;
    const lower = parentChain ? await client.snapshots.view({ key: viewKey, parent: parentChain, snapshotter }, { lease }) : [];
    try {
      // Off overlayfs (and with a parent to compare with): the two trees by metadata, as dockerd does.
      const viaTrees =
        contentRoot && parentChain && snapshotter !== 'overlayfs'
          ? await layerFromMountedTrees(
              { client, snapshotter, lease, contentRoot },
              this.d.tmpDir,
              lower,
              readOnlyMounts(mounts),
              `build-${key.slice(6)}`,
            ).catch((err: unknown) => {
              this.d.log?.debug(`build step layer: the tree comparison failed, using the diff service: ${(err as Error).message}`);
              return null;
            })
          : null;
      if (viaTrees) return { desc: viaTrees, byMetadata: true };
      const desc = await client.diff.diff(
        { left: lower, right: readOnlyMounts(mounts), media_type: MT.ociLayer, ref: `build-${key.slice(6)}` },
        { lease },
      );
      return { desc, byMetadata: false };
    } finally {
      // A view holds no data of its own, and it is under the step's lease anyway.
      if (parentChain)
        await client.snapshots
          .remove(viewKey, { snapshotter, lease })
          .catch((err: Error) => this.d.log?.debug(`build step layer: view ${viewKey} not removed: ${err.message}`));
    }
  }
}
