// The /events wire format: one JSON object per line, with the fields older API versions expect.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { EngineEvent } from '../../types/events.ts';
import { openDatabase } from '../../store/database.ts';
import { EventLog } from '../../store/events.ts';
import { eventLine, parseEventTime, registerEventRoutes, type EventsBackend } from './events.ts';

function ev(Type: string, Action: string, ID: string, Attributes: Record<string, string> = {}): EngineEvent {
  return { Type, Action, Actor: { ID, Attributes }, scope: 'local', time: 1, timeNano: 1_000_000_000n };
}

describe('wire format', () => {
  test('API < 1.52 adds status/id/from for containers and status/id for images; timeNano is exact', () => {
    const e = {
      ...ev('container', 'start', 'abc', { image: 'busybox', name: 'x' }),
      timeNano: 1_700_000_000_123_456_789n,
      time: 1_700_000_000,
    };
    const line = eventLine(e, '1.51');
    assert.match(line, /"timeNano":1700000000123456789}$/);
    const o = JSON.parse(line);
    assert.equal(o.status, 'start');
    assert.equal(o.id, 'abc');
    assert.equal(o.from, 'busybox');
    assert.equal(o.scope, 'local');
    const i = JSON.parse(eventLine(ev('image', 'tag', 'sha256:1', { name: 'a:b' }), '1.44'));
    assert.equal(i.status, 'tag');
    assert.equal('from' in i, false);
    const n = JSON.parse(eventLine(ev('network', 'create', 'n1', {}), '1.44'));
    assert.equal('status' in n, false);
  });

  test('a replayed event (attributes kept as stored text) is written exactly as the live one', () => {
    const db = openDatabase(':memory:');
    try {
      const log = new EventLog(db);
      const attrs = { '7': 'n', l: ',"image":"fake"', image: 'busybox', name: 'x' };
      const live = log.append({ Type: 'container', Action: 'create', Actor: { ID: 'abc', Attributes: attrs } });
      const [stored] = log.since(0n);
      for (const v of ['1.41', '1.51', '1.52']) assert.equal(eventLine(stored!, v), eventLine(live, v), v);
      assert.equal(JSON.parse(eventLine(stored!, '1.51')).from, 'busybox');
    } finally {
      db.close();
    }
  });
});

describe('since/until parsing', () => {
  test('unix seconds with a fraction scale like dockerd', () => {
    assert.equal(parseEventTime('1700000000', 'since'), 1_700_000_000_000_000_000n);
    assert.equal(parseEventTime('1700000000.5', 'since'), 1_700_000_000_500_000_000n);
    assert.equal(parseEventTime('1700000000.000000001', 'since'), 1_700_000_000_000_000_001n);
    assert.equal(parseEventTime('', 'since'), undefined);
    assert.equal(parseEventTime(undefined, 'since'), undefined);
  });
  test('RFC 3339 keeps sub-millisecond digits', () => {
    assert.equal(parseEventTime('2023-11-14T22:13:20.123456789Z', 'until'), 1_700_000_000_123_456_789n);
    assert.equal(parseEventTime('2023-11-14T23:13:20+01:00', 'until'), 1_700_000_000_000_000_000n);
  });
  test('garbage is a 400', () => {
    assert.throws(() => parseEventTime('10m', 'since'), /invalid value for since/);
  });
});

describe('GET /events on a fake bus', () => {
  const past = [ev('container', 'start', 'c1', { name: 'web' }), ev('network', 'create', 'n1', {})];
  const { backend, calls } = fakeBackend<EventsBackend>({ history: past, subscribe: () => () => undefined });
  const h = new RouteHarness((r) => registerEventRoutes(r, backend));
  after(() => h.close());

  test('a window in the past replays the stored events that match, one JSON object per line, then ends', async () => {
    const r = await h.request('GET', `/events?since=0&until=1&filters=${encodeURIComponent('{"type":["container"]}')}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    const lines = r.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.Actor.ID),
      ['c1'],
    );
    assert.deepEqual(
      calls.map((c) => c.method),
      ['history'],
      'no live subscription for a past window',
    );
    const seq = await h.request('GET', '/events?since=0&until=1', { headers: { Accept: 'application/json-seq' } });
    assert.equal(seq.headers['content-type'], 'application/json-seq');
    assert.ok(seq.text.startsWith('\x1e'));
  });

  test('until before since, and garbage times, are a 400 before anything is streamed', async () => {
    const r = await h.request('GET', '/events?since=10&until=5');
    assert.equal(r.status, 400);
    assert.match(r.json.message, /cannot be after/);
    assert.equal((await h.request('GET', '/events?since=yesterday')).status, 400);
    assert.equal((await h.request('GET', '/events?filters=%5B%5D')).status, 400);
  });
});
