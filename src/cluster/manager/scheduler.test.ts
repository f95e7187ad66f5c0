// The scheduler's filters and choices without a cluster: reservations against node capacity,
// generic resources (discrete and named, with the named ones handed out), host-mode ports,
// spread preferences over label values, and swarmkit's explanations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeResources } from './orchestrator-loop.ts';
import { parsePreferences, pickNode, type Load, type SchedNode } from './scheduler.ts';

const node = (id: string, extra: Partial<SchedNode> = {}): SchedNode => ({
  id,
  hostname: `host-${id}`,
  role: 'worker',
  availability: 'active',
  up: true,
  labels: {},
  engineLabels: {},
  os: 'linux',
  arch: 'x86_64',
  ...extra,
});
const empty = (): Load => ({ service: new Map(), total: new Map(), use: new Map() });

test('CPU and memory reservations fill each node up to its capacity', () => {
  const r = nodeResources({ NanoCPUs: 2e9, MemoryBytes: 1e9 });
  const nodes = [node('a', { resources: r }), node('b', { resources: r })];
  const spec = { Resources: { Reservations: { NanoCPUs: 1e9, MemoryBytes: 4e8 } } };
  const load = empty();
  const got = Array.from({ length: 4 }, () => pickNode(nodes, spec, load));
  assert.deepEqual(
    got.map((g) => ('node' in g ? g.node : g.message)),
    ['a', 'b', 'a', 'b'],
  );
  assert.deepEqual(pickNode(nodes, spec, load), { message: 'no suitable node (insufficient resources on 2 nodes)' });
  // A node without a known capacity (no Description.Resources) refuses nothing.
  assert.ok('node' in pickNode([node('c')], spec, load));
});

test('generic resources: discrete counts, named ones handed out one by one', () => {
  const gpus = nodeResources({
    NanoCPUs: 8e9,
    MemoryBytes: 8e9,
    GenericResources: [
      { NamedResourceSpec: { Kind: 'gpu', Value: 'UUID1' } },
      { NamedResourceSpec: { Kind: 'gpu', Value: 'UUID2' } },
      { DiscreteResourceSpec: { Kind: 'ssd', Value: 1 } },
    ],
  });
  const nodes = [node('a', { resources: gpus }), node('b', { resources: nodeResources({ NanoCPUs: 8e9, MemoryBytes: 8e9 }) })];
  const want = (kind: string, n: number) => ({
    Resources: { Reservations: { GenericResources: [{ DiscreteResourceSpec: { Kind: kind, Value: n } }] } },
  });
  const load = empty();
  assert.deepEqual(pickNode(nodes, want('gpu', 1), load), { node: 'a', named: ['gpu=UUID1'] });
  assert.deepEqual(pickNode(nodes, want('gpu', 1), load), { node: 'a', named: ['gpu=UUID2'] });
  assert.deepEqual(pickNode(nodes, want('gpu', 1), load), { message: 'no suitable node (insufficient resources on 2 nodes)' });
  assert.deepEqual(pickNode(nodes, want('ssd', 1), load), { node: 'a', named: [] });
  assert.ok('message' in pickNode(nodes, want('ssd', 1), load));
});

test('host-mode ports: one task per node and port; mixed failures explained, most first', () => {
  const nodes = [node('a'), node('b'), node('c', { availability: 'drain' })];
  const ports = [{ Protocol: 'tcp', TargetPort: 80, PublishedPort: 8081, PublishMode: 'host' }];
  const load = empty();
  assert.equal((pickNode(nodes, {}, load, ports) as { node: string }).node, 'a');
  assert.equal((pickNode(nodes, {}, load, ports) as { node: string }).node, 'b');
  assert.deepEqual(pickNode(nodes, {}, load, ports), {
    message: 'no suitable node (host-mode port already in use on 2 nodes; 1 node not available for new tasks)',
  });
  // Another port, or udp, still fits.
  assert.ok('node' in pickNode(nodes, {}, load, [{ ...ports[0], Protocol: 'udp' }]));
});

test('spread preference: even over the label values, nodes without the label a value of their own', () => {
  const nodes = [
    node('a1', { labels: { zone: 'a' } }),
    node('a2', { labels: { zone: 'a' } }),
    node('a3', { labels: { zone: 'a' } }),
    node('b1', { labels: { zone: 'b' } }),
    node('x'),
  ];
  const spec = { Placement: { Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }] } };
  const load = empty();
  const zoneOf = (id: string) => (id === 'x' ? '-' : id[0]!);
  const picks = Array.from({ length: 6 }, () => zoneOf((pickNode(nodes, spec, load) as { node: string }).node));
  const count = (z: string) => picks.filter((p) => p === z).length;
  assert.deepEqual([count('a'), count('b'), count('-')], [2, 2, 2], `picks ${picks}`);
  // Without the preference, spreading by node puts 3 of 5 into zone a.
  const plain = empty();
  const nodesPicked = Array.from({ length: 5 }, () => (pickNode(nodes, {}, plain) as { node: string }).node);
  assert.equal(nodesPicked.filter((n) => n.startsWith('a')).length, 3);
  // Any descriptor is taken, as swarmkit takes it (docker-py's tests spread over "com.dockerpy.test").
  parsePreferences([{ Spread: { SpreadDescriptor: 'com.dockerpy.test' } }]);
  assert.throws(() => parsePreferences({ Spread: {} }), /must be a list/);
  const other = empty();
  const picked = Array.from(
    { length: 4 },
    () => (pickNode(nodes, { Placement: { Preferences: [{ Spread: { SpreadDescriptor: 'colour' } }] } }, other) as { node: string }).node,
  );
  assert.equal(new Set(picked).size, 4, `an unknown descriptor leaves the plain spread over nodes: ${picked}`);
});
