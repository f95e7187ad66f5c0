// `cachefrom`: images (local; pull them first) whose history serves as cache, as the classic
// builder's image cache does it. A step hits when the parent's history and layers are a prefix of
// the candidate's and the candidate's next history entry was made by the same instruction; the
// step's image is then made from the parent, the candidate's layer for that entry (if any), and
// the config this build computed — no command runs.
import type { Descriptor } from '../supervisor/types.ts';
import type { StepImage } from './image-writer.ts';

export interface CacheFromHit {
  /** The candidate's layer for the step, with its diff ID; absent for an empty-layer entry. */
  layer?: { desc: Descriptor; diffId: string };
}

type History = NonNullable<StepImage['config']['history']>;

const same = (a: History[number], b: History[number]) => (a.created_by ?? '') === (b.created_by ?? '') && !!a.empty_layer === !!b.empty_layer;

export function matchCacheFrom(parent: StepImage, createdBy: string, candidates: readonly StepImage[]): CacheFromHit | undefined {
  const ph = parent.config.history ?? [];
  const pd = parent.config.rootfs?.diff_ids ?? [];
  for (const c of candidates) {
    const ch = c.config.history ?? [];
    const cd = c.config.rootfs?.diff_ids ?? [];
    if (ch.length <= ph.length || cd.length < pd.length) continue;
    if (!ph.every((h, i) => same(h, ch[i]!))) continue;
    if (!pd.every((d, i) => d === cd[i])) continue;
    const next = ch[ph.length]!;
    if ((next.created_by ?? '') !== createdBy) continue;
    if (next.empty_layer) return {};
    const desc = c.layers[pd.length];
    const diffId = cd[pd.length];
    if (!desc || !diffId) continue;
    return { layer: { desc, diffId } };
  }
  return undefined;
}
