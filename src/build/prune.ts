// Reclaiming the build cache: POST /build/prune (all, keep-storage, filters until / id / parent /
// type / inuse / shared / private), builder.gc's policies, and the BuildCache entries of
// /system/df. A cache entry is one cached step; dropping it removes the step's intermediate image
// when nothing else holds it (a tagged image stays an image, only its cache entry goes).
import { invalidParameter } from '../errors.ts';
import { parseTimeValue } from '../util/time.ts';
import type { BuildCacheEntry, BuildPruneOptions, BuildPruneResult } from '../types/build.ts';
import type { BuildCacheRow } from '../store/build-cache.ts';
import type { StepCache } from './cache.ts';

export interface GcPolicy {
  all: boolean;
  keepStorage: number;
  filters: Map<string, string[]>;
}

export interface PruneDeps {
  cache: StepCache;
  /** The cached image's facts, or undefined once it is gone. */
  image(id: string): Promise<{ named: boolean } | undefined>;
  /** Removes an unnamed intermediate image; false when something still holds it. */
  removeImage(id: string): Promise<boolean>;
  building(): boolean;
}

const FILTERS = new Set(['until', 'id', 'parent', 'type', 'inuse', 'shared', 'private', 'description']);

function boolFilter(values: string[] | undefined, name: string): boolean | undefined {
  if (!values?.length) return undefined;
  const v = values.at(-1)!.toLowerCase();
  if (v === '' || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalidParameter(`invalid filter '${name}=${values.at(-1)}': expected a boolean`);
}

function untilMs(v: string): number {
  const ns = parseTimeValue(v);
  if (ns === undefined) throw invalidParameter(`invalid filter 'until=${v}': not a timestamp or duration`);
  return Number(ns / 1_000_000n);
}

interface Entry {
  row: BuildCacheRow;
  named: boolean;
  inUse: boolean;
}

async function entries(d: PruneDeps): Promise<Entry[]> {
  const out: Entry[] = [];
  const gone: string[] = [];
  const building = d.building();
  for (const row of d.cache.rows()) {
    const img = await d.image(row.imageId);
    if (!img) gone.push(row.key);
    else out.push({ row, named: img.named, inUse: building && Date.now() - row.lastUsed < 60_000 });
  }
  d.cache.drop(gone); // rows of images removed by hand can never hit again
  return out;
}

export async function cacheUsage(d: PruneDeps): Promise<BuildCacheEntry[]> {
  const list = await entries(d);
  const byImage = new Map(list.map((e) => [e.row.imageId, e.row.key]));
  return list.map(({ row, named, inUse }) => {
    const parent = byImage.get(row.parentId);
    return {
      ID: row.key.slice(0, 25),
      ...(parent ? { Parent: parent.slice(0, 25), Parents: [parent.slice(0, 25)] } : {}),
      Type: row.kind,
      Description: row.createdBy,
      InUse: inUse,
      Shared: named,
      Size: row.size,
      CreatedAt: new Date(row.created).toISOString(),
      LastUsedAt: new Date(row.lastUsed).toISOString(),
      UsageCount: row.usage,
    };
  });
}

export async function pruneCache(d: PruneDeps, opts: BuildPruneOptions): Promise<BuildPruneResult> {
  for (const k of opts.filters.keys()) if (!FILTERS.has(k)) throw invalidParameter(`invalid filter '${k}'`);
  const f = opts.filters;
  const until = f.get('until')?.length ? Math.min(...f.get('until')!.map(untilMs)) : undefined;
  const ids = f.get('id') ?? [];
  const parents = f.get('parent') ?? [];
  const types = f.get('type') ?? [];
  const inuse = boolFilter(f.get('inuse'), 'inuse');
  const shared = boolFilter(f.get('shared'), 'shared');
  const priv = boolFilter(f.get('private'), 'private');
  const all = await entries(d);
  const matches = (e: Entry) => {
    if (e.inUse && inuse !== true) return false; // a running build's cache is never taken
    if (inuse === false && e.inUse) return false;
    if (!opts.all && e.named && shared !== true) return false; // without all: only what no image name holds
    if (until !== undefined && e.row.lastUsed >= until) return false;
    if (ids.length && !ids.some((p) => e.row.key.startsWith(p))) return false;
    if (parents.length && !parents.some((p) => e.row.parentId.replace(/^sha256:/, '').startsWith(p.replace(/^sha256:/, '')))) return false;
    if (types.length && !types.includes(e.row.kind)) return false;
    if (shared !== undefined && e.named !== shared) return false;
    if (priv !== undefined && e.named === priv) return false;
    return true;
  };
  // Least recently used first; keep-storage stops once what is left fits.
  let total = all.reduce((n, e) => n + e.row.size, 0);
  const victims: Entry[] = [];
  for (const e of [...all].sort((a, b) => a.row.lastUsed - b.row.lastUsed || b.row.created - a.row.created)) {
    if (opts.keepStorage > 0 && total <= opts.keepStorage) break;
    if (!matches(e)) continue;
    victims.push(e);
    total -= e.row.size;
  }
  // Children before parents: an image with children cannot go first.
  victims.sort((a, b) => b.row.created - a.row.created);
  let reclaimed = 0;
  const deleted: string[] = [];
  for (const v of victims) {
    d.cache.drop([v.row.key]);
    deleted.push(v.row.key.slice(0, 25));
    if (!v.named && (await d.removeImage(v.row.imageId))) reclaimed += v.row.size;
  }
  // dockerd answers null, not [], when nothing was deleted.
  return { CachesDeleted: deleted.length ? deleted : null, SpaceReclaimed: reclaimed };
}
