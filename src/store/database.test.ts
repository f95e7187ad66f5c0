import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { openDatabase, type EngineDatabase, type Migration } from './database.ts';
import { releaseCaches } from '../util/heap-trim.ts';
import { mallocStats } from '../util/malloc-trim.ts';
import { MIGRATIONS } from './schema.ts';
import { tempDir, type TempDir } from '../../test/helpers/temp-dir.ts';

let tmp: TempDir;
const opened: EngineDatabase[] = [];
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
  tmp.remove();
});

function open(opts?: Parameters<typeof openDatabase>[1]): EngineDatabase {
  const db = openDatabase(tmp.file('engine.db'), opts);
  opened.push(db);
  return db;
}

function pragma(db: EngineDatabase, name: string): unknown {
  const row = db.statement(`PRAGMA ${name}`).get() as Record<string, unknown>;
  return Object.values(row)[0];
}

const T_MIGRATIONS: Migration[] = [
  { version: 1, name: 'a', sql: 'CREATE TABLE a (x INTEGER NOT NULL)' },
  { version: 2, name: 'b', sql: "CREATE TABLE b (y TEXT); INSERT INTO b VALUES ('seed')" },
];

describe('openDatabase', () => {
  test('configures WAL, synchronous=NORMAL, foreign keys and a busy timeout', () => {
    const db = open();
    assert.equal(pragma(db, 'journal_mode'), 'wal');
    assert.equal(pragma(db, 'synchronous'), 1); // NORMAL
    assert.equal(pragma(db, 'foreign_keys'), 1);
    assert.equal(pragma(db, 'busy_timeout'), 5000);
  });

  test('synchronous FULL and busy timeout are options', () => {
    const db = open({ synchronous: 'FULL', busyTimeoutMs: 1234 });
    assert.equal(pragma(db, 'synchronous'), 2);
    assert.equal(pragma(db, 'busy_timeout'), 1234);
  });

  test('foreign keys are enforced', () => {
    const db = open();
    db.exec('CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p (id))');
    assert.throws(() => db.exec('INSERT INTO c VALUES (42)'), /FOREIGN KEY constraint failed/);
  });

  test("an idle daemon's trim lets go of the page cache a burst filled", () => {
    const db = open();
    db.exec('CREATE TABLE big (id INTEGER PRIMARY KEY, data BLOB NOT NULL)');
    const insert = db.statement('INSERT INTO big (data) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run(Buffer.alloc(4_000, i));
    });
    assert.equal((db.statement('SELECT count(*) AS n FROM big WHERE length(data) = 4000').get() as { n: number }).n, 2_000);
    const inUse = () => mallocStats()!.inUse / 2 ** 20;
    assert.ok(mallocStats(), 'the native helper is built');
    const before = inUse();
    releaseCaches();
    const released = before - inUse();
    assert.ok(released > 5, `released ${released.toFixed(1)} MiB of ~8 MiB of cached pages`);
  });

  test('creates the file readable by its owner only', () => {
    open();
    assert.equal(statSync(tmp.file('engine.db')).mode & 0o777, 0o600);
  });

  test('runs the daemon schema and records its version', () => {
    const db = open();
    assert.equal(db.schemaVersion, MIGRATIONS.at(-1)!.version);
    assert.equal(pragma(db, 'user_version'), MIGRATIONS.at(-1)!.version);
    const tables = (db.statement("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>).map(
      (r) => r.name,
    );
    assert.ok(tables.includes('containers') && tables.includes('events'), tables.join());
  });

  test('applies only the steps newer than user_version', () => {
    let db = open({ migrations: T_MIGRATIONS.slice(0, 1) });
    assert.equal(db.schemaVersion, 1);
    db.exec('INSERT INTO a VALUES (7)');
    db.close();
    db = open({ migrations: T_MIGRATIONS });
    assert.equal(db.schemaVersion, 2);
    assert.deepEqual({ ...(db.statement('SELECT x FROM a').get() as object) }, { x: 7 });
    db.close();
    // Reopening with the same list runs nothing again (the seed row would be duplicated).
    db = open({ migrations: T_MIGRATIONS });
    assert.equal((db.statement('SELECT count(*) AS n FROM b').get() as { n: number }).n, 1);
  });

  test('a failing step is rolled back whole and the version stays', () => {
    const bad: Migration[] = [
      T_MIGRATIONS[0]!,
      { version: 2, name: 'broken', sql: 'CREATE TABLE half (z); INSERT INTO nowhere VALUES (1)' },
    ];
    assert.throws(() => open({ migrations: bad }), /no such table: nowhere/);
    const db = open({ migrations: T_MIGRATIONS.slice(0, 1) });
    assert.equal(db.schemaVersion, 1);
    assert.equal(db.statement("SELECT name FROM sqlite_schema WHERE name = 'half'").get(), undefined);
  });

  test('refuses a database from a newer schema', () => {
    open({ migrations: T_MIGRATIONS }).close();
    assert.throws(() => open({ migrations: T_MIGRATIONS.slice(0, 1) }), /schema version 2 is newer than this daemon supports \(1\)/);
  });

  test('refuses a misnumbered migration list', () => {
    assert.throws(() => open({ migrations: [T_MIGRATIONS[0]!, { version: 3, name: 'gap', sql: '' }] }), /numbered 1, 2, 3/);
  });

  test('statements are prepared once and reused', () => {
    const db = open();
    assert.equal(db.statement('SELECT 1'), db.statement('SELECT 1'));
    assert.notEqual(db.statement('SELECT 1'), db.statement('SELECT 2'));
  });

  test('close is idempotent and refuses inside a transaction', () => {
    const db = open();
    assert.throws(() => db.transaction(() => db.close()), /inside a transaction/);
    db.close();
    db.close();
    assert.equal(db.isOpen, false);
  });

  test('checkpoint empties the WAL', () => {
    const db = open();
    db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    assert.ok(statSync(tmp.file('engine.db-wal')).size > 0);
    db.checkpoint();
    assert.equal(statSync(tmp.file('engine.db-wal')).size, 0);
    assert.deepEqual(db.integrityCheck(), ['ok']);
  });
});

describe('transaction', () => {
  const rows = (db: EngineDatabase) => (db.statement('SELECT x FROM t ORDER BY x').all() as Array<{ x: number }>).map((r) => r.x);
  const insert = (db: EngineDatabase, x: number) => db.statement('INSERT INTO t VALUES (?)').run(x);

  function withTable(): EngineDatabase {
    const db = open();
    db.exec('CREATE TABLE t (x INTEGER NOT NULL)');
    return db;
  }

  test('commits and returns the result', () => {
    const db = withTable();
    const r = db.transaction(() => {
      insert(db, 1);
      insert(db, 2);
      assert.equal(db.inTransaction, true);
      return 'done';
    });
    assert.equal(r, 'done');
    assert.equal(db.inTransaction, false);
    assert.deepEqual(rows(db), [1, 2]);
  });

  test('rolls back everything when fn throws, and rethrows', () => {
    const db = withTable();
    const boom = new Error('boom');
    assert.throws(
      () =>
        db.transaction(() => {
          insert(db, 1);
          throw boom;
        }),
      (err) => err === boom,
    );
    assert.deepEqual(rows(db), []);
    assert.equal(db.inTransaction, false);
  });

  test('is an IMMEDIATE transaction (holds the write lock from the start)', () => {
    const db = withTable();
    const other = open({ busyTimeoutMs: 0 });
    db.transaction(() => {
      // No write yet, but a second connection cannot start writing.
      assert.throws(() => other.exec('INSERT INTO t VALUES (9)'), /database is locked/);
    });
  });

  test('nested calls are savepoints: an inner failure undoes only the inner part', () => {
    const db = withTable();
    db.transaction(() => {
      insert(db, 1);
      assert.throws(() =>
        db.transaction(() => {
          insert(db, 2);
          db.transaction(() => insert(db, 3));
          throw new Error('inner');
        }),
      );
      db.transaction(() => insert(db, 4));
    });
    assert.deepEqual(rows(db), [1, 4]);
  });

  test('an outer failure undoes committed inner savepoints too', () => {
    const db = withTable();
    assert.throws(() =>
      db.transaction(() => {
        db.transaction(() => insert(db, 1));
        throw new Error('outer');
      }),
    );
    assert.deepEqual(rows(db), []);
  });

  test('a SQL error rolls back the transaction', () => {
    const db = withTable();
    assert.throws(
      () =>
        db.transaction(() => {
          insert(db, 1);
          db.statement('INSERT INTO t VALUES (NULL)').run();
        }),
      /NOT NULL constraint failed/,
    );
    assert.deepEqual(rows(db), []);
  });

  test('rejects async callbacks and rolls back what they did synchronously', async () => {
    const db = withTable();
    assert.throws(
      () =>
        db.transaction((async () => {
          insert(db, 1);
        }) as () => unknown),
      /must be synchronous/,
    );
    assert.deepEqual(rows(db), []);
  });

  test('rollback listeners run on ROLLBACK and ROLLBACK TO, not on commit', () => {
    const db = withTable();
    let calls = 0;
    const off = db.onRollback(() => calls++);
    db.transaction(() => insert(db, 1));
    assert.equal(calls, 0);
    db.transaction(() => {
      try {
        db.transaction(() => {
          throw new Error('inner');
        });
      } catch {}
    });
    assert.equal(calls, 1);
    assert.throws(() =>
      db.transaction(() => {
        throw new Error('outer');
      }),
    );
    assert.equal(calls, 2);
    off();
    assert.throws(() =>
      db.transaction(() => {
        throw new Error('again');
      }),
    );
    assert.equal(calls, 2);
  });
});

describe('checkpoints in the background', () => {
  test('the writer never checkpoints; the worker copies the WAL into the file; close leaves no WAL', async () => {
    const warnings: string[] = [];
    const db = open({ migrations: T_MIGRATIONS, checkpointInBackground: { warn: (m) => warnings.push(m) } });
    assert.equal(pragma(db, 'wal_autocheckpoint'), 0);
    const before = statSync(tmp.file('engine.db')).size;
    // 4 MiB rows: 1 000+ pages each, which would have made the COMMIT checkpoint.
    db.exec('CREATE TABLE big (v TEXT)');
    const row = 'x'.repeat(4 * 1024 * 1024);
    for (let i = 0; i < 3; i++) db.statement('INSERT INTO big (v) VALUES (?)').run(row);
    assert.ok(statSync(tmp.file('engine.db-wal')).size > 12 * 1024 * 1024, 'the commits only appended to the WAL');
    assert.ok(statSync(tmp.file('engine.db')).size - before < 1024 * 1024, 'the writer copied nothing into the file');
    for (const end = Date.now() + 10_000; statSync(tmp.file('engine.db')).size < 12 * 1024 * 1024 && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(statSync(tmp.file('engine.db')).size >= 12 * 1024 * 1024, 'the worker checkpointed the WAL');
    // Writes go on while (and after) the worker checkpoints.
    db.statement('INSERT INTO big (v) VALUES (?)').run('after');
    assert.equal((db.statement('SELECT count(*) AS n FROM big').get() as { n: number }).n, 4);
    opened.splice(opened.indexOf(db), 1);
    db.close();
    assert.throws(() => statSync(tmp.file('engine.db-wal')), /ENOENT/, 'the last connection closed removed the WAL');
    assert.deepEqual(warnings, []);
    const again = open({ migrations: T_MIGRATIONS });
    assert.equal((again.statement('SELECT count(*) AS n FROM big').get() as { n: number }).n, 4);
    assert.deepEqual(again.integrityCheck(), ['ok']);
  });
});
