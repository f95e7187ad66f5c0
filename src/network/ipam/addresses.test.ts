// Address choice for endpoints: serial IPv4 addresses that skip the gateway and reserved ones,
// static addresses, the default bridge's MAC-derived IPv6 addresses, release and restart.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError } from '../../errors.ts';
import { bridgeNetwork, defaultBridgeNetwork } from '../../../test/helpers/network-records.ts';
import { AddressBook } from './addresses.ts';
import type { Attachment, NetworkRecord } from '../records.ts';

function attach(net: NetworkRecord, config: Attachment['config'] = {}): Attachment {
  return { networkId: net.Id, name: net.Name, config };
}

describe('AddressBook', () => {
  test('serial IPv4 addresses after the gateway and reserved ones, with the MAC derived from them', () => {
    const net = bridgeNetwork('n', { subnet: '10.3.0.0/24', gateway: '10.3.0.1', reserved: ['10.3.0.2'] });
    const book = new AddressBook();
    book.add(net);
    const a = book.allocate(net, attach(net), 'eth0');
    const b = book.allocate(net, attach(net), 'eth0');
    assert.equal(a.ip, '10.3.0.3');
    assert.equal(b.ip, '10.3.0.4');
    assert.equal(a.mac, '02:42:0a:03:00:03');
    assert.equal(a.prefixLen, 24);
    assert.equal(a.gateway, '10.3.0.1');
    assert.equal(a.bridge, net.x.bridge);
    assert.notEqual(a.endpointId, b.endpointId);
    assert.notEqual(a.hostIf, b.hostIf);
  });

  test("the range narrows allocation; --default-gateway (routeVia) is the endpoints' gateway", () => {
    const net = bridgeNetwork('n', { subnet: '10.4.0.0/16', gateway: '10.4.0.1', range: '10.4.7.0/24', routeVia: '10.4.0.254' });
    const book = new AddressBook();
    book.add(net);
    const ep = book.allocate(net, attach(net), 'eth0');
    assert.equal(ep.ip, '10.4.7.1');
    assert.equal(ep.gateway, '10.4.0.254');
  });

  test('a static address; the same one again is a 403; released addresses are not reused at once', () => {
    const net = bridgeNetwork('n', { subnet: '10.5.0.0/24', gateway: '10.5.0.1' });
    const book = new AddressBook();
    book.add(net);
    const fixed = book.allocate(net, attach(net, { IPAMConfig: { IPv4Address: '10.5.0.50' } }), 'eth0');
    assert.equal(fixed.ip, '10.5.0.50');
    assert.throws(
      () => book.allocate(net, attach(net, { IPAMConfig: { IPv4Address: '10.5.0.50' } }), 'eth0'),
      (e: unknown) => e instanceof EngineError && e.code === 'FORBIDDEN',
    );
    const first = book.allocate(net, attach(net), 'eth0');
    book.release(first);
    assert.equal(book.allocate(net, attach(net), 'eth0').ip, '10.5.0.3');
    book.release(fixed);
    assert.equal(book.allocate(net, attach(net, { IPAMConfig: { IPv4Address: '10.5.0.50' } }), 'eth0').ip, '10.5.0.50');
  });

  test('endpoints that survived a restart keep their addresses', () => {
    const net = bridgeNetwork('n', { subnet: '10.6.0.0/24', gateway: '10.6.0.1' });
    const book = new AddressBook();
    book.add(net);
    const old = book.allocate(net, attach(net), 'eth0');
    const after = new AddressBook();
    after.add(net);
    after.reserve(old);
    assert.equal(after.allocate(net, attach(net), 'eth0').ip, '10.6.0.3');
  });

  test('IPv6: the MAC as host part on the default bridge, serial on user networks', () => {
    const def = defaultBridgeNetwork({ subnet6: 'fd00:17::/64', gateway6: 'fd00:17::1' });
    const user = bridgeNetwork('u', { subnet6: 'fd00:18::/64', gateway6: 'fd00:18::1' });
    const book = new AddressBook();
    book.add(def);
    book.add(user);
    const a = book.allocate(def, attach(def), 'eth0');
    assert.equal(a.ip, '172.17.0.2');
    assert.equal(a.ip6, 'fd00:17::242:ac11:2');
    assert.equal(a.prefixLen6, 64);
    assert.equal(a.gateway6, 'fd00:17::1');
    assert.equal(book.allocate(user, attach(user), 'eth1').ip6, 'fd00:18::2');
    assert.equal(book.allocate(user, attach(user, { IPAMConfig: { IPv6Address: 'fd00:18::99' } }), 'eth1').ip6, 'fd00:18::99');
  });

  test('an IPv6 address that cannot be had gives the IPv4 one back', () => {
    const net = bridgeNetwork('u', { subnet: '10.7.0.0/24', gateway: '10.7.0.1', subnet6: 'fd00:19::/64', gateway6: 'fd00:19::1' });
    const book = new AddressBook();
    book.add(net);
    book.allocate(net, attach(net, { IPAMConfig: { IPv6Address: 'fd00:19::5' } }), 'eth0');
    assert.throws(
      () => book.allocate(net, attach(net, { IPAMConfig: { IPv4Address: '10.7.0.9', IPv6Address: 'fd00:19::5' } }), 'eth0'),
      /Address already in use: fd00:19::5/,
    );
    assert.equal(book.allocate(net, attach(net, { IPAMConfig: { IPv4Address: '10.7.0.9' } }), 'eth0').ip, '10.7.0.9');
  });

  test('a network without an address space (dropped, or not a bridge) is an internal error', () => {
    const net = bridgeNetwork('n');
    const book = new AddressBook();
    book.add(net);
    book.drop(net.Id);
    assert.throws(() => book.allocate(net, attach(net), 'eth0'), /has no address space/);
  });
});
