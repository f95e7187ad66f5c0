// Routing mesh without a kernel: which tasks a published port leads to, the node's MAC on ingress
// (the rules themselves: firewall.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OverlayEndpoint } from './contract.ts';
import { meshMac, meshTargets } from './mesh.ts';

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

test('the MAC of the node address on ingress derives from the address', () => {
  assert.equal(meshMac('10.0.0.3'), '02:42:0a:00:00:03');
  assert.equal(meshMac('192.168.255.17'), '02:42:c0:a8:ff:11');
});
