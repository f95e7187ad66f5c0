import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError } from '../../errors.ts';
import {
  addressFromMac,
  bytesOf6,
  contains6,
  formatCidr6,
  formatIPv6,
  fromReverseName6,
  isIPv6,
  overlaps6,
  parseCidr6,
  parseCidr6WithHost,
  parseIPv6,
  ulaBase,
  within6,
} from './ip6.ts';
import { AddressSpace6, hostRoutes6, pickSubnet, pickSubnet6, validatePools } from './ipam.ts';

describe('ip6', () => {
  test('parses every text form and prints RFC 5952 canonical text', () => {
    const cases: Array<[string, string]> = [
      ['fd00::1', 'fd00::1'],
      ['FD00:0000:0000:0000:0000:0000:0000:0001', 'fd00::1'],
      ['::', '::'],
      ['::1', '::1'],
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // the first of two equal runs
      ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group is not shortened
      ['::ffff:192.0.2.1', '::ffff:c000:201'],
      ['fd42:1:2:3:0:242:ac11:2', 'fd42:1:2:3:0:242:ac11:2'],
    ];
    for (const [text, canonical] of cases) assert.equal(formatIPv6(parseIPv6(text)), canonical, text);
    for (const bad of ['1.2.3.4', 'fd00::1::2', 'fd00:::1', '1:2:3:4:5:6:7:8:9', 'g::1', 'fe80::1%eth0', '', '12345::'])
      assert.equal(isIPv6(bad), false, bad);
    assert.throws(() => parseIPv6('nope'), EngineError);
  });

  test('prefixes: host bits, containment, overlap, bad lengths', () => {
    const b = parseCidr6WithHost('fd42:9::1/64');
    assert.equal(formatIPv6(b.addr), 'fd42:9::1');
    assert.equal(formatCidr6(b.cidr), 'fd42:9::/64');
    assert.ok(contains6(b.cidr, parseIPv6('fd42:9::ffff:1')));
    assert.ok(!contains6(b.cidr, parseIPv6('fd42:a::1')));
    assert.ok(overlaps6(parseCidr6('fd42::/16'), parseCidr6('fd42:9::/64')));
    assert.ok(!overlaps6(parseCidr6('fd42:9::/64'), parseCidr6('fd42:a::/64')));
    assert.ok(within6(parseCidr6('fd42:9::/80'), b.cidr));
    assert.throws(() => parseCidr6('fd00::/129'), /invalid CIDR address/);
    assert.throws(() => parseCidr6('fd00::'), /invalid CIDR address/);
  });

  test('the ULA /48 is stable per daemon ID and differs between daemons', () => {
    const a = ulaBase('daemon-a');
    assert.match(a, /^fd[0-9a-f]{2}:[0-9a-f]{1,4}:[0-9a-f]{1,4}::\/48$/);
    assert.equal(ulaBase('daemon-a'), a);
    assert.notEqual(ulaBase('daemon-b'), a);
  });

  test('MAC-derived host part (default bridge), reverse names, record bytes', () => {
    const subnet = parseCidr6('fd42:1:2:3::/64');
    assert.equal(formatIPv6(addressFromMac(subnet, '02:42:ac:11:00:02')!), 'fd42:1:2:3:0:242:ac11:2');
    assert.equal(addressFromMac(parseCidr6('fd42::/96'), '02:42:ac:11:00:02'), undefined, 'no room for 48 bits');
    const rev = '2.0.0.0.1.1.c.a.2.4.2.0.0.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.2.4.d.f.ip6.arpa';
    assert.equal(formatIPv6(fromReverseName6(rev)!), 'fd42:1:2:3:0:242:ac11:2');
    assert.equal(fromReverseName6('2.0.17.172.in-addr.arpa'), undefined);
    assert.equal(bytesOf6(parseIPv6('fd00::1')).toString('hex'), 'fd000000000000000000000000000001');
  });
});

describe('IPv6 address management', () => {
  test('pools: IPv6 bases validated; each family picks from its own pools only', () => {
    validatePools([
      { base: 'fd00:aa::/56', size: 64 },
      { base: '10.0.0.0/8', size: 24 },
    ]);
    assert.throws(() => validatePools([{ base: 'fd00:aa::/56', size: 48 }]), /size 48 must be between 56 and 128/);
    const pools = [
      { base: '10.10.0.0/16', size: 24 },
      { base: 'fd00:aa::/56', size: 64 },
    ];
    assert.equal(formatCidr6(pickSubnet6(pools, [parseCidr6('fd00:aa::/64'), parseCidr6('fd00:aa:0:1::/64')])!), 'fd00:aa:0:2::/64');
    assert.equal(pickSubnet6([{ base: '10.10.0.0/16', size: 24 }], []), undefined);
    assert.ok(pickSubnet(pools, []), 'the IPv4 pool still serves IPv4');
    // A taken block wider than one candidate is skipped whole.
    assert.equal(formatCidr6(pickSubnet6([{ base: 'fd00:aa::/56', size: 64 }], [parseCidr6('fd00:aa::/60')])!), 'fd00:aa:0:10::/64');
    assert.equal(pickSubnet6([{ base: 'fd00:aa::/63', size: 64 }], [parseCidr6('fd00:aa::/63')]), undefined);
  });

  test('host routes from /proc/net/ipv6_route: default, link-local, multicast and lo left out', () => {
    const text = [
      'fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0',
      'fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000002 00000000 00000001     eth0',
      '00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0',
      '00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo',
      'ff000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0',
    ].join('\n');
    assert.deepEqual(
      hostRoutes6(text).map((r) => `${r.dev} ${formatCidr6(r.cidr)}`),
      ['eth0 fd00::/64'],
    );
  });

  test('allocation: serial after the last, never the subnet-router or reserved addresses; static ones checked', () => {
    const subnet = parseCidr6('fd42:9::/64');
    const space = new AddressSpace6(subnet, subnet, [parseIPv6('fd42:9::1')]);
    assert.equal(formatIPv6(space.allocate()), 'fd42:9::2');
    assert.equal(formatIPv6(space.allocate()), 'fd42:9::3');
    space.release(parseIPv6('fd42:9::2'));
    assert.equal(formatIPv6(space.allocate()), 'fd42:9::4', 'a released address is not reused at once');
    assert.equal(formatIPv6(space.allocate(parseIPv6('fd42:9::99'))), 'fd42:9::99');
    assert.throws(
      () => space.allocate(parseIPv6('fd42:9::99')),
      (e: EngineError) => e.code === 'FORBIDDEN' && /Address already in use/.test(e.message),
    );
    assert.throws(() => space.allocate(parseIPv6('fd42:9::1')), /Address already in use/);
    assert.throws(() => space.allocate(parseIPv6('fd43::1')), /no configured subnet or ip-range contain/);
    const range = parseCidr6('fd42:9::8/126');
    const small = new AddressSpace6(subnet, range, []);
    const got = [small.allocate(), small.allocate(), small.allocate(), small.allocate()].map(formatIPv6).sort();
    assert.deepEqual(got, ['fd42:9::8', 'fd42:9::9', 'fd42:9::a', 'fd42:9::b']);
    assert.throws(
      () => small.allocate(),
      (e: EngineError) => e.code === 'UNAVAILABLE',
    );
  });
});
