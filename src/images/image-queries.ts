// The read side of the local-images backend: list (filters, intermediate images, sizes, the
// containers using each image), inspect, history, system df's image part, and the `Manifests`
// of list and inspect with `manifests=1`.
import { checkFilterNames, labelMatches, lastBoolFilter } from '../util/filters.ts';
import { isNotFound } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { ImageInspect, ImageManifestSummary, ImageSummary } from '../types/api/index.ts';
import type { ContainerFacts } from './container-facts.ts';
import type { ImageStore, LocalImage } from './image-store.ts';
import type { LayerSizes } from './layer-sizes.ts';
import { manifestSummaries, type ManifestSummary, type WireDescriptor } from './manifest-summary.ts';
import {
  createdSeconds,
  historyView,
  inspectView,
  parentId,
  parseTimeFilter,
  referenceMatches,
  repoTags,
  summaryView,
} from './image-views.ts';

export interface ImageListOptions {
  all: boolean;
  digests: boolean;
  sharedSize: boolean;
  filters: Map<string, string[]>;
  manifests?: boolean;
}

/** The image record's target as an OCI descriptor on the wire. */
function targetDescriptor(img: LocalImage): WireDescriptor {
  const t = img.record.target;
  return {
    mediaType: t.media_type,
    digest: t.digest,
    size: Number(t.size),
    ...(t.annotations && Object.keys(t.annotations).length ? { annotations: t.annotations } : {}),
  };
}

/** Manifests is `omitempty` in dockerd's list and inspect answers. */
function setManifests(view: { Manifests?: ImageManifestSummary[] | null }, manifests: ManifestSummary[]): void {
  // manifest-summary.ts writes `Containers: null` where dockerd's Go slice is nil; the generated type says string[].
  if (manifests.length) view.Manifests = manifests as ImageManifestSummary[];
}

/** The image with all its names and records (resolve() gives only the record it matched). */
export async function fullImage(images: ImageStore, ref: string): Promise<LocalImage> {
  const img = await images.resolve(ref);
  return (await images.list()).find((i) => i.id === img.id) ?? img;
}

export class ImageQueries {
  constructor(
    private readonly client: SupervisorClient,
    private readonly images: ImageStore,
    private readonly containers: ContainerFacts,
    private readonly sizes: LayerSizes,
    /** The storage driver name inspect shows under GraphDriver. */
    private readonly driver: string,
  ) {}

  async list(opts: ImageListOptions): Promise<ImageSummary[]> {
    const f = opts.filters;
    checkFilterNames(f, ['before', 'since', 'dangling', 'label', 'reference', 'until']);
    const dangling = lastBoolFilter('dangling', f.get('dangling'));
    const images = await this.images.list();
    const createdOf = async (ref: string) => createdSeconds(await this.images.resolve(ref));
    const before = f.get('before')?.length ? Math.min(...(await Promise.all(f.get('before')!.map(createdOf)))) : undefined;
    const since = f.get('since')?.length ? Math.max(...(await Promise.all(f.get('since')!.map(createdOf)))) : undefined;
    const until = f.get('until')?.length ? Math.min(...f.get('until')!.map(parseTimeFilter)) : undefined;
    const labels = f.get('label') ?? [];
    const refs = f.get('reference') ?? [];
    const sizes = await this.sizes.sizes(images);
    // Unnamed images with children are intermediate images (build steps): listed only with all=1.
    const parents = new Set(images.map(parentId).filter(Boolean));
    const users = this.usersByImage();
    const out: ImageSummary[] = [];
    for (const img of images) {
      let tags = repoTags(img);
      const isDangling = tags.length === 0 && img.names.length === 0;
      if (isDangling && !opts.all && parents.has(img.id)) continue;
      if (dangling === true && !isDangling) continue;
      if (dangling === false && isDangling) continue;
      const created = createdSeconds(img);
      if (before !== undefined && created >= before) continue;
      if (since !== undefined && created <= since) continue;
      if (until !== undefined && created >= until) continue;
      if (!labels.every((l) => labelMatches(img.config.config?.Labels, l))) continue;
      if (refs.length) {
        tags = tags.filter((t) => refs.some((p) => referenceMatches(p, t)));
        if (!tags.length) continue;
      }
      const s = sizes.get(img.id)!;
      // Containers: how many use the image (dockerd's containerd store counts them; the route
      // answers -1 to clients before 1.51). Descriptor: the record's target.
      const view = summaryView(img, {
        size: s.size,
        sharedSize: opts.sharedSize ? s.sharedSize : -1,
        containers: users.get(img.id)?.length ?? 0,
        tags,
      });
      view.Descriptor = targetDescriptor(img);
      if (opts.manifests) setManifests(view, await this.manifests(img, users));
      out.push(view);
    }
    return out.sort((a, b) => b.Created - a.Created);
  }

  async inspect(ref: string, version: string, opts: { manifests?: boolean } = {}): Promise<ImageInspect> {
    const img = await fullImage(this.images, ref);
    const view = inspectView(img, { size: await this.sizes.imageSize(img), driver: this.driver, version });
    if (opts.manifests) setManifests(view, await this.manifests(img, this.usersByImage()));
    return view;
  }

  async history(ref: string): Promise<unknown[]> {
    const img = await fullImage(this.images, ref);
    const byId = new Map((await this.images.list()).map((i) => [i.id, i]));
    return historyView(img, byId, await this.sizes.layerSizes(img));
  }

  /**
   * For system df: every image with its shared size and how many containers use it, and the
   * unpacked size of all distinct layers together (LayersSize).
   */
  async diskUsage(): Promise<{ layersSize: number; images: Array<Record<string, unknown>> }> {
    const images = await this.images.list();
    const sizes = await this.sizes.sizes(images);
    const users = new Map<string, number>();
    for (const u of this.containers.imageUsers()) users.set(u.image, (users.get(u.image) ?? 0) + 1);
    const layersSize = await this.sizes.distinctLayersSize(images);
    const views = images.map((img) => {
      const s = sizes.get(img.id)!;
      return summaryView(img, { size: s.size, sharedSize: s.sharedSize, containers: users.get(img.id) ?? 0 });
    });
    // system df's backend (daemon/disk-usage.ts) declares plain records: each summary as one.
    return { layersSize, images: views.sort((a, b) => b.Created - a.Created).map((v) => ({ ...v })) };
  }

  /** Container IDs by the image ID they were created from. */
  private usersByImage(): Map<string, string[]> {
    const users = new Map<string, string[]>();
    for (const u of this.containers.imageUsers()) users.set(u.image, [...(users.get(u.image) ?? []), u.id]);
    return users;
  }

  /** The image's manifests as dockerd's `manifests=1` shows them (manifest-summary.ts). */
  private async manifests(img: LocalImage, users: Map<string, string[]>): Promise<ManifestSummary[]> {
    return manifestSummaries(targetDescriptor(img), {
      has: async (digest) => {
        try {
          await this.client.contentInfo(digest);
          return true;
        } catch (err) {
          if (isNotFound(err)) return false;
          throw err;
        }
      },
      readJson: async (digest) => JSON.parse((await this.client.contentReadAll(digest)).toString('utf8')),
      unpacked: async (chain) => {
        let total = 0;
        for (const c of chain) total += await this.sizes.layerSize(c, 0);
        return total;
      },
      containersOf: (imageId) => users.get(imageId) ?? [],
    });
  }
}
