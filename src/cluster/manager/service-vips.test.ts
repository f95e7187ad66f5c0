// Service VIP planning: which networks get a VIP (mode vip, not dnsrr), which stay and which go.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planVips, specNetworks, vipNetworks } from './service-vips.ts';

const spec = (mode: string | undefined, nets: string[]) => ({
  Name: 'web',
  TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Networks: nets.map((Target) => ({ Target })) },
  ...(mode ? { EndpointSpec: { Mode: mode } } : {}),
});

test('VIPs for every service network in mode vip (the default), none in dnsrr', () => {
  assert.deepEqual(specNetworks(spec(undefined, ['a', 'b'])), ['a', 'b']);
  assert.deepEqual(vipNetworks(spec(undefined, ['a', 'b'])), ['a', 'b']);
  assert.deepEqual(vipNetworks(spec('vip', ['a'])), ['a']);
  assert.deepEqual(vipNetworks(spec('dnsrr', ['a'])), []);
  assert.deepEqual(vipNetworks({ Name: 'x', TaskTemplate: {} }), []);
});

test('an update keeps the VIPs of networks that stay, frees the others, claims the new', () => {
  const cur = [
    { NetworkID: 'a', Addr: '10.0.1.2/24' },
    { NetworkID: 'b', Addr: '10.0.2.2/24' },
  ];
  assert.deepEqual(planVips(cur, ['b', 'c']), {
    keep: [{ NetworkID: 'b', Addr: '10.0.2.2/24' }],
    free: [{ NetworkID: 'a', Addr: '10.0.1.2/24' }],
    claim: ['c'],
  });
  assert.deepEqual(planVips(cur, []), { keep: [], free: cur, claim: [] });
  assert.deepEqual(planVips([], ['a']), { keep: [], free: [], claim: ['a'] });
});
