// The container-to-network rules: which networks a create request configures, and dockerd's
// refusals (modes, static addresses, aliases, MAC addresses), over fixed network records.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError } from '../errors.ts';
import { bridgeNetwork, defaultBridgeNetwork, lookupOf, specialNetwork } from '../../test/helpers/network-records.ts';
import { attachmentsFor, attachmentsOrNone, validateEndpoint } from './attachments.ts';

const bridge = defaultBridgeNetwork();
const user = bridgeNetwork('front', {
  userSubnet: true,
  subnet: '10.5.0.0/24',
  gateway: '10.5.0.1',
  subnet6: 'fd00:5::/64',
  gateway6: 'fd00:5::1',
  userSubnet6: true,
});
const pooled = bridgeNetwork('pooled');
const host = specialNetwork('host');
const none = specialNetwork('none');
const nets = lookupOf([bridge, user, pooled, host, none]);

function refusal(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof EngineError && err.code === 'INVALID_PARAMETER' && pattern.test(err.message));
}

describe('attachmentsFor', () => {
  test('default mode: the default bridge; "default" endpoint settings apply to it', () => {
    const out = attachmentsFor(nets, {}, {}, { EndpointsConfig: { default: { MacAddress: '02-42-AA-BB-CC-DD' } } });
    assert.deepEqual(out, [{ networkId: bridge.Id, name: 'bridge', config: { MacAddress: '02:42:aa:bb:cc:dd' } }]);
  });

  test('the Config.MacAddress of old clients goes to the primary network unless its endpoint has one', () => {
    assert.equal(
      attachmentsFor(nets, { NetworkMode: 'front' }, { MacAddress: '02:00:00:00:00:01' }, undefined)[0]?.config.MacAddress,
      '02:00:00:00:00:01',
    );
    const own = attachmentsFor(
      nets,
      { NetworkMode: 'front' },
      { MacAddress: '02:00:00:00:00:01' },
      { EndpointsConfig: { front: { MacAddress: '02:00:00:00:00:02' } } },
    );
    assert.equal(own[0]?.config.MacAddress, '02:00:00:00:00:02');
  });

  test('a user network first, then the other endpoints; one entry per network', () => {
    const out = attachmentsFor(
      nets,
      { NetworkMode: 'front' },
      {},
      { EndpointsConfig: { front: { Aliases: ['web'] }, pooled: {}, [pooled.Id]: {} } },
    );
    assert.deepEqual(
      out.map((a) => a.name),
      ['front', 'pooled'],
    );
    assert.deepEqual(out[0]?.config, { Aliases: ['web'] });
  });

  test('a network that does not exist yet is kept by name (looked up again at start)', () => {
    const out = attachmentsFor(nets, { NetworkMode: 'later' }, {}, undefined);
    assert.deepEqual(out, [{ networkId: '', name: 'later', config: {} }]);
  });

  test('no networks: NetworkDisabled, container: mode, and -b none (no default bridge)', () => {
    assert.deepEqual(attachmentsFor(nets, {}, { NetworkDisabled: true }, undefined), []);
    assert.deepEqual(attachmentsFor(nets, { NetworkMode: 'container:abc' }, {}, undefined), []);
    assert.deepEqual(attachmentsFor(lookupOf([user]), {}, {}, undefined), []);
  });

  test("dockerd's refusals of modes", () => {
    refusal(
      () => attachmentsFor(nets, { NetworkMode: 'container:abc' }, {}, { EndpointsConfig: { front: {} } }),
      /sharing network namespace/,
    );
    refusal(
      () => attachmentsFor(nets, { NetworkMode: 'host' }, {}, { EndpointsConfig: { front: {} } }),
      /sharing network namespace with another container or host/,
    );
    refusal(
      () => attachmentsFor(nets, { NetworkMode: 'none' }, {}, { EndpointsConfig: { front: {} } }),
      /one of the networks in private \(none\) mode/,
    );
    const configOnly = bridgeNetwork('conf', {}, { ConfigOnly: true, Driver: 'null' });
    refusal(() => attachmentsFor(lookupOf([bridge, configOnly]), { NetworkMode: 'conf' }, {}, undefined), /config-only network conf/);
  });

  test('endpoint errors name the network', () => {
    const staticOnDefault = { EndpointsConfig: { bridge: { IPAMConfig: { IPv4Address: '172.17.0.9' } } } };
    refusal(
      () => attachmentsFor(nets, {}, {}, staticOnDefault),
      /^invalid config for network bridge: invalid endpoint settings:\nuser specified IP address is supported on user defined networks only$/,
    );
  });

  test('attachmentsOrNone: a configuration that no longer validates gives no networks', () => {
    assert.deepEqual(attachmentsOrNone(nets, { NetworkMode: 'container:x' }, {}), []);
    assert.deepEqual(
      attachmentsOrNone(nets, {}, {}).map((a) => a.name),
      ['bridge'],
    );
  });
});

describe('validateEndpoint', () => {
  test('static addresses: user networks with a user subnet, inside it', () => {
    assert.deepEqual(validateEndpoint(user, { IPAMConfig: { IPv4Address: '10.5.0.7', IPv6Address: 'fd00:5::7' } }), {
      IPAMConfig: { IPv4Address: '10.5.0.7', IPv6Address: 'fd00:5::7' },
    });
    refusal(
      () => validateEndpoint(pooled, { IPAMConfig: { IPv4Address: '10.1.0.7' } }),
      /only when connecting to networks with user configured subnets/,
    );
    refusal(
      () => validateEndpoint(user, { IPAMConfig: { IPv4Address: '10.6.0.7' } }),
      /no configured subnet or ip-range contain the IP address 10\.6\.0\.7/,
    );
    refusal(() => validateEndpoint(user, { IPAMConfig: { IPv4Address: '0.0.0.0' } }), /invalid IPv4 address: 0\.0\.0\.0/);
    refusal(() => validateEndpoint(pooled, { IPAMConfig: { IPv6Address: 'fd00::9' } }), /IPv6 is not enabled on network pooled/);
    refusal(() => validateEndpoint(user, { IPAMConfig: { IPv6Address: '::' } }), /invalid IPv6 address: ::/);
  });

  test('several errors are listed together, as dockerd does', () => {
    refusal(
      () => validateEndpoint(bridge, { IPAMConfig: { IPv4Address: '172.17.0.9' }, Aliases: ['a'] }),
      /^invalid endpoint settings:\n\* user specified IP address is supported on user defined networks only\n\* network-scoped alias is supported only/,
    );
  });

  test('without the network (not created yet) only the network-free checks run', () => {
    assert.deepEqual(validateEndpoint(undefined, { IPAMConfig: { IPv4Address: '10.9.9.9' }, Aliases: ['x'] }, 'later'), {
      IPAMConfig: { IPv4Address: '10.9.9.9' },
      Aliases: ['x'],
    });
    refusal(() => validateEndpoint(undefined, { Aliases: ['x'] }, 'bridge'), /network-scoped alias/);
  });

  test('MAC addresses are checked and normalised; empty settings are dropped', () => {
    refusal(() => validateEndpoint(user, { MacAddress: '02:42:zz:00:00:01' }), /invalid MAC address/);
    assert.deepEqual(validateEndpoint(user, { MacAddress: '02-42-AC-11-00-02', Aliases: [], Links: [], DriverOpts: {}, GwPriority: 0 }), {
      MacAddress: '02:42:ac:11:00:02',
    });
    assert.deepEqual(validateEndpoint(user, { GwPriority: 5, DriverOpts: { a: 'b' }, Links: ['c:d'] }), {
      GwPriority: 5,
      DriverOpts: { a: 'b' },
      Links: ['c:d'],
    });
  });
});
