// The snapshotter's metadata: one SQLite row per snapshot (key, numeric id naming its directory,
// kind, parent key, times, labels, usage once committed). Each call is one transaction, so a
// kill -9 leaves either the old state or the new one. The state machine is containerd's: active and
// view snapshots are made on a committed parent (or none); committing turns an active snapshot into
// a committed one under a new name, keeping its id (its directory); a snapshot with children cannot
// be removed. Ids come from a sequence that advances in its own transaction before the directory
// is made, so an id is never handed out twice, even when a crash undid the row that used it.
import { openDatabase, type EngineDatabase, type Migration } from '../../store/database.ts';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from './errors.ts';

export type Kind = 'view' | 'active' | 'committed';

export interface SnapshotInfo {
  name: string;
  parent: string;
  kind: Kind;
  /** ms since the epoch */
  created: number;
  updated: number;
  labels: Record<string, string>;
}

export interface Usage {
  size: number;
  inodes: number;
}

/** What mounts are made from: the snapshot's id and its parents' ids, nearest first. */
export interface SnapshotRef {
  id: string;
  kind: Kind;
  parentIds: string[];
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'snapshots',
    sql: `
      CREATE TABLE snapshots (
        key     TEXT PRIMARY KEY NOT NULL,
        id      INTEGER NOT NULL UNIQUE,
        kind    TEXT NOT NULL CHECK (kind IN ('view', 'active', 'committed')),
        parent  TEXT NOT NULL DEFAULT '',
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        labels  TEXT NOT NULL DEFAULT '{}',
        size    INTEGER NOT NULL DEFAULT 0,
        inodes  INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX snapshots_parent ON snapshots (parent);
      CREATE TABLE sequence (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) STRICT;
      INSERT INTO sequence (name, value) VALUES ('id', 0);
    `,
  },
];

interface Row {
  key: string;
  id: number;
  kind: Kind;
  parent: string;
  created: number;
  updated: number;
  labels: string;
  size: number;
  inodes: number;
}

/** Labels as stored: an empty value is no label (containerd's store drops them the same way). */
function labelText(labels: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== '')));
}

const infoOf = (r: Row): SnapshotInfo => ({
  name: r.key,
  parent: r.parent,
  kind: r.kind,
  created: Number(r.created),
  updated: Number(r.updated),
  labels: JSON.parse(r.labels) as Record<string, string>,
});

export class MetaStore {
  private readonly db: EngineDatabase;

  /** `synchronous: FULL`: a commit also survives a power loss, not only a crash of the process. */
  constructor(path: string) {
    this.db = openDatabase(path, { migrations: MIGRATIONS, synchronous: 'FULL' });
  }

  close(): void {
    this.db.close();
  }

  private row(key: string): Row | undefined {
    return this.db.statement('SELECT * FROM snapshots WHERE key = ?').get(key) as Row | undefined;
  }

  /** The next id, committed before it is used: never given out again. */
  reserveId(): string {
    const r = this.db.statement(`UPDATE sequence SET value = value + 1 WHERE name = 'id' RETURNING value`).get() as { value: number };
    return String(r.value);
  }

  /** Parent ids from `parentKey` up, nearest first. */
  private parentIds(parentKey: string): string[] {
    const ids: string[] = [];
    // Each step goes to a row made before this one, so the chain ends; the bound guards a damaged file.
    for (let key = parentKey, steps = 0; key; steps++) {
      const p = this.row(key);
      if (!p) throw notFound(`missing parent ${JSON.stringify(key)}`);
      if (steps > 10_000) throw failedPrecondition(`parent chain of ${JSON.stringify(parentKey)} does not end`);
      ids.push(String(p.id));
      key = p.parent;
    }
    return ids;
  }

  /**
   * Records a new active or view snapshot with the reserved `id`; `place` runs inside the
   * transaction (it moves the prepared directory into place) and a throw from it undoes the row.
   */
  create(kind: Kind, key: string, parent: string, labels: Record<string, string>, id: string, place: () => void): SnapshotRef {
    if (kind === 'committed') throw invalidArgument(`snapshot type ${kind} invalid; only snapshots of type Active or View can be created`);
    if (!key) throw invalidArgument('snapshot key must not be empty');
    return this.db.transaction(() => {
      if (parent) {
        const p = this.row(parent);
        if (!p) throw notFound(`missing parent ${JSON.stringify(parent)} bucket`);
        if (p.kind !== 'committed') throw invalidArgument(`parent ${JSON.stringify(parent)} is not committed snapshot`);
      }
      if (this.row(key)) throw alreadyExists(`snapshot ${key}`);
      const now = Date.now();
      this.db
        .statement('INSERT INTO snapshots (key, id, kind, parent, created, updated, labels) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(key, Number(id), kind, parent, now, now, labelText(labels));
      const parentIds = parent ? this.parentIds(parent) : [];
      place();
      return { id, kind, parentIds };
    });
  }

  /** Info, id and recorded usage of any snapshot. */
  get(key: string): { id: string; info: SnapshotInfo; usage: Usage } {
    const r = this.row(key);
    if (!r) throw notFound('snapshot does not exist');
    return { id: String(r.id), info: infoOf(r), usage: { size: Number(r.size), inodes: Number(r.inodes) } };
  }

  /** An active or view snapshot with its parents (what Mounts needs). */
  ref(key: string): SnapshotRef {
    const r = this.row(key);
    if (!r) throw notFound('snapshot does not exist');
    if (r.kind === 'committed') throw failedPrecondition(`requested snapshot ${key} not active or view`);
    return { id: String(r.id), kind: r.kind, parentIds: r.parent ? this.parentIds(r.parent) : [] };
  }

  /** Turns the active `key` into the committed `name` (same id, labels replaced, usage recorded). */
  commit(key: string, name: string, usage: Usage, labels: Record<string, string>): string {
    return this.db.transaction(() => {
      if (this.row(name)) throw alreadyExists(`committed snapshot ${name}`);
      const r = this.row(key);
      if (!r) throw notFound(`failed to get active snapshot ${JSON.stringify(key)}`);
      if (r.kind !== 'active') throw failedPrecondition(`snapshot ${JSON.stringify(key)} is not active`);
      const now = Date.now();
      this.db
        .statement(
          `UPDATE snapshots SET key = ?, kind = 'committed', created = ?, updated = ?, labels = ?, size = ?, inodes = ? WHERE key = ?`,
        )
        .run(name, now, now, labelText(labels), usage.size, usage.inodes, key);
      return String(r.id);
    });
  }

  /** Forgets `key` (never one with children); returns its id so its directory can go. */
  remove(key: string): { id: string; kind: Kind } {
    return this.db.transaction(() => {
      const r = this.row(key);
      if (!r) throw notFound(`snapshot ${key}`);
      if (this.db.statement('SELECT 1 FROM snapshots WHERE parent = ? LIMIT 1').get(key))
        throw failedPrecondition('cannot remove snapshot with child');
      this.db.statement('DELETE FROM snapshots WHERE key = ?').run(key);
      return { id: String(r.id), kind: r.kind };
    });
  }

  /** Labels of `name` replaced (no paths, or `labels`) or set one by one (`labels.<key>`). */
  update(name: string, labels: Record<string, string>, paths: readonly string[]): SnapshotInfo {
    return this.db.transaction(() => {
      const r = this.row(name);
      if (!r) throw notFound('snapshot does not exist');
      let next = JSON.parse(r.labels) as Record<string, string>;
      if (!paths.length) next = { ...labels };
      for (const p of paths) {
        if (p.startsWith('labels.')) {
          const k = p.slice('labels.'.length);
          // As containerd's store: the label takes the given value; none (or empty) removes it.
          next[k] = labels[k] ?? '';
        } else if (p === 'labels') next = { ...labels };
        else throw invalidArgument(`cannot update ${JSON.stringify(p)} field on snapshot ${JSON.stringify(name)}`);
      }
      const now = Date.now();
      const text = labelText(next);
      this.db.statement('UPDATE snapshots SET labels = ?, updated = ? WHERE key = ?').run(text, now, name);
      return { ...infoOf(r), labels: JSON.parse(text) as Record<string, string>, updated: now };
    });
  }

  /** Every snapshot (any kind) that `keep` accepts, in key order. */
  list(keep: (info: SnapshotInfo) => boolean = () => true): SnapshotInfo[] {
    const rows = this.db.statement('SELECT * FROM snapshots ORDER BY key').all() as unknown as Row[];
    return rows.map(infoOf).filter(keep);
  }

  /** The ids in use (directories whose id is not here are leftovers). */
  ids(): Set<string> {
    const rows = this.db.statement('SELECT id FROM snapshots').all() as Array<{ id: number }>;
    return new Set(rows.map((r) => String(r.id)));
  }
}
