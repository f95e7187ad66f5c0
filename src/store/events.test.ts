import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { openDatabase, type EngineDatabase } from './database.ts';
import { EventLog, eventToJSON, storedAttribute, storedAttributesText, wallClockNanos, type EventInput } from './events.ts';
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

const BASE = 1_700_000_000_123_456_789n; // > 2^53: must round-trip exactly
const ev = (action: string, timeNano?: bigint, attrs: Record<string, string> = {}): EventInput => ({
  Type: 'container',
  Action: action,
  Actor: { ID: `id-${action}`, Attributes: attrs },
  ...(timeNano === undefined ? {} : { timeNano }),
});
const actions = (list: { Action: string }[]) => list.map((e) => e.Action);

describe('EventLog', () => {
  test('append fills time, timeNano and scope, and since() replays the stored event exactly', () => {
    const log = new EventLog(db);
    const before = wallClockNanos();
    const appended = log.append(ev('start', undefined, { image: 'busybox', name: 'web' }));
    assert.ok(appended.timeNano >= before && appended.timeNano <= wallClockNanos());
    assert.equal(appended.time, Number(appended.timeNano / 1_000_000_000n));
    assert.equal(appended.scope, 'local');
    assert.deepEqual(log.since(0n), [appended]);
  });

  test('replayed attributes keep their stored text, parsed only when read', () => {
    const log = new EventLog(db);
    const attrs = { '2': 'two', 'a"b': 'x\\', image: 'img,"image":"no"', name: 'web', __proto__x: '\u2028' };
    log.append(ev('create', undefined, attrs));
    const [replayed] = log.since(0n);
    assert.equal(storedAttributesText(replayed!.Actor), JSON.stringify(attrs));
    assert.deepEqual(replayed!.Actor.Attributes, attrs);
    assert.equal(JSON.stringify(replayed!.Actor), JSON.stringify({ ID: 'id-create', Attributes: attrs }));
    replayed!.Actor.Attributes = { changed: '1' };
    assert.equal(storedAttributesText(replayed!.Actor), undefined, 'a replaced map is not the stored text any more');
  });

  test('a replay is the events stored when it was asked for, read in pages however large they are', () => {
    const log = new EventLog(db);
    for (let i = 0; i < 600; i++) log.append(ev(`a${i}`, BASE + BigInt(i), i % 100 === 0 ? { big: 'x'.repeat(600_000) } : {}));
    const replay = log.replay(BASE + 10n);
    log.append(ev('later', BASE + 1000n));
    const got = [...replay];
    assert.equal(got.length, 590, 'the event appended after the call is not in it');
    assert.deepEqual(
      actions(got),
      Array.from({ length: 590 }, (_v, i) => `a${i + 10}`),
    );
    assert.equal(got[90]!.Actor.Attributes.big!.length, 600_000);
    assert.deepEqual(actions(log.since(BASE + 599n)), ['a599', 'later']);
  });

  test('storedAttribute finds a key, never text inside a value', () => {
    const text = (o: Record<string, string>) => JSON.stringify(o);
    assert.equal(storedAttribute(text({ image: 'a' }), 'image'), 'a');
    assert.equal(storedAttribute(text({ l: ',"image":"fake"', image: 'real"\\' }), 'image'), 'real"\\');
    assert.equal(storedAttribute(text({ l: 'x\\', image: 'b' }), 'image'), 'b');
    assert.equal(storedAttribute(text({ l: '{"image":"fake"}' }), 'image'), undefined);
    assert.equal(storedAttribute('{}', 'image'), undefined);
  });

  test('timeNano beyond 2^53 is stored exactly', () => {
    const log = new EventLog(db, { nowNano: () => BASE });
    log.append(ev('create', BASE));
    const [got] = log.since(BASE);
    assert.equal(got!.timeNano, BASE);
    assert.equal(got!.time, 1_700_000_000);
  });

  test('since/until are inclusive and the order is append order', () => {
    const log = new EventLog(db, { nowNano: () => BASE + 100n });
    log.append(ev('a', BASE + 10n));
    log.append(ev('b', BASE + 20n));
    log.append(ev('c', BASE + 15n)); // clock went back: still replayed after b
    log.append(ev('d', BASE + 30n));
    assert.deepEqual(actions(log.since(BASE)), ['a', 'b', 'c', 'd']);
    assert.deepEqual(actions(log.since(BASE + 15n)), ['b', 'c', 'd']);
    assert.deepEqual(actions(log.since(BASE + 15n, BASE + 20n)), ['b', 'c']);
    assert.deepEqual(actions(log.since(BASE + 31n)), []);
  });

  test('events survive reopening', () => {
    const log = new EventLog(db);
    log.append(ev('create'));
    log.append(ev('start'));
    db.close();
    db = openDatabase(tmp.file('engine.db'));
    const again = new EventLog(db);
    assert.deepEqual(actions(again.since(0n)), ['create', 'start']);
    assert.equal(again.lastSeq(), 2);
  });

  test('retention keeps the newest maxEvents, trimming every trimEvery appends', () => {
    const log = new EventLog(db, { maxEvents: 5, trimEvery: 4, nowNano: () => BASE });
    for (let i = 1; i <= 7; i++) log.append(ev(`e${i}`, BASE));
    // Trimmed after the 4th append only (nothing to drop yet); 7 are kept until the next trim.
    assert.equal(log.count(), 7);
    log.append(ev('e8', BASE)); // 4th append since the last trim
    assert.deepEqual(actions(log.since(0n)), ['e4', 'e5', 'e6', 'e7', 'e8']);
    assert.equal(log.lastSeq(), 8);
  });

  test('retention drops events older than maxAgeMs', () => {
    let now = BASE;
    const log = new EventLog(db, { maxAgeMs: 1000, trimEvery: 1_000_000, nowNano: () => now });
    log.append(ev('old', BASE - 2_000_000_000n));
    log.append(ev('recent', BASE - 500_000_000n));
    log.append(ev('now', BASE));
    assert.equal(log.trim(), 1);
    assert.deepEqual(actions(log.since(0n)), ['recent', 'now']);
    now = BASE + 10_000_000_000n;
    assert.equal(log.trim(), 2);
    assert.equal(log.count(), 0);
  });

  test('retention runs when the log is opened', () => {
    const log = new EventLog(db, { nowNano: () => BASE });
    for (let i = 0; i < 10; i++) log.append(ev(`e${i}`, BASE));
    const reopened = new EventLog(db, { maxEvents: 3, nowNano: () => BASE });
    assert.deepEqual(actions(reopened.since(0n)), ['e7', 'e8', 'e9']);
  });

  test('sequence numbers are never reused after trimming', () => {
    const log = new EventLog(db, { maxEvents: 1, nowNano: () => BASE });
    log.append(ev('a', BASE));
    log.append(ev('b', BASE));
    log.trim();
    log.append(ev('c', BASE));
    assert.equal(log.lastSeq(), 3);
    const seqs = (db.statement('SELECT seq FROM events ORDER BY seq').all() as Array<{ seq: number }>).map((r) => r.seq);
    assert.deepEqual(seqs, [2, 3]);
  });

  test('appendMany writes all or nothing', () => {
    const log = new EventLog(db);
    const written = log.appendMany([ev('a'), ev('b')]);
    assert.deepEqual(actions(written), ['a', 'b']);
    const bad = ev('c') as EventInput & { Actor: { Attributes: Record<string, unknown> } };
    bad.Actor.Attributes = { n: 1n as unknown as string }; // JSON.stringify throws on bigint
    assert.throws(() => log.appendMany([ev('x'), bad]), TypeError);
    assert.deepEqual(actions(log.since(0n)), ['a', 'b']);
  });

  test('an append inside a rolled-back transaction is not kept', () => {
    const log = new EventLog(db);
    assert.throws(() =>
      db.transaction(() => {
        log.append(ev('ghost'));
        throw new Error('abort');
      }),
    );
    assert.equal(log.count(), 0);
  });

  test('eventToJSON writes timeNano as an exact integer', () => {
    const log = new EventLog(db);
    const e = log.append(ev('die', BASE, { exitCode: '0' }));
    const json = eventToJSON(e);
    assert.match(json, /"timeNano":1700000000123456789}$/);
    const parsed = JSON.parse(json) as Record<string, unknown>;
    assert.deepEqual(
      { ...parsed, timeNano: undefined },
      {
        Type: 'container',
        Action: 'die',
        Actor: { ID: 'id-die', Attributes: { exitCode: '0' } },
        scope: 'local',
        time: 1700000000,
        timeNano: undefined,
      },
    );
  });
});
