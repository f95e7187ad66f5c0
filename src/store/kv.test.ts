import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { openDatabase, type EngineDatabase } from './database.ts';
import { RecordTable } from './kv.ts';
import { tempDir, type TempDir } from '../../test/helpers/temp-dir.ts';

let tmp: TempDir;
let db: EngineDatabase;

beforeEach(() => {
  tmp = tempDir();
  db = openDatabase(tmp.file('engine.db'));
});
afterEach(() => {
  db.close();
  tmp.remove();
});

interface Net {
  Name: string;
  Driver: string;
  Options?: Record<string, string>;
}

describe('RecordTable', () => {
  test('put, get, has, delete', () => {
    const nets = new RecordTable<Net>(db, 'networks');
    assert.equal(nets.get('n1'), undefined);
    assert.equal(nets.has('n1'), false);
    nets.put('n1', { Name: 'bridge', Driver: 'bridge', Options: { mtu: '1500' } });
    assert.deepEqual(nets.get('n1'), { Name: 'bridge', Driver: 'bridge', Options: { mtu: '1500' } });
    assert.equal(nets.has('n1'), true);
    nets.put('n1', { Name: 'bridge', Driver: 'macvlan' });
    assert.deepEqual(nets.get('n1'), { Name: 'bridge', Driver: 'macvlan' });
    assert.equal(nets.delete('n1'), true);
    assert.equal(nets.delete('n1'), false);
    assert.equal(nets.get('n1'), undefined);
  });

  test('list and entries are in key order; count', () => {
    const vols = new RecordTable<{ Name: string }>(db, 'volumes');
    for (const k of ['b', 'c', 'a']) vols.put(k, { Name: k.toUpperCase() });
    assert.deepEqual(vols.list(), [{ Name: 'A' }, { Name: 'B' }, { Name: 'C' }]);
    assert.deepEqual(
      vols.entries().map(([k]) => k),
      ['a', 'b', 'c'],
    );
    assert.equal(vols.count(), 3);
  });

  test('tables are independent and persist across reopen', () => {
    const a = new RecordTable<number>(db, 'a');
    const b = new RecordTable<number>(db, 'b');
    a.put('k', 1);
    b.put('k', 2);
    db.close();
    db = openDatabase(tmp.file('engine.db'));
    assert.equal(new RecordTable<number>(db, 'a').get('k'), 1);
    assert.equal(new RecordTable<number>(db, 'b').get('k'), 2);
  });

  test('does not collide with the core tables', () => {
    const t = new RecordTable<string>(db, 'containers');
    assert.equal(t.table, 'kv_containers');
    t.put('x', 'y');
    assert.equal((db.statement('SELECT count(*) AS n FROM containers').get() as { n: number }).n, 0);
  });

  test('rejects table names that are not plain identifiers', () => {
    for (const bad of ['', 'Networks', 'a-b', 'x; DROP TABLE containers', '1abc', 'a'.repeat(49)]) {
      assert.throws(() => new RecordTable(db, bad), /invalid record table name/, bad);
    }
  });

  test('rejects values JSON cannot hold', () => {
    const t = new RecordTable<unknown>(db, 'misc');
    assert.throws(() => t.put('u', undefined), /not JSON-serialisable/);
    assert.throws(() => t.put('b', 1n), TypeError);
    assert.equal(t.count(), 0);
  });

  test('getOrCreate makes the value once (the engine-id pattern)', () => {
    const meta = new RecordTable<string>(db, 'meta');
    let made = 0;
    const make = () => {
      made++;
      return randomBytes(32).toString('hex');
    };
    const id = meta.getOrCreate('engine-id', make);
    assert.equal(meta.getOrCreate('engine-id', make), id);
    db.close();
    db = openDatabase(tmp.file('engine.db'));
    assert.equal(new RecordTable<string>(db, 'meta').getOrCreate('engine-id', make), id);
    assert.equal(made, 1);
  });

  test('writes take part in an enclosing transaction', () => {
    const t = new RecordTable<number>(db, 'misc');
    assert.throws(() =>
      db.transaction(() => {
        t.put('x', 1);
        throw new Error('abort');
      }),
    );
    assert.equal(t.has('x'), false);
  });
});
