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
