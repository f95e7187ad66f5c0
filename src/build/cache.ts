// The layer cache of the classic builder: a step's key is its parent image ID, its history text
// (the instruction with resolved arguments, and for RUN the build-args it sees, as dockerd compares
// them) and, for COPY/ADD, the checksum of the copied content. The key maps to the image the step
// produced; rows live in SQLite (store/build-cache.ts) so the cache survives a restart, and a row
// whose image was removed is dropped when met.
import { createHash } from 'node:crypto';
import type { BuildCacheTable, BuildCacheRow } from '../store/build-cache.ts';

export function cacheKey(parentId: string, createdBy: string, contentChecksum = ''): string {
  return createHash('sha256').update(JSON.stringify([parentId, createdBy, contentChecksum])).digest('hex');
}

export type CacheKind = 'regular' | 'source.local' | 'internal';

export class StepCache {
  constructor(private readonly table: BuildCacheTable, private readonly now: () => number = Date.now) {}

  /** The cached image ID for the key, if the image still exists (checked with `exists`). */
  async lookup(key: string, exists: (imageId: string) => Promise<boolean>): Promise<string | undefined> {
    const row = this.table.get(key);
    if (!row) return undefined;
    if (!(await exists(row.imageId))) {
      this.table.delete([key]); // its image was removed: the row can never hit again
      return undefined;
    }
    this.table.touch(key, this.now());
    return row.imageId;
  }

  store(key: string, row: Omit<BuildCacheRow, 'key' | 'created' | 'lastUsed' | 'usage'>): void {
    const t = this.now();
    this.table.put({ key, ...row, created: t, lastUsed: t, usage: 0 });
  }

  rows(): BuildCacheRow[] {
    return this.table.list();
  }

  drop(keys: readonly string[]): void {
    this.table.delete(keys);
  }
}
