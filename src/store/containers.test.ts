import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { EngineError } from '../errors.ts';
import { ContainerStore, bareName, prefixUpperBound, thaw } from './containers.ts';
import { openDatabase, type EngineDatabase } from './database.ts';
import { tempDir, type TempDir } from '../../test/helpers/temp-dir.ts';

interface Rec {
  Id: string;
  Name: string;
  Created?: string;
  Image?: string;
  Config?: { Env: string[] };
}

let tmp: TempDir;
let db: EngineDatabase;
let store: ContainerStore<Rec>;

beforeEach(() => {
  tmp = tempDir();
  db = openDatabase(tmp.file('engine.db'));
  store = new ContainerStore<Rec>(db);
});
afterEach(() => {
  db.close();
  tmp.remove();
});

const ID1 = '1111aaaa'.repeat(8);
const ID2 = '1111bbbb'.repeat(8);
const ID3 = '2222cccc'.repeat(8);

function reopen(): void {
  db.close();
  db = openDatabase(tmp.file('engine.db'));
  store = new ContainerStore<Rec>(db);
}

function assertConflict(fn: () => unknown, name: string, holder: string): void {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof EngineError);
    assert.equal(err.code, 'CONFLICT');
    assert.equal(err.status, 409);
    assert.equal(
      err.message,
      `Conflict. The container name "/${name}" is already in use by container "${holder}". ` +
        'You have to remove (or rename) that container to be able to reuse that name.',
    );
    return true;
  });
}

describe('ContainerStore', () => {
  test('put then get, by ID and by name with or without the slash', () => {
    const rec = { Id: ID1, Name: '/web', Image: 'busybox', Config: { Env: ['A=1'] } };
    store.put(rec);
    assert.deepEqual(store.get(ID1), rec);
    assert.deepEqual(store.getByName('/web'), rec);
    assert.deepEqual(store.getByName('web'), rec);
    assert.equal(store.get(ID2), undefined);
    assert.equal(store.getByName('db'), undefined);
    // The column holds the bare name.
    assert.equal((db.statement('SELECT name FROM containers WHERE id = ?').get(ID1) as { name: string }).name, 'web');
  });

  test('records survive reopening the database', () => {
    store.put({ Id: ID1, Name: '/web', Image: 'nginx' });
    reopen();
    assert.deepEqual(store.get(ID1), { Id: ID1, Name: '/web', Image: 'nginx' });
    assert.equal(store.count(), 1);
  });

  test('put replaces the record with the same ID, including its name', () => {
    store.put({ Id: ID1, Name: '/web', Image: 'a' });
    store.put({ Id: ID1, Name: '/web2', Image: 'b' });
    assert.deepEqual(store.get(ID1), { Id: ID1, Name: '/web2', Image: 'b' });
    assert.equal(store.getByName('web'), undefined);
    assert.equal(store.count(), 1);
    // The old name is free again.
    store.put({ Id: ID2, Name: '/web' });
    assert.equal(store.getByName('web')?.Id, ID2);
  });

  test('put with a name held by another container is a conflict and changes nothing', () => {
    store.put({ Id: ID1, Name: '/web', Image: 'a' });
    assertConflict(() => store.put({ Id: ID2, Name: 'web' }), 'web', ID1);
    assert.equal(store.get(ID2), undefined);
    store.put({ Id: ID2, Name: '/db', Image: 'b' });
    assertConflict(() => store.put({ Id: ID2, Name: '/web', Image: 'c' }), 'web', ID1);
    assert.deepEqual(store.get(ID2), { Id: ID2, Name: '/db', Image: 'b' });
    assert.equal(store.getByName('web')?.Id, ID1);
  });

  test('put rejects records without an ID or a name', () => {
    assert.throws(() => store.put({ Id: '', Name: '/x' }), /without an Id/);
    assert.throws(() => store.put({ Id: ID1, Name: '/' }), /without a Name/);
    assert.equal(store.count(), 0);
  });

  test('created comes from Created, else the first put, and is kept on replace', () => {
    const created = () => (db.statement('SELECT created FROM containers WHERE id = ?').get(ID1) as { created: number }).created;
    store.put({ Id: ID1, Name: '/a', Created: '2024-05-01T10:00:00.123456789Z' });
    assert.equal(created(), Date.parse('2024-05-01T10:00:00.123Z'));
    const before = Date.now();
    store.put({ Id: ID2, Name: '/b' });
    const c2 = (db.statement('SELECT created FROM containers WHERE id = ?').get(ID2) as { created: number }).created;
    assert.ok(c2 >= before && c2 <= Date.now());
    store.put({ Id: ID1, Name: '/a', Image: 'x' });
    assert.equal(created(), Date.parse('2024-05-01T10:00:00.123Z'));
  });

  test('a createdOf option overrides the default', () => {
    const s = new ContainerStore<Rec & { T: number }>(db, { createdOf: (r) => r.T });
    s.put({ Id: ID1, Name: '/a', T: 5 });
    s.put({ Id: ID2, Name: '/b', T: 9 });
    assert.deepEqual(
      s.list().map((r) => r.Id),
      [ID2, ID1],
    );
  });

  test('list returns all records newest first, ties by ID', () => {
    store.put({ Id: ID3, Name: '/c', Created: '2024-01-01T00:00:00Z' });
    store.put({ Id: ID1, Name: '/a', Created: '2024-01-03T00:00:00Z' });
    store.put({ Id: ID2, Name: '/b', Created: '2024-01-01T00:00:00Z' });
    const order = [ID1, ID2, ID3];
    assert.deepEqual(
      store.list().map((r) => r.Id),
      order,
    );
    reopen(); // the same order when read from disk
    assert.deepEqual(
      store.list().map((r) => r.Id),
      order,
    );
  });

  test('findByPrefix returns the IDs starting with the prefix, in ID order', () => {
    store.put({ Id: ID2, Name: '/b' });
    store.put({ Id: ID1, Name: '/a' });
    store.put({ Id: ID3, Name: '/c' });
    store.put({ Id: '1111', Name: '/short' });
    const ids = (p: string) => store.findByPrefix(p).map((r) => r.Id);
    assert.deepEqual(ids('1111'), ['1111', ID1, ID2]);
    assert.deepEqual(ids('1111a'), [ID1]);
    assert.deepEqual(ids('2'), [ID3]);
    assert.deepEqual(ids(ID3), [ID3]);
    assert.deepEqual(ids('3'), []);
    assert.deepEqual(ids('11111'), []);
    assert.deepEqual(ids(''), []);
  });

  test('idByName and idsByPrefix answer IDs from the indexes, and follow renames and deletes', () => {
    store.put({ Id: ID1, Name: '/web' });
    store.put({ Id: ID2, Name: '/db' });
    assert.equal(store.idByName('/web'), ID1);
    assert.equal(store.idByName('db'), ID2);
    assert.equal(store.idByName('nope'), undefined);
    assert.deepEqual(store.idsByPrefix('1111'), [ID1, ID2]);
    assert.deepEqual(store.idsByPrefix('1111b'), [ID2]);
    assert.deepEqual(store.idsByPrefix(''), []);
    store.rename(ID1, 'front');
    assert.equal(store.idByName('web'), undefined);
    assert.equal(store.idByName('/front'), ID1);
    store.delete(ID2);
    assert.equal(store.idByName('db'), undefined);
    assert.deepEqual(store.idsByPrefix('1111'), [ID1]);
  });

  test('findByPrefix is an index range search, not a table scan', () => {
    const plan = db.statement('EXPLAIN QUERY PLAN SELECT id FROM containers WHERE id >= ? AND id < ? ORDER BY id').all() as Array<{
      detail: string;
    }>;
    const details = plan.map((p) => p.detail).join('; ');
    assert.match(details, /SEARCH containers USING COVERING INDEX \S+ \(id>\? AND id<\?\)/);
    assert.doesNotMatch(details, /SCAN|TEMP B-TREE/);
  });

  test('prefixUpperBound is the next string after every extension of the prefix', () => {
    assert.equal(prefixUpperBound('ab'), 'ac');
    assert.equal(prefixUpperBound('a\u{10ffff}'), 'b');
    assert.equal(prefixUpperBound('\u{10ffff}'), undefined);
    assert.equal(prefixUpperBound('a\ud7ff'), 'a\ue000');
    assert.equal(prefixUpperBound('z'), '{');
  });

  test('rename moves the name atomically and keeps the record', () => {
    store.put({ Id: ID1, Name: '/web', Image: 'nginx' });
    const renamed = store.rename(ID1, 'front');
    assert.deepEqual(renamed, { Id: ID1, Name: '/front', Image: 'nginx' });
    assert.deepEqual(store.get(ID1), renamed);
    assert.equal(store.getByName('web'), undefined);
    assert.equal(store.getByName('/front')?.Id, ID1);
    reopen();
    assert.deepEqual(store.getByName('front'), { Id: ID1, Name: '/front', Image: 'nginx' });
    store.put({ Id: ID2, Name: '/web' }); // the old name is reusable
  });

  test('rename keeps the record’s Name convention', () => {
    store.put({ Id: ID1, Name: 'bare' });
    assert.equal(store.rename(ID1, '/other').Name, 'other');
  });

  test('rename to a taken name is a conflict and changes nothing', () => {
    store.put({ Id: ID1, Name: '/web' });
    store.put({ Id: ID2, Name: '/db' });
    assertConflict(() => store.rename(ID2, '/web'), 'web', ID1);
    assert.equal(store.get(ID2)?.Name, '/db');
    assert.equal(store.getByName('web')?.Id, ID1);
    // Renaming to its own name is allowed (a no-op here).
    assert.equal(store.rename(ID2, 'db').Name, '/db');
  });

  test('rename of an unknown container is not found', () => {
    assert.throws(
      () => store.rename(ID1, 'x'),
      (err) => err instanceof EngineError && err.code === 'NOT_FOUND' && err.message === `No such container: ${ID1}`,
    );
    assert.throws(() => store.rename(ID1, '/'), /cannot be empty/);
  });

  test('delete removes the record and frees the name', () => {
    store.put({ Id: ID1, Name: '/web' });
    store.put({ Id: ID2, Name: '/db' });
    assert.equal(store.delete(ID1), true);
    assert.equal(store.delete(ID1), false);
    assert.equal(store.get(ID1), undefined);
    assert.equal(store.getByName('web'), undefined);
    assert.equal(store.count(), 1);
    assert.deepEqual(
      store.list().map((r) => r.Id),
      [ID2],
    );
    store.put({ Id: ID3, Name: '/web' });
    reopen();
    assert.equal(store.count(), 2);
  });

  test('count works before and after the cache is loaded', () => {
    store.put({ Id: ID1, Name: '/a' });
    store.put({ Id: ID2, Name: '/b' });
    reopen();
    assert.equal(store.count(), 2); // from SQL
    store.list();
    assert.equal(store.count(), 2); // from memory
  });

  test('returned records are frozen snapshots; the caller’s object is not aliased', () => {
    const rec: Rec = { Id: ID1, Name: '/web', Config: { Env: ['A=1'] } };
    store.put(rec);
    rec.Config!.Env.push('B=2'); // the caller keeps ownership of what it put
    const got = store.get(ID1)!;
    assert.deepEqual(got.Config?.Env, ['A=1']);
    assert.ok(Object.isFrozen(got) && Object.isFrozen(got.Config!.Env));
    assert.throws(() => {
      (got as Rec).Name = '/x';
    }, TypeError);
    const copy = thaw(got);
    copy.Config!.Env.push('C=3');
    store.put(copy);
    assert.deepEqual(store.get(ID1)?.Config?.Env, ['A=1', 'C=3']);
    // A snapshot can be put back directly, e.g. spread with a change.
    store.put({ ...got, Image: 'alpine' });
    assert.equal(store.get(ID1)?.Image, 'alpine');
  });

  test('list returns a fresh array each time', () => {
    store.put({ Id: ID1, Name: '/a' });
    const a = store.list();
    a.pop();
    assert.equal(store.list().length, 1);
  });

  test('a rolled-back transaction leaves no trace in reads (cache included)', () => {
    store.put({ Id: ID1, Name: '/web', Image: 'v1' });
    store.list(); // load the cache
    assert.throws(() =>
      db.transaction(() => {
        store.put({ Id: ID1, Name: '/web', Image: 'v2' });
        store.put({ Id: ID2, Name: '/db' });
        store.rename(ID1, 'front');
        store.delete(ID1);
        throw new Error('abort');
      }),
    );
    assert.deepEqual(store.get(ID1), { Id: ID1, Name: '/web', Image: 'v1' });
    assert.equal(store.get(ID2), undefined);
    assert.equal(store.getByName('web')?.Id, ID1);
    assert.deepEqual(
      store.list().map((r) => r.Id),
      [ID1],
    );
    assert.equal(store.count(), 1);
  });

  test('a failed nested savepoint undoes only its own writes (cache included)', () => {
    store.list();
    db.transaction(() => {
      store.put({ Id: ID1, Name: '/web' });
      assert.throws(() =>
        db.transaction(() => {
          store.put({ Id: ID2, Name: '/db' });
          store.rename(ID1, 'front');
          store.rename(ID2, 'front'); // conflict
        }),
      );
      assert.equal(store.get(ID1)?.Name, '/web');
      assert.equal(store.get(ID2), undefined);
    });
    assert.deepEqual(
      store.list().map((r) => r.Name),
      ['/web'],
    );
  });

  test('bareName strips one leading slash', () => {
    assert.equal(bareName('/web'), 'web');
    assert.equal(bareName('web'), 'web');
    assert.equal(bareName('//x'), '/x');
  });
});
