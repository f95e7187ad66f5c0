// node-events.ts: the attributes of a node update, as dockerd's logNodeEvent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeUpdateAttributes } from './node-events.ts';

const node = { name: 'h1', availability: 'active', role: 'worker', state: 'ready' as const, manager: false };

test('an update names what changed, old and new', () => {
  assert.deepEqual(nodeUpdateAttributes(node, { ...node, availability: 'drain' }), {
    name: 'h1',
    'availability.old': 'active',
    'availability.new': 'drain',
  });
  assert.deepEqual(nodeUpdateAttributes(node, { ...node, state: 'down' }), { name: 'h1', 'state.old': 'ready', 'state.new': 'down' });
  assert.deepEqual(nodeUpdateAttributes(node, { ...node, role: 'manager' }), { name: 'h1', 'role.old': 'worker', 'role.new': 'manager' });
  assert.deepEqual(nodeUpdateAttributes(node, { ...node }), { name: 'h1' }, 'labels only: an update with the name');
});

test('a manager whose state changes changes reachability too', () => {
  const m = { ...node, role: 'manager', manager: true };
  assert.deepEqual(nodeUpdateAttributes(m, { ...m, state: 'down' }), {
    name: 'h1',
    'state.old': 'ready',
    'state.new': 'down',
    'reachability.old': 'reachable',
    'reachability.new': 'unreachable',
  });
});

test('watch: join, beat, drain, leader change, down, remove', async () => {
  const { NodeEvents } = await import('./node-events.ts');
  const nodes = new Map<string, unknown>();
  const rec = (id: string, role: string, availability = 'active') => ({
    ID: id,
    Spec: { Role: role, Availability: availability, Labels: {} },
    Description: { Hostname: `host-${id}` },
    ManagerAddr: role === 'manager' ? '127.0.0.1:2377' : undefined,
  });
  nodes.set('m1', rec('m1', 'manager'));
  nodes.set('m2', rec('m2', 'manager'));
  const watchers = new Map<string, (key: string, deleted: boolean) => void>();
  let leader = '1';
  const store = {
    list: async (prefix: string) =>
      prefix === 'nodes/'
        ? [...nodes].map(([k, v]) => ({ key: `nodes/${k}`, value: v }))
        : [{ key: 'heartbeats/m1' }, { key: 'heartbeats/m2' }],
    get: async (key: string) => {
      const v = nodes.get(key.slice('nodes/'.length));
      return v ? { key, value: v, version: 1 } : null;
    },
    watch: async (prefix: string, fn: (key: string, deleted: boolean) => void) => {
      watchers.set(prefix, fn);
      return async () => undefined;
    },
    membership: {
      leader: async () => ({ leader: leader, member: '1' }),
      list: async () => [
        { id: '1', name: 'm1', peerUrls: [], clientUrls: [] },
        { id: '2', name: 'm2', peerUrls: [], clientUrls: [] },
      ],
    },
  };
  const got: Array<{ Action: string; Actor: { ID: string; Attributes: Record<string, string> } }> = [];
  const ev = new NodeEvents(store as never, { publish: (m) => got.push(m as never) }, { debug: () => undefined } as never);
  await ev.start();
  const settle = () => new Promise((r) => setTimeout(r, 50));
  nodes.set('w1', rec('w1', 'worker'));
  watchers.get('nodes/')!('nodes/w1', false);
  await settle();
  watchers.get('heartbeats/')!('heartbeats/w1', false);
  await settle();
  nodes.set('w1', rec('w1', 'worker', 'drain'));
  watchers.get('nodes/')!('nodes/w1', false);
  leader = '2';
  await new Promise((r) => setTimeout(r, 2300));
  watchers.get('heartbeats/')!('heartbeats/m2', true);
  watchers.get('heartbeats/')!('heartbeats/w1', true);
  nodes.delete('w1');
  watchers.get('nodes/')!('nodes/w1', true);
  await settle();
  await ev.stop();
  assert.deepEqual(
    got.map((e) => [e.Action, e.Actor.ID, e.Actor.Attributes]),
    [
      ['create', 'w1', { name: 'host-w1' }],
      ['update', 'w1', { name: 'host-w1', 'state.old': 'unknown', 'state.new': 'ready' }],
      ['update', 'w1', { name: 'host-w1', 'availability.old': 'active', 'availability.new': 'drain' }],
      ['update', 'm1', { name: 'host-m1', 'leader.old': 'true', 'leader.new': 'false' }],
      ['update', 'm2', { name: 'host-m2', 'leader.old': 'false', 'leader.new': 'true' }],
      [
        'update',
        'm2',
        { name: 'host-m2', 'state.old': 'ready', 'state.new': 'down', 'reachability.old': 'reachable', 'reachability.new': 'unreachable' },
      ],
      ['update', 'w1', { name: 'host-w1', 'state.old': 'ready', 'state.new': 'down' }],
      ['remove', 'w1', { name: 'host-w1' }],
    ],
  );
});
