// The local-images backend: list, inspect, history, tag, remove, prune, save, load, import,
// commit and export over containerd's image records, content and snapshots. Removal follows
// dockerd's rules (untag first, conflicts with containers, pruning of untagged parents); what no
// image or container references any more is left to containerd's GC, run synchronously so the
// space is free when the call returns, together with the init layers of rootfs.ts.
import { checkFilterNames, labelMatches, lastBoolFilter } from '../util/filters.ts';
import type { Writable } from 'node:stream';
import type { CommitOptions, ImageDeleteItem, LoadResult } from '../types/images.ts';
import { conflict, EngineError, invalidParameter, isNotFound } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { EventSubscription } from '../supervisor/events.ts';
import type { Logger } from '../util/log.ts';
import { KeyedMutex } from '../util/mutex.ts';
import { commitContainer } from './commit.ts';
import type { ContainerFacts, InitLayers } from './container-facts.ts';
import { writeContainerExport } from './export.ts';
import { chainIds, type LocalImage } from './image-store.ts';
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
import { keepAsDangling, LABEL, setName } from './image-write.ts';
import { importImage, type ImageDeps, type ImportOptions, type ProgressFn } from './import.ts';
import { loadImages } from './load.ts';
import { isDanglingName, isValidTag, parseReference, referenceString, familiarString, type Reference } from '../util/image-reference.ts';
import { resolveSaveNames, writeSaveArchive } from './save.ts';
import type { EventPublisher } from '../events/bus.ts';
import { publishImageEvent, publishImageEventFor } from '../events/image-events.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';

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

export interface ImageSizes {
  /** Unpacked size of all the image's layers. */
  size: number;
  /** Part of `size` in layers other images use too. */
  sharedSize: number;
  uniqueSize: number;
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
function setManifests(view: Record<string, unknown>, manifests: ManifestSummary[]): void {
  if (manifests.length) view.Manifests = manifests;
}

const short = (id: string) => id.replace(/^sha256:/, '').slice(0, 12);
// init layers and, with --userns-remap, the remapped copies of chains and their init layers.
const INIT_NAME = /^(?:init|remap)-(?:\d+\.\d+-)?([a-f0-9]{64})$/;

function isImageIdPrefix(id: string, ref: string): boolean {
  return id.startsWith(ref) || id.slice(7).startsWith(ref);
}

/** All references in one repository and at most one tag (dockerd's isSingleReference). */
function isSingleReference(names: string[]): boolean {
  if (names.length <= 1) return names.length === 1;
  const refs = names.map((n) => parseReference(n, { defaultTag: false }));
  const repo = (r: Reference) => `${r.domain}/${r.path}`;
  const tagged = refs.filter((r) => !r.digest);
  if (tagged.length > 1) return false;
  const single = tagged[0] ?? refs[0]!;
  const digestRepos = new Set(refs.filter((r) => r.digest).map(repo));
  return digestRepos.size === 1 && digestRepos.has(repo(single));
}

class DeleteConflict extends EngineError {
  constructor(
    id: string,
    readonly hard: boolean,
    readonly used: boolean,
    what: string,
  ) {
    super('CONFLICT', `conflict: unable to delete ${short(id)} (${hard ? 'cannot be forced' : 'must be forced'}) - ${what}`);
  }
}

export class ImageService {
  private readonly lock = new KeyedMutex();
  private readonly layerUsage = new Map<string, number>();
  private sweeper: EventSubscription | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly d: ImageServiceDeps) {}

  private get client(): SupervisorClient {
    return this.d.client;
  }

  /**
   * Watches snapshot removals (container rm) to drop init layers no image needs any more, and image
   * record changes made outside this service (pulls, other clients) to keep the /info count fresh.
   */
  start(): void {
    const ns = this.client.namespace;
    this.sweeper = this.client.subscribe(
      [`namespace==${ns},topic=="/snapshot/remove"`, `namespace==${ns},topic~="^/images/"`],
      (e) => {
        if (e.topic.startsWith('/images/')) {
          void this.d.images.list().catch(() => undefined); // Refreshing the image cache on an event; the next list() reloads and reports any failure.
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

  /** One sweep of unused init layers after `ms` (a sweep already scheduled is replaced). */
  private scheduleSweep(ms: number): void {
    clearTimeout(this.sweepTimer);
    this.sweepTimer = setTimeout(
      () => void this.sweepInitLayers().catch((err) => this.d.log.warn(`init layer sweep: ${(err as Error).message}`)),
      ms,
    );
  }

  stop(): void {
    clearTimeout(this.sweepTimer);
    this.sweeper?.close();
  }

  // ---- sizes -------------------------------------------------------------------------------------

  /** Unpacked size of one layer (its committed snapshot's own usage), cached: snapshots are immutable. */
  private async layerSize(chainId: string, fallback: number): Promise<number> {
    const hit = this.layerUsage.get(chainId);
    if (hit !== undefined) return hit;
    try {
      const u = await this.client.snapshots.usage(chainId, { snapshotter: this.d.snapshotter });
      this.layerUsage.set(chainId, Number(u.size));
      return Number(u.size);
    } catch {
      // no usage for this snapshot (removed meanwhile): the caller's fallback
      return fallback;
    }
  }

  private async imageSize(img: LocalImage): Promise<number> {
    const chain = chainIds(img.config.rootfs?.diff_ids ?? []);
    let total = 0;
    for (let i = 0; i < chain.length; i++) total += await this.layerSize(chain[i]!, Number(img.manifest.layers[i]?.size ?? 0));
    return total;
  }

  /** Per image ID: unpacked size, and how much of it is in layers shared with other images. */
  async sizes(list?: LocalImage[]): Promise<Map<string, ImageSizes>> {
    const images = list ?? (await this.d.images.list());
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

  /**
   * For system df: every image with its shared size and how many containers use it, and the
   * unpacked size of all distinct layers together (LayersSize).
   */
  async diskUsage(): Promise<{ layersSize: number; images: Array<Record<string, unknown>> }> {
    const images = await this.d.images.list();
    const sizes = await this.sizes(images);
    const users = new Map<string, number>();
    for (const u of this.d.containers.imageUsers()) users.set(u.image, (users.get(u.image) ?? 0) + 1);
    const layers = new Map<string, number>();
    for (const img of images) {
      const chain = chainIds(img.config.rootfs?.diff_ids ?? []);
      for (let i = 0; i < chain.length; i++)
        if (!layers.has(chain[i]!)) layers.set(chain[i]!, await this.layerSize(chain[i]!, Number(img.manifest.layers[i]?.size ?? 0)));
    }
    let layersSize = 0;
    for (const s of layers.values()) layersSize += s;
    const views = images.map((img) => {
      const s = sizes.get(img.id)!;
      return summaryView(img, { size: s.size, sharedSize: s.sharedSize, containers: users.get(img.id) ?? 0 });
    });
    return { layersSize, images: views.sort((a, b) => (b.Created as number) - (a.Created as number)) };
  }

  // ---- list / inspect / history ----------------------------------------------------------------

  async list(opts: {
    all: boolean;
    digests: boolean;
    sharedSize: boolean;
    filters: Map<string, string[]>;
    manifests?: boolean;
  }): Promise<unknown[]> {
    const f = opts.filters;
    checkFilterNames(f, ['before', 'since', 'dangling', 'label', 'reference', 'until']);
    const dangling = lastBoolFilter('dangling', f.get('dangling'));
    const images = await this.d.images.list();
    const createdOf = async (ref: string) => createdSeconds(await this.d.images.resolve(ref));
    const before = f.get('before')?.length ? Math.min(...(await Promise.all(f.get('before')!.map(createdOf)))) : undefined;
    const since = f.get('since')?.length ? Math.max(...(await Promise.all(f.get('since')!.map(createdOf)))) : undefined;
    const until = f.get('until')?.length ? Math.min(...f.get('until')!.map(parseTimeFilter)) : undefined;
    const labels = f.get('label') ?? [];
    const refs = f.get('reference') ?? [];
    const sizes = await this.sizes(images);
    // Unnamed images with children are intermediate images (build steps): listed only with all=1.
    const parents = new Set(images.map(parentId).filter(Boolean));
    const users = this.usersByImage();
    const out: Array<Record<string, unknown>> = [];
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
    return out.sort((a, b) => (b.Created as number) - (a.Created as number));
  }

  async inspect(ref: string, version: string, opts: { manifests?: boolean } = {}): Promise<unknown> {
    const img = await this.full(ref);
    const view = inspectView(img, { size: await this.imageSize(img), driver: this.d.driver, version });
    if (opts.manifests) setManifests(view, await this.manifests(img, this.usersByImage()));
    return view;
  }

  /** Container IDs by the image ID they were created from. */
  private usersByImage(): Map<string, string[]> {
    const users = new Map<string, string[]>();
    for (const u of this.d.containers.imageUsers()) users.set(u.image, [...(users.get(u.image) ?? []), u.id]);
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
        for (const c of chain) total += await this.layerSize(c, 0);
        return total;
      },
      containersOf: (imageId) => users.get(imageId) ?? [],
    });
  }

  async history(ref: string): Promise<unknown[]> {
    const img = await this.full(ref);
    const byId = new Map((await this.d.images.list()).map((i) => [i.id, i]));
    const chain = chainIds(img.config.rootfs?.diff_ids ?? []);
    const sizes = await Promise.all(chain.map((c, i) => this.layerSize(c, Number(img.manifest.layers[i]?.size ?? 0))));
    return historyView(img, byId, sizes);
  }

  /** The image with all its names and records (resolve() gives only the record it matched). */
  private async full(ref: string): Promise<LocalImage> {
    const img = await this.d.images.resolve(ref);
    return (await this.d.images.list()).find((i) => i.id === img.id) ?? img;
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
      const img = await this.full(source);
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

  // ---- remove ----------------------------------------------------------------------------------

  async remove(ref: string, opts: { force: boolean; noprune: boolean }): Promise<ImageDeleteItem[]> {
    return this.lock.run('images', () => this.removeLocked(ref, opts.force, !opts.noprune));
  }

  private async removeLocked(ref: string, force: boolean, prune: boolean): Promise<ImageDeleteItem[]> {
    const img = await this.full(ref);
    const out: ImageDeleteItem[] = [];
    const users = this.d.containers.imageUsers();
    let quiet = false;
    if (!isImageIdPrefix(img.id, ref)) {
      if (!force && isSingleReference(img.names)) {
        const user = users.find((u) => u.image === img.id);
        if (user)
          throw conflict(
            `conflict: unable to remove repository reference ${JSON.stringify(ref)} (must force) - container ${short(user.id)} is using its referenced image ${short(img.id)}`,
          );
      }
      const parsed = parseReference(ref);
      const name = referenceString(parsed);
      await this.untag(img, name, out);
      // Removing the last tag of a repository takes its digest references along.
      if (!parsed.digest) {
        const repo = `${parsed.domain}/${parsed.path}`;
        const rest = img.names.map((n) => parseReference(n, { defaultTag: false })).filter((r) => `${r.domain}/${r.path}` === repo);
        if (!rest.some((r) => !r.digest)) for (const r of rest) await this.untag(img, referenceString(r), out);
      }
      if (img.names.length) return out;
      quiet = true;
    } else if (img.names.length && isSingleReference(img.names)) {
      this.checkConflicts(img, users, { hard: true, activeReference: false, stopped: !force }, await this.d.images.list());
      for (const n of [...img.names]) await this.untag(img, n, out);
    }
    await this.deleteHelper(img, out, force, prune, quiet);
    await this.d.images.list();
    return out;
  }

  /** Removes one name; an image losing its last name keeps a dangling record until it is deleted. */
  private async untag(img: LocalImage, name: string, out: ImageDeleteItem[]): Promise<void> {
    if (!img.names.includes(name)) return;
    if (img.names.length === 1) await keepAsDangling(this.client, img);
    try {
      await this.client.images.delete(name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    img.names = img.names.filter((n) => n !== name);
    img.records = img.records.filter((r) => r.name !== name);
    if (!img.records.length)
      img.records.push({ name: `moby-dangling@${img.record.target.digest}`, labels: img.record.labels, target: img.record.target });
    out.push({ Untagged: familiarString(parseReference(name)) });
    publishImageEvent(this.d.events, 'untag', img.id, img.id, img.config.config?.Labels);
  }

  private children(id: string, all: LocalImage[]): LocalImage[] {
    return all.filter((i) => i.id !== id && parentId(i) === id);
  }

  private checkConflicts(
    img: LocalImage,
    users: Array<{ id: string; image: string; running: boolean }>,
    mask: { hard: boolean; activeReference: boolean; stopped: boolean },
    all?: LocalImage[],
  ): void {
    if (mask.hard && all && this.children(img.id, all).length)
      throw new DeleteConflict(img.id, true, false, 'image has dependent child images');
    const running = users.find((u) => u.image === img.id && u.running);
    if (mask.hard && running) throw new DeleteConflict(img.id, true, true, `image is being used by running container ${short(running.id)}`);
    if (mask.activeReference && img.names.length)
      throw new DeleteConflict(img.id, false, false, 'image is referenced in multiple repositories');
    const stopped = users.find((u) => u.image === img.id && !u.running);
    if (mask.stopped && stopped)
      throw new DeleteConflict(img.id, false, true, `image is being used by stopped container ${short(stopped.id)}`);
  }

  private async deleteHelper(img: LocalImage, out: ImageDeleteItem[], force: boolean, prune: boolean, quiet: boolean): Promise<void> {
    const all = await this.d.images.list();
    const users = this.d.containers.imageUsers();
    try {
      this.checkConflicts(img, users, { hard: true, activeReference: !force, stopped: !force }, all);
    } catch (err) {
      const dangling = !img.names.length && !this.children(img.id, all).length;
      if (err instanceof DeleteConflict && quiet && (!dangling || err.used)) return;
      throw err;
    }
    const parent = parentId(img);
    for (const n of [...img.names]) await this.untag(img, n, out);
    const { deletedChains } = await this.purge([img]);
    out.push({ Deleted: img.id }, ...deletedChains.map((c) => ({ Deleted: c })));
    publishImageEvent(this.d.events, 'delete', img.id, img.id);
    if (!prune || !parent) return;
    const p = (await this.d.images.list()).find((i) => i.id === parent);
    if (p && !p.names.length) await this.deleteHelper(p, out, false, true, true);
  }

  /**
   * Deletes the images' records and lets containerd's GC take what nothing references any more
   * (blobs, layer snapshots, and the init layers of chains no image keeps). Returns the layer
   * chains that went, and how many content bytes were freed.
   */
  private async purge(victims: LocalImage[]): Promise<{ deletedChains: string[]; reclaimed: number }> {
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
        await this.client.images.delete(r.name).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
      }
    }
    await this.collectGarbage();
    const deletedChains: string[] = [];
    for (const c of chains) {
      try {
        await this.client.snapshots.stat(c, { snapshotter: this.d.snapshotter });
      } catch (err) {
        if (isNotFound(err)) {
          deletedChains.push(c);
          this.layerUsage.delete(c);
        }
      }
    }
    let reclaimed = 0;
    for (const [digest, size] of blobs) {
      try {
        await this.client.contentInfo(digest);
      } catch (err) {
        if (isNotFound(err)) reclaimed += size;
      }
    }
    return { deletedChains, reclaimed };
  }

  /** One synchronous containerd GC pass (a throwaway lease deleted with sync). */
  private async collectGarbage(): Promise<void> {
    const lease = await this.client.leases.create({ expireMs: 60_000 });
    await this.client.leases.delete(lease.id, { sync: true });
  }

  /** Removes init layers of chains that no image uses and no container sits on any more. */
  async sweepInitLayers(): Promise<number> {
    return this.lock.run('images', async () => {
      const inits = await this.client.snapshots.list([], { snapshotter: this.d.snapshotter });
      const chains = new Set((await this.d.images.list()).map((i) => i.chainId));
      let removed = 0;
      for (const s of inits) {
        const m = INIT_NAME.exec(s.name);
        if (!m || chains.has(`sha256:${m[1]}`)) continue;
        if (await this.d.rootfs.removeInit(`sha256:${m[1]}`).catch(() => false)) removed++; // Counted only when removed; an init layer still in use by a container stays.
      }
      if (removed) await this.collectGarbage();
      return removed;
    });
  }

  // ---- prune -----------------------------------------------------------------------------------

  async prune(filters: Map<string, string[]>): Promise<{ ImagesDeleted: ImageDeleteItem[] | null; SpaceReclaimed: number }> {
    checkFilterNames(filters, ['dangling', 'until', 'label', 'label!']);
    const danglingOnly = lastBoolFilter('dangling', filters.get('dangling')) ?? true;
    const until = filters.get('until')?.length ? Math.min(...filters.get('until')!.map(parseTimeFilter)) : undefined;
    const labels = filters.get('label') ?? [];
    const notLabels = filters.get('label!') ?? [];
    return this.lock.run('images', async () => {
      const all = await this.d.images.list();
      const used = new Set(this.d.containers.imageUsers().map((u) => u.image));
      let victims = all.filter((img) => {
        if (used.has(img.id)) return false;
        if (danglingOnly && img.names.length) return false;
        if (until !== undefined && createdSeconds(img) >= until) return false;
        const l = img.config.config?.Labels;
        if (!labels.every((x) => labelMatches(l, x))) return false;
        if (notLabels.some((x) => labelMatches(l, x))) return false;
        return true;
      });
      // A parent goes only together with all its children (prune -a removes a committed image and
      // the image it came from, as dockerd does); one with a child that stays, stays too.
      for (let changed = true; changed;) {
        const ids = new Set(victims.map((v) => v.id));
        const kept = victims.filter((v) => this.children(v.id, all).every((c) => ids.has(c.id)));
        changed = kept.length !== victims.length;
        victims = kept;
      }
      const deleted: ImageDeleteItem[] = [];
      if (!victims.length) return { ImagesDeleted: null, SpaceReclaimed: 0 };
      for (const v of victims) for (const n of [...v.names]) deleted.push({ Untagged: familiarString(parseReference(n)) });
      const { deletedChains, reclaimed } = await this.purge(victims);
      for (const v of victims) deleted.push({ Deleted: v.id });
      for (const c of deletedChains) deleted.push({ Deleted: c });
      await this.d.images.list();
      for (const v of victims) {
        for (const _ of v.names) publishImageEvent(this.d.events, 'untag', v.id, v.id, v.config.config?.Labels);
        publishImageEvent(this.d.events, 'delete', v.id, v.id);
      }
      this.d.events?.publish({ Type: 'image', Action: 'prune', Actor: { ID: '', Attributes: { reclaimed: String(reclaimed) } } });
      return { ImagesDeleted: deleted, SpaceReclaimed: reclaimed };
    });
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
    this.d.containerEvent?.(this.d.containers.snapshotOf(opts.container).id, 'commit', {
      comment: opts.comment ?? '',
      imageID: id,
      imageRef,
    });
    return { Id: id };
  }

  async prepareExport(ref: string): Promise<(out: Writable) => Promise<void>> {
    const c = this.d.containers.snapshotOf(ref);
    return (out) => writeContainerExport(this.client, c, this.d.tmpDir, out);
  }
}
