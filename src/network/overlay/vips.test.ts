// Service VIP rules without a kernel: which endpoints a VIP balances to, and the DNAT rule plan.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OverlayEndpoint } from './contract.ts';
import { vipRestore, vipTargets } from './vips.ts';

const vip = (name: string, ip: string): OverlayEndpoint => ({
  networkId: 'n1',
  endpointId: `vip-${name}`,
  containerId: '',
  name,
  aliases: [],
  ip,
  mac: '',
  nodeId: '',
  vtep: '',
  vip: true,
});

test('a VIP balances to the endpoints named tasks.<service>, sorted, without repeats', () => {
  const eps = [
    { names: ['web.2', 'tasks.web'], ip: '10.0.1.5' },
    { names: ['other.1', 'tasks.other'], ip: '10.0.1.6' },
    { names: ['web.1', 'TASKS.WEB'], ip: '10.0.1.4' },
    { names: ['web.1', 'tasks.web'], ip: '10.0.1.4' },
    { names: ['plain'], ip: '10.0.1.9' },
  ];
  assert.deepEqual(vipTargets([vip('web', '10.0.1.2'), vip('idle', '10.0.1.3')], eps), [
    { vip: '10.0.1.2', backends: ['10.0.1.4', '10.0.1.5'] },
    { vip: '10.0.1.3', backends: [] },
  ]);
});

test('DNAT plan: an even share per task through nth counters, the last rule takes the rest', () => {
  const text = vipRestore([
    { vip: '10.0.1.2', backends: ['10.0.1.4', '10.0.1.5', '10.0.1.6'] },
    { vip: '10.0.1.3', backends: [] },
    { vip: '10.0.2.2', backends: ['10.0.2.7'] },
  ]);
  assert.deepEqual(text.split('\n'), [
    '*nat',
    ':ENGINE-VIP - [0:0]',
    '-A ENGINE-VIP -d 10.0.1.2/32 -p all -m statistic --mode nth --every 3 --packet 0 -j DNAT --to-destination 10.0.1.4',
    '-A ENGINE-VIP -d 10.0.1.2/32 -p all -m statistic --mode nth --every 2 --packet 0 -j DNAT --to-destination 10.0.1.5',
    '-A ENGINE-VIP -d 10.0.1.2/32 -p all -j DNAT --to-destination 10.0.1.6',
    '-A ENGINE-VIP -d 10.0.2.2/32 -p all -j DNAT --to-destination 10.0.2.7',
    'COMMIT',
    '',
  ]);
  // No VIPs: the chain is only emptied.
  assert.equal(vipRestore([]), '*nat\n:ENGINE-VIP - [0:0]\nCOMMIT\n');
});
