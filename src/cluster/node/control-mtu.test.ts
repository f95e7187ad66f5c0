// The TCPMSS rule of --network-control-plane-mtu: MSS = MTU − 40 (IPv4) / − 60 (IPv6) on the
// control ports; none at the default MTU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controlPorts, mssRule } from './control-mtu.ts';

test('the rule clamps SYNs on the control ports to the MTU; the default MTU asks for none', () => {
  const ports = [...controlPorts(2377), ...controlPorts(2377), ...controlPorts(4000)];
  const r = mssRule(1400, ports, false, 'node1');
  assert.deepEqual(r, [
    '-p',
    'tcp',
    '--tcp-flags',
    'SYN,RST',
    'SYN',
    '-m',
    'multiport',
    '--ports',
    '2377,2379,2380,4000,4002,4003',
    '-m',
    'comment',
    '--comment',
    'engine-cluster-mtu:node1',
    '-j',
    'TCPMSS',
    '--set-mss',
    '1360',
  ]);
  assert.equal(mssRule(1400, ports, true, 'node1')?.at(-1), '1340');
  assert.equal(mssRule(1500, ports, false, 'node1'), null);
  assert.equal(mssRule(0, ports, false, 'node1'), null);
  // iptables multiport takes 15 ports at most.
  const many = Array.from({ length: 30 }, (_, i) => 3000 + i);
  assert.equal(mssRule(9000, many, false, 'n')?.[8]?.split(',').length, 15);
});
