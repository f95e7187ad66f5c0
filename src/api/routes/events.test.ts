// The /events wire format: one JSON object per line, with the fields older API versions expect.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EngineEvent } from '../../types/events.ts';
import { eventLine } from './events.ts';

function ev(Type: string, Action: string, ID: string, Attributes: Record<string, string> = {}): EngineEvent {
  return { Type, Action, Actor: { ID, Attributes }, scope: 'local', time: 1, timeNano: 1_000_000_000n };
}

describe('wire format', () => {
  test('API < 1.52 adds status/id/from for containers and status/id for images; timeNano is exact', () => {
    const e = { ...ev('container', 'start', 'abc', { image: 'busybox', name: 'x' }), timeNano: 1_700_000_000_123_456_789n, time: 1_700_000_000 };
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
});
