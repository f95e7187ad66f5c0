// Removing images as dockerd does (`docker rmi`, `docker image prune`): a reference is untagged
// first, conflicts with containers and child images refuse or skip the deletion, the untagged
// parents of a deleted image are pruned after it; the space itself is reclaimed by image-purge.ts.
import { checkFilterNames, labelMatches, lastBoolFilter } from '../util/filters.ts';
import type { ImageDeleteItem } from '../types/images.ts';
import { conflict, EngineError, isNotFound } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { KeyedMutex } from '../util/mutex.ts';
import type { EventPublisher } from '../events/bus.ts';
import { publishImageEvent } from '../events/image-events.ts';
import { familiarString, parseReference, referenceString, type Reference } from '../util/image-reference.ts';
import type { ContainerFacts } from './container-facts.ts';
import type { ImageStore, LocalImage } from './image-store.ts';
import { createdSeconds, parentId, parseTimeFilter } from './image-views.ts';
import { keepAsDangling } from './image-write.ts';
import type { ImagePurge } from './image-purge.ts';
import { fullImage } from './image-queries.ts';

export interface ImageRemovalDeps {
  client: SupervisorClient;
  images: ImageStore;
  containers: ContainerFacts;
  purge: ImagePurge;
  /** The image service's lock ('images'): removals, tags and sweeps run one at a time. */
  lock: KeyedMutex;
  events?: EventPublisher;
}

type ImageUser = { id: string; image: string; running: boolean };

const short = (id: string) => id.replace(/^sha256:/, '').slice(0, 12);

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

function children(id: string, all: LocalImage[]): LocalImage[] {
  return all.filter((i) => i.id !== id && parentId(i) === id);
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

function checkConflicts(
  img: LocalImage,
  users: ImageUser[],
  mask: { hard: boolean; activeReference: boolean; stopped: boolean },
  all?: LocalImage[],
): void {
  if (mask.hard && all && children(img.id, all).length) throw new DeleteConflict(img.id, true, false, 'image has dependent child images');
  const running = users.find((u) => u.image === img.id && u.running);
  if (mask.hard && running) throw new DeleteConflict(img.id, true, true, `image is being used by running container ${short(running.id)}`);
  if (mask.activeReference && img.names.length)
    throw new DeleteConflict(img.id, false, false, 'image is referenced in multiple repositories');
  const stopped = users.find((u) => u.image === img.id && !u.running);
  if (mask.stopped && stopped)
    throw new DeleteConflict(img.id, false, true, `image is being used by stopped container ${short(stopped.id)}`);
}

export class ImageRemoval {
  constructor(private readonly d: ImageRemovalDeps) {}

  async remove(ref: string, opts: { force: boolean; noprune: boolean }): Promise<ImageDeleteItem[]> {
    return this.d.lock.run('images', () => this.removeLocked(ref, opts.force, !opts.noprune));
  }

  private async removeLocked(ref: string, force: boolean, prune: boolean): Promise<ImageDeleteItem[]> {
    const img = await fullImage(this.d.images, ref);
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
      checkConflicts(img, users, { hard: true, activeReference: false, stopped: !force }, await this.d.images.list());
      for (const n of [...img.names]) await this.untag(img, n, out);
    }
    await this.deleteHelper(img, out, force, prune, quiet);
    await this.d.images.list();
    return out;
  }

  /** Removes one name; an image losing its last name keeps a dangling record until it is deleted. */
  private async untag(img: LocalImage, name: string, out: ImageDeleteItem[]): Promise<void> {
    if (!img.names.includes(name)) return;
    if (img.names.length === 1) await keepAsDangling(this.d.client, img);
    try {
      await this.d.client.images.delete(name);
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

  private async deleteHelper(img: LocalImage, out: ImageDeleteItem[], force: boolean, prune: boolean, quiet: boolean): Promise<void> {
    const all = await this.d.images.list();
    const users = this.d.containers.imageUsers();
    try {
      checkConflicts(img, users, { hard: true, activeReference: !force, stopped: !force }, all);
    } catch (err) {
      const dangling = !img.names.length && !children(img.id, all).length;
      if (err instanceof DeleteConflict && quiet && (!dangling || err.used)) return;
      throw err;
    }
    const parent = parentId(img);
    for (const n of [...img.names]) await this.untag(img, n, out);
    if (force) await this.d.containers.keepLayersOf(img.id);
    const { deletedChains } = await this.d.purge.purge([img]);
    out.push({ Deleted: img.id }, ...deletedChains.map((c) => ({ Deleted: c })));
    publishImageEvent(this.d.events, 'delete', img.id, img.id);
    if (!prune || !parent) return;
    const p = (await this.d.images.list()).find((i) => i.id === parent);
    if (p && !p.names.length) await this.deleteHelper(p, out, false, true, true);
  }

  async prune(filters: Map<string, string[]>): Promise<{ ImagesDeleted: ImageDeleteItem[] | null; SpaceReclaimed: number }> {
    checkFilterNames(filters, ['dangling', 'until', 'label', 'label!']);
    const danglingOnly = lastBoolFilter('dangling', filters.get('dangling')) ?? true;
    const until = filters.get('until')?.length ? Math.min(...filters.get('until')!.map(parseTimeFilter)) : undefined;
    const labels = filters.get('label') ?? [];
    const notLabels = filters.get('label!') ?? [];
    return this.d.lock.run('images', async () => {
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
        const kept = victims.filter((v) => children(v.id, all).every((c) => ids.has(c.id)));
        changed = kept.length !== victims.length;
        victims = kept;
      }
      const deleted: ImageDeleteItem[] = [];
      if (!victims.length) return { ImagesDeleted: null, SpaceReclaimed: 0 };
      for (const v of victims) for (const n of [...v.names]) deleted.push({ Untagged: familiarString(parseReference(n)) });
      const { deletedChains, reclaimed } = await this.d.purge.purge(victims);
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
}
