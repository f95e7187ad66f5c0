// A keyed table of JSON values, for records that need no indexed columns: networks, volumes, execs,
// daemon metadata (engine-id). Each RecordTable owns the SQL table kv_<name>, created on first use
// (its shape never changes, so it needs no migration).

import type { EngineDatabase } from './database.ts';

const TABLE_NAME = /^[a-z][a-z0-9_]{0,47}$/;

export class RecordTable<T> {
  readonly table: string;
  private readonly db: EngineDatabase;
  private readonly sql: {
    get: string;
    put: string;
    del: string;
    list: string;
    count: string;
  };

  constructor(db: EngineDatabase, name: string) {
    // The name becomes part of SQL text, so only plain identifiers are accepted.
    if (!TABLE_NAME.test(name)) throw new Error(`invalid record table name ${JSON.stringify(name)}`);
    this.db = db;
    this.table = `kv_${name}`;
    const t = this.table;
    db.exec(`CREATE TABLE IF NOT EXISTS ${t} (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, updated INTEGER NOT NULL) STRICT`);
    this.sql = {
      get: `SELECT value FROM ${t} WHERE key = ?`,
      put:
        `INSERT INTO ${t} (key, value, updated) VALUES (?, ?, ?) ` +
        'ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated',
      del: `DELETE FROM ${t} WHERE key = ?`,
      list: `SELECT key, value FROM ${t} ORDER BY key`,
      count: `SELECT count(*) AS n FROM ${t}`,
    };
  }

  get(key: string): T | undefined {
    const row = this.db.statement(this.sql.get).get(key) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  has(key: string): boolean {
    return this.db.statement(this.sql.get).get(key) !== undefined;
  }

  /** Inserts or replaces. value must survive JSON (no undefined at the top level, no bigint). */
  put(key: string, value: T): void {
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError(`${this.table}: value for ${key} is not JSON-serialisable`);
    this.db.statement(this.sql.put).run(key, json, Date.now());
  }

  /** Removes the entry; false if there was none. */
  delete(key: string): boolean {
    return Number(this.db.statement(this.sql.del).run(key).changes) > 0;
  }

  /** All values in key order. */
  list(): T[] {
    return this.entries().map(([, v]) => v);
  }

  /** All [key, value] pairs in key order. */
  entries(): Array<[string, T]> {
    const rows = this.db.statement(this.sql.list).all() as Array<{ key: string; value: string }>;
    return rows.map((r) => [r.key, JSON.parse(r.value) as T]);
  }

  count(): number {
    return Number((this.db.statement(this.sql.count).get() as { n: number }).n);
  }

  /** The value at key, creating it with make() atomically if absent (e.g. the daemon's engine-id). */
  getOrCreate(key: string, make: () => T): T {
    return this.db.transaction(() => {
      const existing = this.get(key);
      if (existing !== undefined) return existing;
      const value = make();
      this.put(key, value);
      return value;
    });
  }
}
