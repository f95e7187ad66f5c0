// Routing mesh rules without a kernel: which tasks a published port leads to, the DNAT/SNAT plan.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OverlayEndpoint } from './contract.ts';
import { meshMac, meshRestore, meshTargets } from './mesh.ts';

const vip = (name: string, ports: OverlayEndpoint['ports']): OverlayEndpoint => ({
  networkId: 'ing',
  endpointId: `vip-${name}`,
  containerId: '',
  name,
  aliases: [],
  ip: '10.0.0.2',
  mac: '',
  nodeId: '',
  vtep: '',
  vip: true,
  ...(ports ? { ports } : {}),
});

test('each published port leads to the ingress addresses of its tasks', () => {
  const eps = [
    { names: ['tasks.pub'], ip: '10.0.0.6' },
    { names: ['tasks.pub'], ip: '10.0.0.5' },
    { names: ['tasks.other'], ip: '10.0.0.7' },
  ];
  const targets = meshTargets(
    [
      vip('pub', [
        { proto: 'udp', published: 53, target: 5353 },
        { proto: 'tcp', published: 8080, target: 80 },
      ]),
    ],
    eps,
  );
  assert.deepEqual(targets, [
    { port: { proto: 'udp', published: 53, target: 5353 }, backends: ['10.0.0.5', '10.0.0.6'] },
    { port: { proto: 'tcp', published: 8080, target: 80 }, backends: ['10.0.0.5', '10.0.0.6'] },
  ]);
  assert.deepEqual(meshTargets([vip('none', undefined)], eps), []);
});

test('DNAT per task (nth), SNAT out of the ingress bridge to the node address, forwarding allowed', () => {
  const text = meshRestore(
    [{ port: { proto: 'tcp', published: 8080, target: 80 }, backends: ['10.0.0.5', '10.0.0.6'] }],
    'ov-abc',
    '10.0.0.3',
  );
  assert.deepEqual(text.split('\n'), [
    '*nat',
    ':ENGINE-MESH - [0:0]',
    ':ENGINE-MESH-POST - [0:0]',
    '-A ENGINE-MESH -p tcp --dport 8080 -m statistic --mode nth --every 2 --packet 0 -j DNAT --to-destination 10.0.0.5:80',
    '-A ENGINE-MESH -p tcp --dport 8080 -j DNAT --to-destination 10.0.0.6:80',
    '-A ENGINE-MESH-POST -o ov-abc -m conntrack --ctstate DNAT -j SNAT --to-source 10.0.0.3',
    'COMMIT',
    '*filter',
    ':ENGINE-MESH-FWD - [0:0]',
    '-A ENGINE-MESH-FWD -o ov-abc -m conntrack --ctstate DNAT -j ACCEPT',
    '-A ENGINE-MESH-FWD -i ov-abc -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    'COMMIT',
    '',
  ]);
  // Nothing published: the chains are emptied.
  assert.equal(
    meshRestore([], 'ov-abc', '10.0.0.3'),
    '*nat\n:ENGINE-MESH - [0:0]\n:ENGINE-MESH-POST - [0:0]\nCOMMIT\n*filter\n:ENGINE-MESH-FWD - [0:0]\nCOMMIT\n',
  );
  assert.equal(meshMac('10.0.0.3'), '02:42:0a:00:00:03');
});

test('sctp ports get their own DNAT (the kernel NATs sctp like tcp)', () => {
  const text = meshRestore([{ port: { proto: 'sctp', published: 30000, target: 9 }, backends: ['10.0.0.5'] }], 'ov-abc', '10.0.0.3');
  assert.ok(text.split('\n').includes('-A ENGINE-MESH -p sctp --dport 30000 -j DNAT --to-destination 10.0.0.5:9'));
});
