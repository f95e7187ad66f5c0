// Container records: the daemon's JSON record per container, with id, name and creation time in
// indexed columns. Names are unique; the column holds the name WITHOUT the leading '/' (the API's
// "/web" is stored as "web"), and lookups accept either form. The JSON keeps Name as the caller gave it.

import { conflict, invalidParameter, notFound } from '../errors.ts';
import type { EngineDatabase } from './database.ts';

export interface ContainerRecordBase {
  Id: string;
  Name: string;
}

export interface ContainerStoreOptions<T> {
  /**
   * Creation time (ms since epoch) for the created column. Default: the record's Created field when
   * it is an ISO date string or a number; otherwise the time of the first put.
   */
  createdOf?: (rec: T) => number | undefined;
}

/** 'web' for '/web' or 'web'. */
export function bareName(name: string): string {
  return name.startsWith('/') ? name.slice(1) : name;
}

/** dockerd's wording for a name held by another container. */
export function nameInUse(name: string, holderId: string) {
  return conflict(
    `Conflict. The container name "/${bareName(name)}" is already in use by container "${holderId}". ` +
      'You have to remove (or rename) that container to be able to reuse that name.',
  );
}

function defaultCreated(rec: unknown): number | undefined {
  const created = (rec as { Created?: unknown }).Created;
  if (typeof created === 'number' && Number.isFinite(created)) return created;
  if (typeof created === 'string') {
    const ms = Date.parse(created);
    if (Number.isFinite(ms)) return ms;
  }
  return undefined;
}

/**
 * The smallest string greater than every string that starts with prefix (by code point, which is
 * SQLite's BINARY order for UTF-8), or undefined if there is none.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = Array.from(prefix, (c) => c.codePointAt(0)!);
  while (cps.length) {
    const last = cps.pop()!;
    if (last < 0x10ffff) {
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1; // skip the surrogate range
      return String.fromCodePoint(...cps, next);
    }
  }
  return undefined;
}

const SQL = {
  byId: 'SELECT data FROM containers WHERE id = ?',
  byName: 'SELECT data FROM containers WHERE name = ?',
  idByName: 'SELECT id FROM containers WHERE name = ?',
  upsert:
    'INSERT INTO containers (id, name, created, data) VALUES (?1, ?2, COALESCE(?3, ?5), ?4) ' +
    'ON CONFLICT (id) DO UPDATE SET name = excluded.name, data = excluded.data, ' +
    'created = COALESCE(?3, containers.created)',
  prefixRange: 'SELECT data FROM containers WHERE id >= ? AND id < ? ORDER BY id',
  prefixOpen: 'SELECT data FROM containers WHERE id >= ? ORDER BY id',
  list: 'SELECT data FROM containers ORDER BY created DESC, id',
  rename: 'UPDATE containers SET name = ?, data = ? WHERE id = ?',
  delete: 'DELETE FROM containers WHERE id = ?',
  count: 'SELECT count(*) AS n FROM containers',
} as const;

export class ContainerStore<T extends ContainerRecordBase> {
  private readonly db: EngineDatabase;
  private readonly createdOf: (rec: T) => number | undefined;

  constructor(db: EngineDatabase, opts: ContainerStoreOptions<T> = {}) {
    this.db = db;
    this.createdOf = opts.createdOf ?? defaultCreated;
  }

  /** Inserts or replaces the record with rec.Id. Throws conflict if another container has its name. */
  put(rec: T): void {
    const name = bareName(rec.Name);
    if (!rec.Id) throw invalidParameter('container record without an Id');
    if (!name) throw invalidParameter('container record without a Name');
    const created = this.createdOf(rec);
    const data = JSON.stringify(rec);
    this.db.transaction(() => {
      this.assertNameFree(name, rec.Id);
      this.db.statement(SQL.upsert).run(rec.Id, name, created ?? null, data, Date.now());
    });
  }

  get(id: string): T | undefined {
    const row = this.db.statement(SQL.byId).get(id) as { data: string } | undefined;
    return row ? (JSON.parse(row.data) as T) : undefined;
  }

  /** By name, with or without the leading '/'. */
  getByName(name: string): T | undefined {
    const row = this.db.statement(SQL.byName).get(bareName(name)) as { data: string } | undefined;
    return row ? (JSON.parse(row.data) as T) : undefined;
  }

  /** Records whose ID starts with prefix, in ID order (a range scan of the primary-key index). */
  findByPrefix(prefix: string): T[] {
    if (!prefix) return [];
    const upper = prefixUpperBound(prefix);
    const rows = (
      upper === undefined
        ? this.db.statement(SQL.prefixOpen).all(prefix)
        : this.db.statement(SQL.prefixRange).all(prefix, upper)
    ) as Array<{ data: string }>;
    return rows.map((r) => JSON.parse(r.data) as T);
  }

  /** All records, newest first. */
  list(): T[] {
    const rows = this.db.statement(SQL.list).all() as Array<{ data: string }>;
    return rows.map((r) => JSON.parse(r.data) as T);
  }

  /** Removes the record; false if there was none. */
  delete(id: string): boolean {
    return Number(this.db.statement(SQL.delete).run(id).changes) > 0;
  }

  /**
   * Atomically gives container id the name newName (with or without '/'); the record's Name keeps
   * the caller's convention (leading '/' or not) of the old Name. Returns the updated record.
   */
  rename(id: string, newName: string): T {
    const name = bareName(newName);
    if (!name) throw invalidParameter('container name cannot be empty');
    return this.db.transaction(() => {
      const row = this.db.statement(SQL.byId).get(id) as { data: string } | undefined;
      if (!row) throw notFound(`No such container: ${id}`);
      this.assertNameFree(name, id);
      const rec = JSON.parse(row.data) as T;
      const updated = { ...rec, Name: rec.Name.startsWith('/') ? `/${name}` : name };
      this.db.statement(SQL.rename).run(name, JSON.stringify(updated), id);
      return updated;
    });
  }

  count(): number {
    return Number((this.db.statement(SQL.count).get() as { n: number }).n);
  }

  private assertNameFree(name: string, id: string): void {
    const holder = this.db.statement(SQL.idByName).get(name) as { id: string } | undefined;
    if (holder && holder.id !== id) throw nameInUse(name, holder.id);
  }
}
