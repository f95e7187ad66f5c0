// Actor attributes as dockerd builds them, so `docker events` output and label/image filters look
// the same: containers carry their labels, `image` (as the user named it) and `name`; images their
// labels and `name`.
import type { EngineEvent } from '../types/events.ts';
import { actorWithText } from '../store/events.ts';
import { knownJsonText, rememberJsonText } from '../util/json-sliced.ts';

export interface ContainerLike {
  Id: string;
  Name: string;
  Config: { Image?: string; Labels?: Record<string, string> | null };
}

/** Extra attributes first, then labels, image and name on top (dockerd's order of writes). */
export function containerAttributes(rec: ContainerLike, extra: Record<string, string> = {}): Record<string, string> {
  const attrs: Record<string, string> = { ...extra };
  copyLabels(attrs, rec.Config.Labels);
  if (rec.Config.Image) attrs.image = rec.Config.Image;
  attrs.name = rec.Name.replace(/^\/+/, '');
  return attrs;
}

export function imageAttributes(labels: Record<string, string> | null | undefined, name: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  copyLabels(attrs, labels);
  if (name) attrs.name = name;
  return attrs;
}

/**
 * Copies labels into attrs: a for-in loop, about twice as fast as a spread on the large objects a
 * hostile client sends (200 000 labels). A "__proto__" label is defined, never assigned, so it
 * stays an attribute instead of replacing the prototype.
 */
function copyLabels(attrs: Record<string, string>, labels: Record<string, string> | null | undefined): void {
  if (!labels) return;
  for (const k in labels) {
    if (k === '__proto__') Object.defineProperty(attrs, k, { value: labels[k], enumerable: true, writable: true, configurable: true });
    else attrs[k] = labels[k]!;
  }
}

/** The container's Actor: its attributes as containerAttributes builds them (see labelledActor). */
export function containerActor(rec: ContainerLike, extra: Record<string, string> = {}): EngineEvent['Actor'] {
  const tail: Record<string, string> = {};
  if (rec.Config.Image) tail.image = rec.Config.Image;
  tail.name = rec.Name.replace(/^\/+/, '');
  return labelledActor(rec.Id, extra, rec.Config.Labels, tail, () => containerAttributes(rec, extra));
}

/** An image's Actor: its attributes as imageAttributes builds them (see labelledActor). */
export function imageActor(id: string, labels: Record<string, string> | null | undefined, name: string): EngineEvent['Actor'] {
  return labelledActor(id, {}, labels, name ? { name } : {}, () => imageAttributes(labels, name));
}

/** Labels from this many on are serialised as text instead of copied into a map. */
const TEXT_FROM_LABELS = 1000;
const INDEX_KEY = /^(0|[1-9][0-9]*)$/;

/**
 * An Actor with many labels carries its attributes as JSON text made in one pass (extra, labels,
 * tail spliced): copying 50 000 labels into a map and serialising the map for the event log held
 * the event loop ~50 ms per event. The text is exactly JSON.stringify(build()) when no key is in two
 * parts and none is an array index (an object lists those first); otherwise the map is built.
 */
function labelledActor(
  ID: string,
  extra: Record<string, string>,
  labels: Record<string, string> | null | undefined,
  tail: Record<string, string>,
  build: () => Record<string, string>,
): EngineEvent['Actor'] {
  // A container's labels never change: their text is made once (known texts: record-text.ts, or
  // kept here for frozen labels) instead of on every event (~15 ms with 50 000 labels).
  const known = labels ? knownJsonText(labels) : undefined;
  if (!labels || (known === undefined && !manyKeys(labels, TEXT_FROM_LABELS))) return { ID, Attributes: build() };
  const small = [...Object.keys(extra), ...Object.keys(tail)];
  if (small.some((k) => INDEX_KEY.test(k) || Object.hasOwn(labels, k)) || Object.keys(tail).some((k) => Object.hasOwn(extra, k))) {
    return { ID, Attributes: build() };
  }
  let labelsText = known;
  if (labelsText === undefined) {
    labelsText = JSON.stringify(labels);
    if (Object.isFrozen(labels)) rememberJsonText(labels, labelsText);
  }
  // Index keys come first in the serialised labels: the first key tells whether there is any.
  if (/^\{"(0|[1-9][0-9]*)":/.test(labelsText)) return { ID, Attributes: build() };
  const parts = [JSON.stringify(extra), labelsText, JSON.stringify(tail)].map((t) => t.slice(1, -1)).filter((t) => t !== '');
  return actorWithText(ID, `{${parts.join(',')}}`, build);
}

function manyKeys(o: object, n: number): boolean {
  let i = 0;
  for (const _k in o) if (++i >= n) return true;
  return false;
}
