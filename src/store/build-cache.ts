// The build cache table (schema step 2): one row per cached build step, keyed by the step's cache
// key. Rows survive a restart with the database; the images they point at live in containerd, so
// a reader checks the image still exists before trusting a row.
import type { EngineDatabase } from './database.ts';

export interface BuildCacheRow {
  key: string;
  imageId: string;
  parentId: string;
  createdBy: string;
  /** 'regular' (RUN: its layer), 'source.local' (COPY/ADD), 'internal' (config-only steps). */
  kind: string;
  size: number;
  /** ms since epoch */
  created: number;
  lastUsed: number;
  usage: number;
}

interface Raw {
  key: string;
  image_id: string;
  parent_id: string;
  created_by: string;
  kind: string;
  size: number;
  created: number;
  last_used: number;
  usage: number;
}

const fromRaw = (r: Raw): BuildCacheRow => ({
  key: r.key,
  imageId: r.image_id,
  parentId: r.parent_id,
  createdBy: r.created_by,
  kind: r.kind,
  size: Number(r.size),
  created: Number(r.created),
  lastUsed: Number(r.last_used),
  usage: Number(r.usage),
});

export class BuildCacheTable {
  constructor(private readonly db: EngineDatabase) {}

  get(key: string): BuildCacheRow | undefined {
    const r = this.db.statement('SELECT * FROM build_cache WHERE key = ?').get(key) as Raw | undefined;
    return r ? fromRaw(r) : undefined;
  }

  put(row: BuildCacheRow): void {
    this.db
      .statement(
        'INSERT INTO build_cache (key, image_id, parent_id, created_by, kind, size, created, last_used, usage) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ' +
          'ON CONFLICT (key) DO UPDATE SET image_id = excluded.image_id, parent_id = excluded.parent_id, created_by = excluded.created_by, ' +
          'kind = excluded.kind, size = excluded.size, last_used = excluded.last_used',
      )
      .run(row.key, row.imageId, row.parentId, row.createdBy, row.kind, row.size, row.created, row.lastUsed, row.usage);
  }

  /** Records a cache hit. */
  touch(key: string, now: number): void {
    this.db.statement('UPDATE build_cache SET last_used = ?, usage = usage + 1 WHERE key = ?').run(now, key);
  }

  delete(keys: readonly string[]): void {
    if (!keys.length) return;
    this.db.transaction(() => {
      for (const k of keys) this.db.statement('DELETE FROM build_cache WHERE key = ?').run(k);
    });
  }

  /** Every row, least recently used first. */
  list(): BuildCacheRow[] {
    return (this.db.statement('SELECT * FROM build_cache ORDER BY last_used, key').all() as unknown as Raw[]).map(fromRaw);
  }
}
