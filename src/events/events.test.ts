import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openDatabase } from '../store/database.ts';
import type { EngineEvent } from '../types/events.ts';
import { EventLog } from '../store/events.ts';
import { containerActor, containerAttributes, imageActor, imageAttributes } from './actors.ts';
import { storedAttributesText } from '../store/events.ts';
import { EventBus } from './bus.ts';
import { compileEventFilter } from './filter.ts';

function ev(Type: string, Action: string, ID: string, Attributes: Record<string, string> = {}): EngineEvent {
  return { Type, Action, Actor: { ID, Attributes }, scope: 'local', time: 1, timeNano: 1_000_000_000n };
}

const f = (o: Record<string, string[]>) => compileEventFilter(new Map(Object.entries(o)));

describe('event filters (dockerd rules)', () => {
  const c = ev('container', 'die', 'abcdef0123', { name: 'web', image: 'busybox:latest', exitCode: '0', tier: 'front' });
  const img = ev('image', 'tag', 'sha256:1234', { name: 'docker.io/library/busybox:1.36' });

  test('no filters match everything', () => assert.ok(f({})(c) && f({})(img)));

  test('type and event match exactly; values of one key are alternatives', () => {
    assert.ok(f({ type: ['container'] })(c));
    assert.ok(!f({ type: ['container'] })(img));
    assert.ok(f({ type: ['image', 'container'] })(c));
    assert.ok(f({ event: ['die'] })(c));
    assert.ok(!f({ event: ['di'] })(c));
  });

  test('health_status and exec_* filters match the suffixed actions by prefix', () => {
    const h = ev('container', 'health_status: healthy', 'abc', { name: 'x' });
    assert.ok(f({ event: ['health_status'] })(h));
    assert.ok(f({ event: ['health_status: healthy'] })(h));
    assert.ok(!f({ event: ['health_status: unhealthy'] })(h));
    assert.ok(f({ event: ['exec_start'] })(ev('container', 'exec_start: sh -c true', 'abc')));
  });

  test('container matches ID or name by prefix; other actors do not match a container filter', () => {
    assert.ok(f({ container: ['web'] })(c));
    assert.ok(f({ container: ['abcd'] })(c));
    assert.ok(f({ container: ['abcdef0123'] })(c));
    assert.ok(!f({ container: ['other'] })(c));
    assert.ok(!f({ container: ['web'] })(img));
  });

  test('image matches ID, name, and the name without its tag (also through container events)', () => {
    assert.ok(f({ image: ['sha256:1234'] })(img));
    assert.ok(f({ image: ['docker.io/library/busybox:1.36'] })(img));
    assert.ok(f({ image: ['busybox'] })(img));
    assert.ok(f({ image: ['busybox'] })(c));
    assert.ok(!f({ image: ['alpine'] })(c));
  });

  test('label: every value must match (key alone or key=value)', () => {
    assert.ok(f({ label: ['tier'] })(c));
    assert.ok(f({ label: ['tier=front'] })(c));
    assert.ok(!f({ label: ['tier=back'] })(c));
    assert.ok(!f({ label: ['tier=front', 'other'] })(c));
  });

  test('daemon, network, volume and scope', () => {
    const n = ev('network', 'connect', 'net123', { name: 'mynet', container: 'abc' });
    assert.ok(f({ network: ['mynet'] })(n));
    assert.ok(!f({ network: ['other'] })(n));
    assert.ok(!f({ volume: ['v'] })(n));
    assert.ok(f({ scope: ['local'] })(n));
    assert.ok(!f({ scope: ['swarm'] })(n));
    assert.ok(f({ daemon: ['eng'] })(ev('daemon', 'reload', 'engine-id', { name: 'host' })));
  });
});

describe('attributes', () => {
  test('container attributes: extras, labels, image, name without slash', () => {
    const a = containerAttributes({ Id: 'x', Name: '/web', Config: { Image: 'busybox', Labels: { a: '1' } } }, { exitCode: '3' });
    assert.deepEqual(a, { exitCode: '3', a: '1', image: 'busybox', name: 'web' });
  });
});

describe('EventBus', () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-bus-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('persists before delivering, with strictly increasing timestamps, and replays from the log', () => {
    const db = openDatabase(join(dir, 'a.db'));
    const bus = new EventBus({ log: new EventLog(db) });
    const seen: Array<{ ev: EngineEvent; storedAtDelivery: number }> = [];
    bus.subscribe((e) => seen.push({ ev: e, storedAtDelivery: [...bus.history(0n)].length }));
    for (let i = 0; i < 50; i++) bus.publish({ Type: 'container', Action: `a${i}`, Actor: { ID: 'c', Attributes: {} } });
    assert.equal(seen.length, 50);
    seen.forEach((s, i) => assert.equal(s.storedAtDelivery, i + 1, 'delivered before it was stored'));
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.ev.timeNano > seen[i - 1]!.ev.timeNano);
    const mid = seen[20]!.ev.timeNano;
    assert.deepEqual(
      [...bus.history(mid, seen[22]!.ev.timeNano)].map((e) => e.Action),
      ['a20', 'a21', 'a22'],
    );
    db.close();
    // A new process (new bus on the same file) still has them.
    const db2 = openDatabase(join(dir, 'a.db'));
    const bus2 = new EventBus({ log: new EventLog(db2) });
    assert.equal([...bus2.history(0n)].length, 50);
    db2.close();
  });

  test('close ends subscriptions; a failing listener does not stop the others', () => {
    const bus = new EventBus();
    let closed = 0;
    let got = 0;
    bus.subscribe(() => {
      throw new Error('boom');
    });
    bus.subscribe(
      () => got++,
      () => closed++,
    );
    bus.publish({ Type: 'daemon', Action: 'reload', Actor: { ID: 'd', Attributes: {} } });
    assert.equal(got, 1);
    bus.close();
    assert.equal(closed, 1);
    assert.equal(bus.subscribers, 0);
    let lateClosed = false;
    bus.subscribe(
      () => undefined,
      () => (lateClosed = true),
    );
    assert.ok(lateClosed);
  });
});

describe('actors with many labels', () => {
  const many = (n: number, extra: Record<string, string> = {}) => ({
    ...Object.fromEntries(Array.from({ length: n }, (_v, i) => [`l.${i}`, `v${i}`])),
    ...extra,
  });
  const rec = (labels: Record<string, string>) => ({ Id: 'c1', Name: '/web', Config: { Image: 'busybox', Labels: labels } });

  test('the attributes text is what the map serialises to, with and without the fast path', () => {
    const cases: Array<[Record<string, string>, Record<string, string>, boolean]> = [
      [many(10), {}, false], // few labels: a map
      [many(2000), { exitCode: '0' }, true],
      [many(2000, { '12': 'index key' }), {}, false],
      [many(2000, { image: 'label named image' }), {}, false],
      [many(2000, { exitCode: 'clash' }), { exitCode: '1' }, false],
      [many(2000, { __proto__x: 'p', 'q"uote': '\u2028' }), { signal: '9' }, true],
    ];
    for (const [labels, extra, text] of cases) {
      const actor = containerActor(rec(labels), extra);
      const expected = containerAttributes(rec(labels), extra);
      assert.equal(storedAttributesText(actor) !== undefined, text, JSON.stringify(Object.keys(extra)));
      if (text) assert.equal(storedAttributesText(actor), JSON.stringify(expected));
      assert.deepEqual(actor.Attributes, expected);
    }
    const img = imageActor('sha256:1', many(2000), 'big:tag');
    assert.equal(storedAttributesText(img), JSON.stringify(imageAttributes(many(2000), 'big:tag')));
  });

  test('the bus stores and delivers such an actor unchanged', () => {
    const db = openDatabase(':memory:');
    const bus = new EventBus({ log: new EventLog(db) });
    const got: EngineEvent[] = [];
    bus.subscribe((e) => got.push(e));
    const labels = many(1500);
    bus.publish({ Type: 'container', Action: 'create', Actor: containerActor(rec(labels)) });
    const [stored] = [...bus.history(0n)];
    assert.equal(storedAttributesText(stored!.Actor), JSON.stringify(containerAttributes(rec(labels))));
    assert.deepEqual(got[0]!.Actor.Attributes, containerAttributes(rec(labels)));
    db.close();
  });
});
