// The local-images backend: list, inspect, history, tag, remove, prune, save, load, import,
// commit and export over containerd's image records, content and snapshots. A facade: the reads
// are image-queries.ts's, sizes layer-sizes.ts's, removal and prune image-removal.ts's, the space
// reclaimed and the init-layer sweep image-purge.ts's; tag and the archive paths stay here.
import type { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CommitOptions, ImageDeleteItem, LoadResult } from '../types/images.ts';
import type { ImageInspect, ImageSummary } from '../types/api/index.ts';
import { invalidParameter } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { Logger } from '../util/log.ts';
import { KeyedMutex } from '../util/mutex.ts';
import { isDanglingName, isValidTag, parseReference, referenceString, familiarString } from '../util/image-reference.ts';
import type { EventPublisher } from '../events/bus.ts';
import { publishImageEvent, publishImageEventFor } from '../events/image-events.ts';
import { commitContainer } from './commit.ts';
import type { ContainerFacts, InitLayers } from './container-facts.ts';
import { writeContainerExport } from './export.ts';
import { ImagePurge } from './image-purge.ts';
import { fullImage, ImageQueries, type ImageListOptions } from './image-queries.ts';
import { ImageRemoval } from './image-removal.ts';
import { LABEL, setName } from './image-write.ts';
import { importImage, type ImageDeps, type ImportOptions, type ProgressFn } from './import.ts';
import { LayerSizes } from './layer-sizes.ts';
import { loadImages } from './load.ts';
import { resolveSaveNames, writeSaveArchive } from './save.ts';

export interface ImageServiceDeps extends ImageDeps {
  containers: ContainerFacts;
  /** The init layers (daemon/containers/rootfs.ts): dropped with the last image of their chain. */
  rootfs: InitLayers;
  tmpDir: string;
  log: Logger;
  /** The storage driver name inspect shows under GraphDriver. */
  driver: string;
  /** The events stream (tag, untag, delete, load, save, import, prune). */
  events?: EventPublisher;
  /** Container events raised here (commit), published with the container's attributes. */
  containerEvent?: (containerId: string, action: string, attributes: Record<string, string>) => void;
}

export class ImageService {
  private readonly lock = new KeyedMutex();
  private readonly sizes: LayerSizes;
  private readonly queries: ImageQueries;
  private readonly purge: ImagePurge;
  private readonly removal: ImageRemoval;

  constructor(private readonly d: ImageServiceDeps) {
    this.sizes = new LayerSizes(d.client, d.snapshotter, d.images);
    this.queries = new ImageQueries(d.client, d.images, d.containers, this.sizes, d.driver);
    const { client, snapshotter, images, rootfs, containers, log, events } = d;
    this.purge = new ImagePurge({ client, snapshotter, images, rootfs, sizes: this.sizes, lock: this.lock, log });
    this.removal = new ImageRemoval({ client, images, containers, purge: this.purge, lock: this.lock, ...(events ? { events } : {}) });
  }

  private get client(): SupervisorClient {
    return this.d.client;
  }

  /** Starts the init-layer sweeper and the image-count refresh (image-purge.ts). */
  start(): void {
    this.purge.start();
  }

  stop(): void {
    this.purge.stop();
  }

  // ---- list / inspect / history / sizes (image-queries.ts) ---------------------------------------

  list(opts: ImageListOptions): Promise<ImageSummary[]> {
    return this.queries.list(opts);
  }

  inspect(ref: string, version: string, opts: { manifests?: boolean } = {}): Promise<ImageInspect> {
    return this.queries.inspect(ref, version, opts);
  }

  history(ref: string): Promise<unknown[]> {
    return this.queries.history(ref);
  }

  /** For system df: every image with its shared size and containers, and LayersSize. */
  diskUsage(): Promise<{ layersSize: number; images: ImageSummary[] }> {
    return this.queries.diskUsage();
  }

  /** Removes init layers of chains that no image uses and no container sits on any more. */
  sweepInitLayers(): Promise<number> {
    return this.purge.sweepInitLayers();
  }

  // ---- tag -------------------------------------------------------------------------------------

  async tag(source: string, repo: string | undefined, tag: string | undefined): Promise<void> {
    if (!repo) throw invalidParameter('repository name must be specified');
    if (/^[a-f0-9]{64}$/.test(repo))
      throw invalidParameter(`invalid repository name (${repo}), cannot specify 64-byte hexadecimal strings`);
    const ref = parseReference(repo, { defaultTag: false });
    if (ref.digest) throw invalidParameter('refusing to create a tag with a digest reference');
    if (tag) {
      if (!isValidTag(tag)) throw invalidParameter(`invalid tag format`);
      ref.tag = tag;
    }
    ref.tag ??= 'latest';
    await this.lock.run('images', async () => {
      const img = await fullImage(this.d.images, source);
      const name = referenceString(ref);
      if (
        img.records.some((r) => r.name === name && r.target.digest === img.record.target.digest) &&
        !img.records.some((r) => isDanglingName(r.name))
      ) {
        // Already so named (a rebuild of an unchanged image): nothing to write, but the event, as dockerd.
        publishImageEvent(this.d.events, 'tag', img.id, familiarString(ref), img.config.config?.Labels);
        return;
      }
      const labels = { ...(img.records.find((r) => r.labels?.[LABEL.parent])?.labels ?? {}) };
      await setName(this.client, this.d.images, name, img.record.target, labels);
      for (const r of img.records) if (isDanglingName(r.name)) await this.client.images.delete(r.name).catch(() => undefined); // A dangling name someone removed already is the state wanted.
      await this.d.images.list();
      publishImageEvent(this.d.events, 'tag', img.id, familiarString(ref), img.config.config?.Labels);
    });
  }

  // ---- remove / prune (image-removal.ts) ----------------------------------------------------------

  remove(ref: string, opts: { force: boolean; noprune: boolean }): Promise<ImageDeleteItem[]> {
    return this.removal.remove(ref, opts);
  }

  prune(filters: Map<string, string[]>): Promise<{ ImagesDeleted: ImageDeleteItem[] | null; SpaceReclaimed: number }> {
    return this.removal.prune(filters);
  }

  // ---- save / load / import / commit / export --------------------------------------------------

  async prepareSave(names: string[]): Promise<(out: Writable) => Promise<void>> {
    if (!names.length) throw invalidParameter('no images given to save');
    const items = await resolveSaveNames(this.d.images, names);
    return async (out) => {
      await writeSaveArchive(this.client, items, out);
      for (const it of items) publishImageEvent(this.d.events, 'save', it.image.id, it.image.id, it.image.config.config?.Labels);
    };
  }

  async load(body: AsyncIterable<Uint8Array>): Promise<LoadResult> {
    const result = await loadImages(this.d, body);
    for (const id of result.ids) await publishImageEventFor(this.d.events, (r) => this.d.images.resolve(r), 'load', id, id);
    return result;
  }

  async importImage(body: AsyncIterable<Uint8Array>, opts: ImportOptions, progress?: ProgressFn): Promise<{ id: string; name?: string }> {
    const result = await importImage(this.d, body, opts, progress);
    if (result.name)
      await publishImageEventFor(
        this.d.events,
        (r) => this.d.images.resolve(r),
        'tag',
        result.id,
        familiarString(parseReference(result.name)),
      );
    await publishImageEventFor(this.d.events, (r) => this.d.images.resolve(r), 'import', result.id, result.id);
    return result;
  }

  async commit(opts: CommitOptions): Promise<{ Id: string }> {
    const { id } = await commitContainer(this.d, this.d.containers, opts);
    let imageRef = '';
    if (opts.repo) {
      imageRef = familiarString(parseReference(opts.tag ? `${opts.repo}:${opts.tag}` : opts.repo));
      await publishImageEventFor(this.d.events, (r) => this.d.images.resolve(r), 'tag', id, imageRef);
      // Each event stores the labels (4 MiB at most): other requests get a turn between the two.
      await nextTurn();
    }
    this.d.containerEvent?.((await this.d.containers.snapshotOf(opts.container)).id, 'commit', {
      comment: opts.comment ?? '',
      imageID: id,
      imageRef,
    });
    return { Id: id };
  }

  async prepareExport(ref: string): Promise<(out: Writable) => Promise<void>> {
    const c = await this.d.containers.snapshotOf(ref);
    return (out) => writeContainerExport(this.client, c, this.d.tmpDir, out);
  }
}
