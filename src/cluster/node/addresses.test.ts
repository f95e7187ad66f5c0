// The advertise address of init/join, as dockerd resolves it: the request's, else
// --cluster-default-advertise-addr (an IP or an interface name, with the listen port), else the
// system's address (the one device link's, else any link's outside the daemon's own networks).
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { chooseAdvertise, isGlobalUnicast, joinAdvertise, parseAddr, resolveSystemAddr, type SystemLink } from './addresses.ts';

const link = (name: string, kind: string, addrs: string[], up = true): SystemLink => ({ name, kind, up, loopback: name === 'lo', addrs });
const lo = link('lo', '', ['127.0.0.1', '::1']);
const none = () => [];
const noLinks = () => Promise.reject(new Error('the system address was not needed'));

test('the request, then the daemon default (IP or interface), then the system address', async () => {
  const anyListen = parseAddr('0.0.0.0:2377', 2377, 'listen address');
  const listen = parseAddr('10.1.1.1:4000', 2377, 'listen address');
  assert.deepEqual(await chooseAdvertise(listen, '10.2.2.2', '10.3.3.3', none, noLinks), { host: '10.2.2.2', port: 4000 });
  assert.deepEqual(await chooseAdvertise(listen, '10.2.2.2:5000', '10.3.3.3', none, noLinks), { host: '10.2.2.2', port: 5000 });
  assert.deepEqual(await chooseAdvertise(listen, undefined, '10.3.3.3', none, noLinks), { host: '10.3.3.3', port: 4000 });
  assert.deepEqual(await chooseAdvertise(anyListen, '', 'fd00::3', none, noLinks), { host: 'fd00::3', port: 2377 });
  // A specific listen address is not the advertise address (dockerd does not use it either).
  const links = async () => [lo, link('eth0', '', ['192.0.2.7'])];
  assert.deepEqual(await chooseAdvertise(listen, undefined, undefined, none, links), { host: '192.0.2.7', port: 4000 });
  // An interface name: its one IPv4 address (lo: 127.0.0.1).
  const lo4 = networkInterfaces().lo?.filter((a) => a.family === 'IPv4') ?? [];
  if (lo4.length === 1)
    assert.deepEqual(await chooseAdvertise(anyListen, undefined, 'lo', none, noLinks), { host: lo4[0]!.address, port: 2377 });
  await assert.rejects(
    chooseAdvertise(anyListen, undefined, 'nosuchif0', none, noLinks),
    /invalid default advertise address: no such interface "nosuchif0"/,
  );
  await assert.rejects(chooseAdvertise(anyListen, '0.0.0.0', undefined, none, noLinks), /advertise address must be a non-zero IP address/);
  await assert.rejects(
    chooseAdvertise(anyListen, undefined, '0.0.0.0', none, noLinks),
    /must be a non-zero IP address or network interface/,
  );
});

test("the system address: the device link's, bridges and veths aside; IPv4 over IPv6 on one link", () => {
  const host = [
    lo,
    link('eth0', '', ['192.0.2.2', 'fd00::2', 'fe80::fc:ff:fe00:1']),
    link('docker0', 'bridge', ['172.17.0.1', 'fe80::1']),
    link('veth1', 'veth', ['fe80::2']),
  ];
  assert.equal(resolveSystemAddr({ links: host, managedSubnets: [] }), '192.0.2.2');
  // A device that is down, or has link-local addresses only, does not count.
  assert.equal(
    resolveSystemAddr({ links: [...host, link('eth1', '', ['10.9.9.9'], false), link('eth2', '', ['fe80::9'])], managedSubnets: [] }),
    '192.0.2.2',
  );
  assert.equal(resolveSystemAddr({ links: [lo, link('eth0', '', ['fd00::5', 'fe80::5'])], managedSubnets: [] }), 'fd00::5');
  const two = [...host, link('eth1', '', ['10.0.0.5'])];
  assert.throws(
    () => resolveSystemAddr({ links: two, managedSubnets: [] }),
    (e: Error & { status?: number }) =>
      e.status === 400 &&
      e.message ===
        'could not choose an IP address to advertise since this system has multiple addresses on different interfaces (192.0.2.2 on eth0 and 10.0.0.5 on eth1)',
  );
  assert.throws(() => resolveSystemAddr({ links: [lo, link('eth0', '', ['192.0.2.2', '192.0.2.3'])], managedSubnets: [] }), {
    message:
      'could not choose an IP address to advertise since this system has multiple addresses on interface eth0 (192.0.2.2 and 192.0.2.3)',
  });
});

test("no device link (a daemon in a container, veths only): any up link outside the daemon's own networks", () => {
  const inContainer = [
    lo,
    link('eth0', 'veth', ['10.5.0.2']),
    link('engine0', 'bridge', ['172.17.0.1']),
    link('down0', 'veth', ['10.6.0.2'], false),
  ];
  assert.equal(resolveSystemAddr({ links: inContainer, managedSubnets: ['172.17.0.0/16'] }), '10.5.0.2');
  assert.throws(
    () => resolveSystemAddr({ links: inContainer, managedSubnets: [] }),
    /multiple addresses on different interfaces \(10\.5\.0\.2 on eth0 and 172\.17\.0\.1 on engine0\)/,
  );
  assert.throws(() => resolveSystemAddr({ links: [lo], managedSubnets: [] }), { message: "could not find the system's IP address" });
});

test("Go's IsGlobalUnicast", () => {
  for (const ip of ['10.0.0.1', '192.0.2.2', '172.17.0.1', 'fd00::2', '2001:db8::1', '::ffff:10.0.0.1'])
    assert.equal(isGlobalUnicast(ip), true, ip);
  for (const ip of ['0.0.0.0', '127.0.0.1', '169.254.1.1', '224.0.0.1', '255.255.255.255', '::', '::1', 'fe80::1', 'febf::1', 'ff02::1'])
    assert.equal(isGlobalUnicast(ip), false, ip);
});

test('join: only a given advertise address is resolved (a bad one ignored); none is left to the manager', async () => {
  const listen = parseAddr('0.0.0.0:2400', 2377, 'listen address');
  assert.deepEqual(await joinAdvertise(listen, '10.2.2.2', none), { host: '10.2.2.2', port: 2400 });
  assert.deepEqual(await joinAdvertise(listen, undefined, none), { host: '0.0.0.0', port: 2400 });
  assert.deepEqual(await joinAdvertise(listen, 'nosuchif0', none), { host: '0.0.0.0', port: 2400 });
});
