import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError } from '../../errors.ts';
import {
  contains,
  formatCidr,
  formatIPv4,
  fromReverseName,
  isIPv4,
  macFromIPv4,
  overlaps,
  parseCidr,
  parseCidrWithHost,
  parseIPv4,
  within,
} from './ip4.ts';
import { AddressSpace, DEFAULT_POOLS, hostRoutes, pickSubnet, validatePools } from './ipam.ts';

describe('ip4', () => {
  test('parse and format round-trip; bad text is a 400', () => {
    assert.equal(formatIPv4(parseIPv4('172.17.0.1')), '172.17.0.1');
    assert.equal(parseIPv4('255.255.255.255'), 0xffffffff);
    for (const bad of ['256.0.0.1', '1.2.3', '01.2.3.4', 'a.b.c.d', '']) assert.equal(isIPv4(bad), false, bad);
    assert.throws(() => parseIPv4('1.2.3.400'), EngineError);
    assert.throws(() => parseCidr('10.0.0.0/33'), /invalid CIDR address/);
  });

  test('prefixes: host bits, containment, overlap', () => {
    const b = parseCidrWithHost('172.17.0.1/16');
    assert.equal(formatIPv4(b.addr), '172.17.0.1');
    assert.equal(formatCidr(b.cidr), '172.17.0.0/16');
    assert.ok(contains(b.cidr, parseIPv4('172.17.255.254')));
    assert.ok(!contains(b.cidr, parseIPv4('172.18.0.1')));
    assert.ok(overlaps(parseCidr('10.0.0.0/8'), parseCidr('10.200.0.0/24')));
    assert.ok(!overlaps(parseCidr('10.0.0.0/24'), parseCidr('10.0.1.0/24')));
    assert.ok(within(parseCidr('172.17.128.0/17'), b.cidr));
    assert.ok(!within(parseCidr('172.16.0.0/12'), b.cidr));
  });

  test("MAC from address (dockerd's 02:42 form) and reverse names", () => {
    assert.equal(macFromIPv4(parseIPv4('172.17.0.2')), '02:42:ac:11:00:02');
    assert.equal(formatIPv4(fromReverseName('2.0.17.172.in-addr.arpa')!), '172.17.0.2');
    assert.equal(fromReverseName('example.com'), undefined);
  });
});

describe('ipam', () => {
  test('subnets come from the pools, skipping taken ones and blocks that overlap them', () => {
    assert.equal(formatCidr(pickSubnet(DEFAULT_POOLS, [])!), '172.17.0.0/16');
    assert.equal(formatCidr(pickSubnet(DEFAULT_POOLS, [parseCidr('172.17.0.0/16'), parseCidr('172.18.5.0/24')])!), '172.19.0.0/16');
    const pools = [{ base: '10.10.0.0/16', size: 24 }];
    assert.equal(formatCidr(pickSubnet(pools, [parseCidr('10.10.0.0/23')])!), '10.10.2.0/24');
    assert.equal(pickSubnet([{ base: '10.10.0.0/24', size: 25 }], [parseCidr('10.0.0.0/8')]), undefined);
    assert.throws(() => validatePools([{ base: '10.0.0.0/16', size: 8 }]), /size 8 must be between 16 and 32/);
  });

  test('host routes are read from /proc/net/route (little-endian hex), the default route ignored', () => {
    const text =
      'Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n' +
      'eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n' +
      'eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n' +
      'br0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n';
    assert.deepEqual(
      hostRoutes(text).map((r) => `${r.dev} ${formatCidr(r.cidr)}`),
      ['eth0 192.0.2.0/24', 'br0 172.17.0.0/16'],
    );
  });

  test('addresses: serial allocation in the range, never network/broadcast/reserved, statics checked', () => {
    const subnet = parseCidr('10.1.0.0/29');
    const space = new AddressSpace(subnet, subnet, [parseIPv4('10.1.0.1')]);
    const got = [space.allocate(), space.allocate(), space.allocate()].map(formatIPv4);
    assert.deepEqual(got, ['10.1.0.2', '10.1.0.3', '10.1.0.4']);
    space.release(parseIPv4('10.1.0.2'));
    // Serial: the released .2 is not handed out again before the range wraps.
    assert.equal(formatIPv4(space.allocate()), '10.1.0.5');
    assert.equal(formatIPv4(space.allocate()), '10.1.0.6');
    assert.equal(formatIPv4(space.allocate()), '10.1.0.2');
    assert.throws(() => space.allocate(), /no available IPv4 addresses/);
    assert.throws(
      () => space.allocate(parseIPv4('10.1.0.3')),
      (e: EngineError) => e.status === 403 && /Address already in use/.test(e.message),
    );
    assert.throws(() => space.allocate(parseIPv4('10.2.0.3')), /no configured subnet or ip-range contain the IP address 10\.2\.0\.3/);
    const ranged = new AddressSpace(parseCidr('10.3.0.0/24'), parseCidr('10.3.0.128/25'), []);
    assert.equal(formatIPv4(ranged.allocate()), '10.3.0.129');
    // A static address may lie outside the range but inside the subnet (as dockerd).
    assert.equal(formatIPv4(ranged.allocate(parseIPv4('10.3.0.9'))), '10.3.0.9');
  });
});
