// Subnet choice for new networks: what is taken (the daemon's networks, the host's routes on other
// devices), the IPv6 pools (configured, else the daemon's ULA /48), a new network's IPv6 facts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError } from '../../errors.ts';
import { bridgeNetwork } from '../../../test/helpers/network-records.ts';
import { formatCidr, parseCidr } from './ip4.ts';
import { formatCidr6, parseCidr6, ulaBase } from './ip6.ts';
import { checkFreeSubnet, newIPv6Facts, pools6, takenSubnets, takenSubnets6 } from './subnets.ts';

const a = bridgeNetwork('a', { bridge: 'br-a', subnet: '10.10.0.0/24', subnet6: 'fd00:a::/64', gateway6: 'fd00:a::1' });
const b = bridgeNetwork('b', { bridge: 'br-b', subnet: '10.11.0.0/24' });

describe('subnets', () => {
  test("taken IPv4 subnets: the networks' and the host's routes, not the routes of our own bridges", () => {
    const routes = [
      { dev: 'eth0', cidr: parseCidr('192.168.1.0/24') },
      { dev: 'br-a', cidr: parseCidr('10.10.0.0/24') },
      { dev: 'br-new', cidr: parseCidr('10.99.0.0/24') },
    ];
    assert.deepEqual(takenSubnets([a, b], routes).map(formatCidr), ['192.168.1.0/24', '10.99.0.0/24', '10.10.0.0/24', '10.11.0.0/24']);
    // A network set up again (the default bridge at start-up) does not collide with itself.
    assert.deepEqual(takenSubnets([a, b], routes, 'br-new', a.Id).map(formatCidr), ['192.168.1.0/24', '10.11.0.0/24']);
  });

  test('taken IPv6 subnets', () => {
    const routes = [
      { dev: 'eth0', cidr: parseCidr6('2001:db8::/64') },
      { dev: 'br-a', cidr: parseCidr6('fd00:a::/64') },
    ];
    assert.deepEqual(takenSubnets6([a, b], routes).map(formatCidr6), ['2001:db8::/64', 'fd00:a::/64']);
  });

  test('IPv6 pools: the configured IPv6 ones, else /64s of the ULA /48 derived from the seed', () => {
    assert.deepEqual(pools6([{ base: '10.0.0.0/8', size: 24 }], 'daemon-1'), [{ base: ulaBase('daemon-1'), size: 64 }]);
    assert.notEqual(ulaBase('daemon-1'), ulaBase('daemon-2'));
    const mine = [
      { base: '10.0.0.0/8', size: 24 },
      { base: 'fd99::/56', size: 64 },
    ];
    assert.deepEqual(pools6(mine, 'daemon-1'), [{ base: 'fd99::/56', size: 64 }]);
  });

  test('a given IPv4 subnet must be free', () => {
    checkFreeSubnet([a, b], parseCidr('10.12.0.0/24'));
    assert.throws(
      () => checkFreeSubnet([a, b], parseCidr('10.10.0.128/25')),
      (e: unknown) => e instanceof EngineError && e.code === 'FORBIDDEN' && /Pool overlaps/.test(e.message),
    );
  });

  test("a new network's IPv6 facts: picked from the pools, avoiding what is taken", () => {
    const facts = newIPv6Facts([a], [{ base: 'fd00:a::/63', size: 64 }], [], undefined);
    assert.deepEqual(facts, { subnet6: 'fd00:a:0:1::/64', gateway6: 'fd00:a:0:1::1', userSubnet6: false, reserved6: [] });
    assert.throws(() => newIPv6Facts([a], [{ base: 'fd00:a::/64', size: 64 }], [], undefined), /fully subnetted/);
  });

  test('a given IPv6 subnet: its gateway normalised, range, reserved IPv6 addresses only; overlap is a 403', () => {
    const facts = newIPv6Facts([a], [], [], {
      Subnet: 'fd00:b::/64',
      Gateway: 'fd00:b:0:0::fe',
      IPRange: 'fd00:b::/80',
      AuxiliaryAddresses: { x: 'fd00:b::0:9', y: '10.0.0.1' },
    });
    assert.deepEqual(facts, {
      subnet6: 'fd00:b::/64',
      gateway6: 'fd00:b::fe',
      userSubnet6: true,
      range6: 'fd00:b::/80',
      reserved6: ['fd00:b::9'],
    });
    assert.throws(() => newIPv6Facts([a], [], [], { Subnet: 'fd00:a::/48' }), /Pool overlaps/);
  });
});
