// The daemon's one embedded database (<data-root>/engine.db). Every record the daemon keeps lives
// here so that a kill -9 at any instant loses no committed write and leaves nothing half-written:
// SQLite's WAL journal makes each transaction atomic and durable against a process crash.

import { chmodSync, existsSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { startCheckpointer, type Checkpointer } from './checkpointer.ts';
import { MIGRATIONS, type Migration } from './schema.ts';
import { onHeapTrim } from '../util/heap-trim.ts';

export type { Migration } from './schema.ts';

export interface OpenOptions {
  /**
   * 'NORMAL' (default): in WAL mode a commit is a write() into the WAL; the fsync happens at
   * checkpoints. A killed process loses nothing the OS has already received, so every committed
   * transaction survives kill -9 / a crash of the daemon. A power loss or kernel panic may roll back
   * the last few commits (never corrupt the file).
   * 'FULL': additionally fsyncs the WAL on every commit, so commits also survive power loss, at the
   * cost of one fsync per transaction (milliseconds on real disks).
   */
  synchronous?: 'NORMAL' | 'FULL';
  /** How long a writer waits for another connection's lock before SQLITE_BUSY (ms). */
  busyTimeoutMs?: number;
  /** Schema steps; defaults to the daemon's schema. Tests pass their own. */
  migrations?: readonly Migration[];
  /**
   * WAL checkpoints on a worker thread (checkpointer.ts) instead of inside the COMMIT that fills the
   * WAL: the daemon's choice, so that a large write never holds the event loop for the copy.
   * `warn` gets the worker's failures.
   */
  checkpointInBackground?: { warn: (message: string) => void; debug?: (message: string, fields: Record<string, number>) => void };
}

export interface EngineDatabase {
  readonly path: string;
  /** The schema version after migrations (PRAGMA user_version). */
  readonly schemaVersion: number;
  /** A prepared statement for sql, prepared once per connection and reused. */
  statement(sql: string): StatementSync;
  /** Runs one or more SQL statements without results (DDL, pragmas). */
  exec(sql: string): void;
  /**
   * Runs fn atomically: BEGIN IMMEDIATE … COMMIT, ROLLBACK if fn throws. Nested calls become
   * SAVEPOINTs, so an inner failure that the caller catches undoes only the inner part.
   * fn must be synchronous: awaiting inside would let other work interleave with the open transaction.
   */
  transaction<T>(fn: () => T): T;
  readonly inTransaction: boolean;
  /**
   * Calls listener after any ROLLBACK or ROLLBACK TO a savepoint, so in-memory caches of table
   * contents can drop what they learned from writes that were just undone. Returns an unsubscribe.
   */
  onRollback(listener: () => void): () => void;
  /** PRAGMA integrity_check; ['ok'] when the file is sound. */
  integrityCheck(): string[];
  /** Copies the WAL into the main file and truncates the WAL (e.g. at shutdown). */
  checkpoint(): void;
  readonly isOpen: boolean;
  close(): void;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

class SqliteEngineDatabase implements EngineDatabase {
  readonly path: string;
  readonly schemaVersion: number;
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private depth = 0;
  private readonly rollbackListeners = new Set<() => void>();
  private checkpointer: Checkpointer | undefined;
  private unregisterRelease: (() => void) | undefined;

  constructor(path: string, opts: OpenOptions) {
    this.path = path;
    const fresh = path !== ':memory:' && !existsSync(path);
    this.db = new DatabaseSync(path, {
      timeout: opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
      enableForeignKeyConstraints: true,
      // Double-quoted strings as literals is a legacy footgun (typos in column names become strings).
      enableDoubleQuotedStringLiterals: false,
    });
    try {
      // Container records hold secrets (env vars): keep the file private. SQLite gives the -wal and
      // -shm files the main file's mode.
      if (fresh) chmodSync(path, 0o600);
      const mode = this.pragma('journal_mode = WAL');
      if (path !== ':memory:' && String(mode).toLowerCase() !== 'wal') {
        throw new Error(`engine.db: could not enable WAL journal (got ${String(mode)})`);
      }
      this.db.exec(`PRAGMA synchronous = ${opts.synchronous === 'FULL' ? 'FULL' : 'NORMAL'}`);
      this.db.exec('PRAGMA foreign_keys = ON');
      // Keep the WAL from staying large after a burst of writes.
      this.db.exec('PRAGMA journal_size_limit = 67108864');
      // A page cache (up to 16 MiB, default 2) that holds a 4 MiB row's overflow chain: replacing or
      // deleting one walks the old chain, which the default cache had already evicted (read back
      // page by page): 12–34 ms per write of a 4 MiB record, 1–13 ms with this cache.
      this.db.exec('PRAGMA cache_size = -16384');
      // That cache keeps what a burst filled it with for the connection's life (malloc's heap after
      // the benchmark's groups: 12.3 MiB, 7.8 when let go); an idle daemon's trim lets it go, to be
      // read back from the OS's page cache.
      this.unregisterRelease = onHeapTrim(() => {
        if (this.db.isOpen && !this.db.isTransaction) this.db.exec('PRAGMA shrink_memory');
      });
      this.schemaVersion = this.migrate(opts.migrations ?? MIGRATIONS);
      if (opts.checkpointInBackground && path !== ':memory:') {
        this.db.exec('PRAGMA wal_autocheckpoint = 0');
        const { warn, debug } = opts.checkpointInBackground;
        this.checkpointer = startCheckpointer(
          path,
          warn,
          () => {
            warn('WAL checkpoint worker ended: checkpoints are made by the writing connection again');
            if (this.db.isOpen) this.db.exec('PRAGMA wal_autocheckpoint = 1000');
          },
          {
            here: () => {
              if (!this.db.isOpen || this.db.isTransaction) return false;
              this.db.exec('PRAGMA wal_checkpoint(PASSIVE)');
              return true;
            },
            ...(debug ? { onHere: (ms, walBytes) => debug('WAL checkpointed on the main thread', { ms: Math.round(ms), walBytes }) } : {}),
          },
        );
      }
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  get isOpen(): boolean {
    return this.db.isOpen;
  }

  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  statement(sql: string): StatementSync {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  onRollback(listener: () => void): () => void {
    this.rollbackListeners.add(listener);
    return () => this.rollbackListeners.delete(listener);
  }

  private rolledBack(): void {
    for (const listener of this.rollbackListeners) listener();
  }

  transaction<T>(fn: () => T): T {
    if (this.depth === 0) return this.outer(fn);
    return this.nested(fn);
  }

  private outer<T>(fn: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    this.depth = 1;
    try {
      const result = fn();
      rejectPromise(result);
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      // Some errors (e.g. SQLITE_FULL) already rolled the transaction back; and a failed COMMIT
      // leaves it open.
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      this.rolledBack();
      throw err;
    } finally {
      this.depth = 0;
    }
  }

  private nested<T>(fn: () => T): T {
    const name = `sp${this.depth}`;
    this.db.exec(`SAVEPOINT ${name}`);
    this.depth++;
    try {
      const result = fn();
      rejectPromise(result);
      this.db.exec(`RELEASE ${name}`);
      return result;
    } catch (err) {
      if (this.db.isTransaction) {
        this.db.exec(`ROLLBACK TO ${name}`);
        this.db.exec(`RELEASE ${name}`);
      }
      this.rolledBack();
      throw err;
    } finally {
      this.depth--;
    }
  }

  integrityCheck(): string[] {
    const rows = this.db.prepare('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check);
  }

  checkpoint(): void {
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  }

  close(): void {
    if (!this.db.isOpen) return;
    if (this.depth > 0) throw new Error('engine.db: close() inside a transaction');
    this.statements.clear();
    this.unregisterRelease?.();
    this.checkpointer?.close(); // first: the last connection closed checkpoints and removes the WAL
    this.db.close();
  }

  private pragma(expr: string): unknown {
    const row = this.db.prepare(`PRAGMA ${expr}`).get() as Record<string, unknown> | undefined;
    return row ? Object.values(row)[0] : undefined;
  }

  /** Applies every step newer than user_version, each in its own transaction with its version bump. */
  private migrate(migrations: readonly Migration[]): number {
    checkMigrationList(migrations);
    const latest = migrations.length ? migrations[migrations.length - 1]!.version : 0;
    let current = Number(this.pragma('user_version'));
    if (current > latest) {
      throw new Error(
        `engine.db schema version ${current} is newer than this daemon supports (${latest}); ` +
          'refusing to open it (was it written by a newer engined?)',
      );
    }
    for (const step of migrations) {
      if (step.version <= current) continue;
      this.transaction(() => {
        this.db.exec(step.sql);
        // user_version lives in the file header, which is part of the transaction.
        this.db.exec(`PRAGMA user_version = ${step.version}`);
      });
      current = step.version;
    }
    return current;
  }
}

function checkMigrationList(migrations: readonly Migration[]): void {
  let prev = 0;
  for (const m of migrations) {
    if (!Number.isInteger(m.version) || m.version !== prev + 1) {
      throw new Error(`engine.db migrations must be numbered 1, 2, 3…; found ${m.version} after ${prev}`);
    }
    prev = m.version;
  }
}

function rejectPromise(value: unknown): void {
  if (value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function') {
    throw new TypeError('engine.db: transaction callbacks must be synchronous (got a promise)');
  }
}

/** Opens (creating if needed) the database at path, configures it and brings the schema up to date. */
export function openDatabase(path: string, opts: OpenOptions = {}): EngineDatabase {
  return new SqliteEngineDatabase(path, opts);
}
