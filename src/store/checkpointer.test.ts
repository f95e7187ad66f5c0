import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, test } from 'node:test';
import { startCheckpointer } from './checkpointer.ts';
import { tempDir, type TempDir } from '../../test/helpers/temp-dir.ts';

let tmp: TempDir;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.remove());

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
  }
}

test('a worker runs only while the WAL changes: it checkpoints, ends when quiet, and comes back for the next write', async () => {
  const path = tmp.file('engine.db');
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v TEXT)');
  const events: boolean[] = [];
  const warnings: string[] = [];
  const cp = startCheckpointer(
    path,
    (m) => warnings.push(m),
    () => warnings.push('stopped'),
    {
      idleMs: 300,
      onWorker: (running) => events.push(running),
    },
  );
  const row = 'x'.repeat(1 << 20);
  const size = () => statSync(path).size;
  try {
    db.prepare('INSERT INTO t VALUES (?)').run(row);
    await until('the worker copied the row into the file', () => size() > 1 << 20);
    await until('the worker ended after a quiet 300 ms', () => events.join() === 'true,false');
    // Nothing written: no worker comes back.
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(events, [true, false]);
    db.prepare('INSERT INTO t VALUES (?)').run(row);
    db.prepare('INSERT INTO t VALUES (?)').run(row);
    await until('a new worker copied the next rows', () => size() > 3 << 20);
    assert.equal(events[2], true);
  } finally {
    cp.close();
    db.close();
  }
  assert.deepEqual(warnings, []);
  const again = new DatabaseSync(path);
  assert.equal((again.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 3);
  again.close();
});

test('close while a worker runs waits for its connection to close', async () => {
  const path = tmp.file('engine.db');
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v TEXT)');
  let running = false;
  const cp = startCheckpointer(
    path,
    () => {},
    () => {},
    { idleMs: 60_000, onWorker: (r) => (running = r) },
  );
  db.prepare('INSERT INTO t VALUES (?)').run('x');
  await until('a worker runs', () => running);
  cp.close();
  db.close(); // the last connection: checkpoints and removes the WAL
  assert.throws(() => statSync(`${path}-wal`), /ENOENT/);
});

test('a small WAL is checkpointed on the caller thread once writes pause, without a worker; a large one on a worker', async () => {
  const path = tmp.file('engine.db');
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v TEXT)');
  const workers: boolean[] = [];
  const here: number[] = [];
  let inTransaction = false;
  const cp = startCheckpointer(
    path,
    () => {},
    () => {},
    {
      idleMs: 300,
      onWorker: (r) => workers.push(r),
      here: () => {
        if (inTransaction) return false;
        db.exec('PRAGMA wal_checkpoint(PASSIVE)');
        return true;
      },
      onHere: (_ms, bytes) => here.push(bytes),
    },
  );
  const size = () => statSync(path).size;
  try {
    const before = size();
    inTransaction = true; // declined while a transaction is open: tried again at the next look
    db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(64 << 10));
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(size(), before);
    inTransaction = false;
    await until('the caller checkpointed the row into the file', () => size() > before + (64 << 10));
    assert.equal(here.length, 1);
    assert.ok(here[0]! > 64 << 10 && here[0]! < 512 << 10, `WAL of ${here[0]} bytes`);
    assert.deepEqual(workers, []);
    db.prepare('INSERT INTO t VALUES (?)').run('y'.repeat(1 << 20));
    await until('a worker copied the large row', () => size() > 1 << 20);
    assert.equal(workers[0], true);
    assert.equal(here.length, 1);
  } finally {
    cp.close();
    db.close();
  }
});
