// Container records: the daemon's JSON record per container, with id, name and creation time in
// indexed columns. Names are unique; the column holds the name WITHOUT the leading '/' (the API's
// "/web" is stored as "web"), and lookups accept either form. The JSON keeps Name as the caller gave it.

import { conflict, invalidParameter, notFound } from '../errors.ts';
import type { EngineDatabase } from './database.ts';
import { deepFreeze, type Snapshot } from './snapshot.ts';

export { thaw, type Snapshot, type Thawed } from './snapshot.ts';

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
  all: 'SELECT id, created, data FROM containers',
  one: 'SELECT created, data FROM containers WHERE id = ?',
  idByName: 'SELECT id FROM containers WHERE name = ?',
  upsert:
    'INSERT INTO containers (id, name, created, data) VALUES (?1, ?2, COALESCE(?3, ?5), ?4) ' +
    'ON CONFLICT (id) DO UPDATE SET name = excluded.name, data = excluded.data, ' +
    'created = COALESCE(?3, containers.created) RETURNING created',
  prefixRange: 'SELECT id FROM containers WHERE id >= ? AND id < ? ORDER BY id',
  prefixOpen: 'SELECT id FROM containers WHERE id >= ? ORDER BY id',
  rename: 'UPDATE containers SET name = ?, data = ? WHERE id = ?',
  delete: 'DELETE FROM containers WHERE id = ?',
  count: 'SELECT count(*) AS n FROM containers',
} as const;

/** A cached row: written rows keep only their JSON until read (after start-up the daemon reads its own copies). */
interface Cached<T> {
  rec?: Snapshot<T>;
  data?: string;
  created: number;
}

function snapshotOf<T>(c: Cached<T>): Snapshot<T> {
  if (!c.rec) {
    c.rec = deepFreeze(JSON.parse(c.data!) as T);
    c.data = undefined;
  }
  return c.rec;
}

/**
 * Reads are served from an in-memory copy of the table (loaded on first read, updated by every write
 * through this store), because parsing 500 JSON records per `docker ps` costs ~10 ms. Records handed out are therefore frozen snapshots: to change one, build a new
 * object (or thaw() a copy) and put() it. After a rollback the rows this store wrote in the undone
 * transaction are re-read. This assumes the daemon is engine.db's only writer.
 */
export class ContainerStore<T extends ContainerRecordBase> {
  private readonly db: EngineDatabase;
  private readonly createdOf: (rec: T) => number | undefined;
  private cache: Map<string, Cached<T>> | undefined;
  private ordered: Snapshot<T>[] | undefined;
  /** IDs written by the transaction in progress: what a rollback may have undone. */
  private readonly touched = new Set<string>();

  constructor(db: EngineDatabase, opts: ContainerStoreOptions<T> = {}) {
    this.db = db;
    this.createdOf = opts.createdOf ?? defaultCreated;
    db.onRollback(() => this.resync());
  }

  /**
   * Inserts or replaces the record with rec.Id. Throws conflict if another container has its name.
   * `text`, when given, is JSON.stringify(rec) made by the caller (parts of it reused).
   */
  put(rec: T | Snapshot<T>, text?: string): void {
    const plain = rec as T;
    const name = bareName(plain.Name);
    if (!plain.Id) throw invalidParameter('container record without an Id');
    if (!name) throw invalidParameter('container record without a Name');
    const created = this.createdOf(plain);
    const data = text ?? JSON.stringify(plain);
    this.settle();
    this.db.transaction(() => {
      this.assertNameFree(name, plain.Id);
      const row = this.db.statement(SQL.upsert).get(plain.Id, name, created ?? null, data, Date.now()) as {
        created: number;
      };
      this.remember(plain.Id, data, Number(row.created));
    });
  }

  get(id: string): Snapshot<T> | undefined {
    const c = this.load().get(id);
    return c && snapshotOf(c);
  }

  /** By name, with or without the leading '/'. */
  getByName(name: string): Snapshot<T> | undefined {
    const id = this.idByName(name);
    return id === undefined ? undefined : this.get(id);
  }

  /** The ID holding a name (with or without the leading '/'): the name column's index, no record parsed. */
  idByName(name: string): string | undefined {
    const row = this.db.statement(SQL.idByName).get(bareName(name)) as { id: string } | undefined;
    return row?.id;
  }

  /** Records whose ID starts with prefix, in ID order (a range scan of the primary-key index). */
  findByPrefix(prefix: string): Snapshot<T>[] {
    const cache = this.load();
    return this.idsByPrefix(prefix).flatMap((id) => {
      const c = cache.get(id);
      return c ? [snapshotOf(c)] : [];
    });
  }

  /** IDs that start with prefix, in ID order (no record parsed). */
  idsByPrefix(prefix: string): string[] {
    if (!prefix) return [];
    const upper = prefixUpperBound(prefix);
    const rows = (
      upper === undefined ? this.db.statement(SQL.prefixOpen).all(prefix) : this.db.statement(SQL.prefixRange).all(prefix, upper)
    ) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  /** All records, newest first (ties by ID). */
  list(): Snapshot<T>[] {
    if (!this.ordered) {
      const entries = [...this.load().entries()];
      entries.sort(([idA, a], [idB, b]) => b.created - a.created || (idA < idB ? -1 : idA > idB ? 1 : 0));
      this.ordered = entries.map(([, c]) => snapshotOf(c));
    }
    return this.ordered.slice();
  }

  /** Removes the record; false if there was none. */
  delete(id: string): boolean {
    this.settle();
    const removed = Number(this.db.statement(SQL.delete).run(id).changes) > 0;
    if (removed) {
      this.cache?.delete(id);
      this.ordered = undefined;
      if (this.db.inTransaction) this.touched.add(id);
    }
    return removed;
  }

  /**
   * Atomically gives container id the name newName (with or without '/'); the record's Name keeps
   * the caller's convention (leading '/' or not) of the old Name. Returns the updated record.
   */
  rename(id: string, newName: string): Snapshot<T> {
    const name = bareName(newName);
    if (!name) throw invalidParameter('container name cannot be empty');
    this.settle();
    return this.db.transaction(() => {
      const current = this.load().get(id);
      if (!current) throw notFound(`No such container: ${id}`);
      this.assertNameFree(name, id);
      const rec = snapshotOf(current);
      const oldName = (rec as ContainerRecordBase).Name;
      const data = JSON.stringify({ ...rec, Name: oldName.startsWith('/') ? `/${name}` : name });
      this.db.statement(SQL.rename).run(name, data, id);
      this.remember(id, data, current.created);
      return snapshotOf(this.cache!.get(id)!);
    });
  }

  count(): number {
    if (this.cache) return this.cache.size;
    return Number((this.db.statement(SQL.count).get() as { n: number }).n);
  }

  private load(): Map<string, Cached<T>> {
    if (!this.cache) {
      const cache = new Map<string, Cached<T>>();
      for (const row of this.db.statement(SQL.all).iterate() as Iterable<{ id: string; created: number; data: string }>) {
        cache.set(row.id, { rec: deepFreeze(JSON.parse(row.data) as T), created: Number(row.created) });
      }
      this.cache = cache;
      this.ordered = undefined;
    }
    return this.cache;
  }

  /**
   * Records a row just written. Kept as its JSON, parsed only when read: the caller's object stays
   * theirs to mutate, and a put costs no parse and freeze of a record nobody reads back (a record
   * with 200 000 labels: ~150 ms saved per write).
   */
  private remember(id: string, data: string, created: number): void {
    if (this.cache) this.cache.set(id, { data, created });
    this.ordered = undefined;
    this.touched.add(id); // always inside a transaction
  }

  /** Outside any transaction, earlier writes are final: nothing left that a rollback could undo. */
  private settle(): void {
    if (!this.db.inTransaction) this.touched.clear();
  }

  /** After a rollback: make the cached rows written in the undone transaction match the table again. */
  private resync(): void {
    if (this.cache && this.touched.size) {
      for (const id of this.touched) {
        const row = this.db.statement(SQL.one).get(id) as { created: number; data: string } | undefined;
        if (row) this.cache.set(id, { rec: deepFreeze(JSON.parse(row.data) as T), created: Number(row.created) });
        else this.cache.delete(id);
      }
      this.ordered = undefined;
    }
    this.settle();
  }

  private assertNameFree(name: string, id: string): void {
    const holder = this.db.statement(SQL.idByName).get(name) as { id: string } | undefined;
    if (holder && holder.id !== id) throw nameInUse(name, holder.id);
  }
}
