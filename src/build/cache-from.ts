// `cachefrom`: as dockerd's classic builder (its image cache built from the named images), the
// images named are then the only cache sources:
// - a hit of the local layer cache counts only when it is an ancestor of one of them (by Parent);
// - otherwise a source whose history and layers continue the parent's (every history entry equal:
//   time, author, comment, instruction, empty-layer flag) and whose next entry was made by the
//   same instruction is a hit: when that entry is its last, the step's image IS the source image;
//   else an image is restored from the parent, the source's entry (its time kept) and its layer
//   for that entry, with the config this build computed — and the build then sticks to that
//   source. No command runs on a hit.
// Missing images are skipped (dockerd logs them and goes on).
import type { Descriptor } from '../supervisor/types.ts';
import type { StepImage } from './image-writer.ts';

type History = NonNullable<StepImage['config']['history']>;
export type HistoryEntry = History[number] & { author?: string };

export type CacheFromHit =
  /** The source image itself (the step is its last history entry). */
  | { kind: 'image'; source: StepImage }
  /** An image to restore: the parent plus `entry` and its layer (absent for an empty-layer entry). */
  | { kind: 'restore'; source: StepImage; entry: HistoryEntry; layer?: { desc: Descriptor; diffId: string } };

const sameEntry = (a: HistoryEntry, b: HistoryEntry) =>
  (a.created ?? '') === (b.created ?? '') &&
  (a.created_by ?? '') === (b.created_by ?? '') &&
  (a.author ?? '') === (b.author ?? '') &&
  (a.comment ?? '') === (b.comment ?? '') &&
  !!a.empty_layer === !!b.empty_layer;

/** dockerd's isValidParent: the parent's history and layers are a strict prefix of the source's. */
function continues(source: StepImage, parent: StepImage): boolean {
  const sh = (source.config.history ?? []) as HistoryEntry[];
  const ph = (parent.config.history ?? []) as HistoryEntry[];
  const sd = source.config.rootfs?.diff_ids ?? [];
  const pd = parent.config.rootfs?.diff_ids ?? [];
  if (!sh.length) return false;
  if (!parent.id || (!ph.length && !pd.length)) return true;
  if (ph.length >= sh.length || pd.length > sd.length) return false;
  return ph.every((h, i) => sameEntry(h, sh[i]!)) && pd.every((d, i) => d === sd[i]);
}

/** The history-based match of one step among `sources` (in order; the first that fits wins). */
export function matchCacheFrom(parent: StepImage, createdBy: string, sources: readonly StepImage[]): CacheFromHit | undefined {
  const index = parent.id ? (parent.config.history ?? []).length : 0;
  for (const source of sources) {
    if (!continues(source, parent)) continue;
    const history = (source.config.history ?? []) as HistoryEntry[];
    const entry = history[index];
    if (!entry || (entry.created_by ?? '') !== createdBy) continue;
    if (index === history.length - 1) return { kind: 'image', source };
    if (entry.empty_layer) return { kind: 'restore', source, entry };
    // The layer of entry `index`: one per non-empty entry before it.
    const layerIndex = history.slice(0, index).filter((h) => !h.empty_layer).length;
    const diffId = source.config.rootfs?.diff_ids?.[layerIndex];
    const desc = source.layers[layerIndex];
    if (!diffId || !desc) continue;
    return { kind: 'restore', source, entry, layer: { desc, diffId } };
  }
  return undefined;
}

/**
 * Whether a local cache hit may be used with these sources: it must be a (strict) ancestor of one
 * of them. `parentOf` gives an image's Parent ('' at the top).
 */
export async function isAncestorOfSource(hit: string, sources: readonly StepImage[], parentOf: (id: string) => Promise<string>): Promise<boolean> {
  for (const s of sources) {
    const seen = new Set<string>([s.id]);
    for (let id = await parentOf(s.id); id && !seen.has(id); id = await parentOf(id)) {
      if (id === hit) return true;
      seen.add(id);
    }
  }
  return false;
}
