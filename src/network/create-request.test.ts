// A network create request checked before anything is made: dockerd's statuses and messages for
// bad fields, names, drivers, scopes, ConfigFrom, IPv4/IPv6 and subnets; the daemon's default
// options merged; the bridge driver's options.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineError } from '../errors.ts';
import type { NetworkCreateBody } from '../types/networks.ts';
import { bridgeNetwork, defaultBridgeNetwork, lookupOf, testConfig } from '../../test/helpers/network-records.ts';
import { bridgeOptions, parseCreateRequest } from './create-request.ts';

const existing = bridgeNetwork('taken', { bridge: 'br-taken' });
const conf = bridgeNetwork(
  'conf',
  {},
  {
    ConfigOnly: true,
    Driver: 'null',
    Options: { 'com.docker.network.driver.mtu': '1400' },
    IPAM: { Driver: 'default', Options: null, Config: [{ Subnet: '10.77.0.0/24' }] },
  },
);
const nets = lookupOf([defaultBridgeNetwork(), existing, conf]);
const cfg = testConfig();

function refused(body: NetworkCreateBody, code: string, pattern: RegExp, config = cfg): void {
  assert.throws(
    () => parseCreateRequest(body, nets, config),
    (e: unknown) => {
      assert.ok(e instanceof EngineError, String(e));
      assert.equal(e.code, code, e.message);
      assert.match(e.message, pattern);
      return true;
    },
  );
}

describe('parseCreateRequest', () => {
  test('field types are checked as the JSON decoder would (400)', () => {
    refused({ Name: 5 } as unknown as NetworkCreateBody, 'INVALID_PARAMETER', /Name must be a string/);
    refused({ Name: 'x', Internal: 'yes' } as unknown as NetworkCreateBody, 'INVALID_PARAMETER', /Internal must be a boolean/);
    refused({ Name: 'x', Labels: { a: 1 } } as unknown as NetworkCreateBody, 'INVALID_PARAMETER', /Labels must be an object of strings/);
    refused({ Name: 'x', IPAM: { Config: {} } } as unknown as NetworkCreateBody, 'INVALID_PARAMETER', /IPAM.Config must be an array/);
  });

  test('names: empty or blank, predefined, taken', () => {
    refused({}, 'INVALID_PARAMETER', /network name must not be empty/);
    refused({ Name: 'host' }, 'FORBIDDEN', /predefined host network/);
    refused({ Name: 'default' }, 'FORBIDDEN', /predefined default network/);
    refused({ Name: ' \t ' }, 'INVALID_PARAMETER', /network name must not be empty/);
    refused({ Name: 'taken' }, 'CONFLICT', /network with name taken already exists/);
    // dockerd takes any name that is not blank ("test 01", "-x").
    for (const name of ['test 01', '-x', 'été']) assert.equal(parseCreateRequest({ Name: name }, nets, cfg).name, name);
  });

  test('drivers, scope, ingress, IPAM driver', () => {
    refused({ Name: 'x', Driver: 'host' }, 'FORBIDDEN', /only one instance of "host" network is allowed/);
    refused({ Name: 'x', Driver: 'overlay' }, 'UNAVAILABLE', /not a swarm manager/);
    refused({ Name: 'x', Driver: 'macvlan' }, 'NOT_FOUND', /could not find plugin macvlan/);
    refused({ Name: 'x', Scope: 'swarm' }, 'INVALID_PARAMETER', /only local networks/);
    refused({ Name: 'x', Ingress: true }, 'FORBIDDEN', /ingress networks/);
    refused({ Name: 'x', IPAM: { Driver: 'dhcp' } }, 'NOT_FOUND', /could not find plugin dhcp/);
  });

  test('IPv4 off, two subnets of a family, a bad IPv4 subnet', () => {
    refused({ Name: 'x', EnableIPv4: false }, 'INVALID_PARAMETER', /without IPv4 are not built yet/);
    refused(
      { Name: 'x', IPAM: { Config: [{ Subnet: '10.1.0.0/24' }, { Subnet: '10.2.0.0/24' }] } },
      'FORBIDDEN',
      /doesn't support multiple subnets/,
    );
    refused({ Name: 'x', IPAM: { Config: [{ Subnet: '10.1.0.5/24' }] } }, 'INVALID_PARAMETER', /it should be 10\.1\.0\.0\/24/);
  });

  test('an IPv6 subnet without EnableIPv6 is kept in the IPAM config, unchecked and unused: an IPv4 network (as dockerd)', () => {
    const req = parseCreateRequest({ Name: 'x', IPAM: { Config: [{ Subnet: 'fd00:1::5/64' }] } }, nets, cfg);
    assert.equal(req.enableIPv6, false);
    assert.equal(req.v6, undefined);
    assert.deepEqual(req.ipamConfig, [{ Subnet: 'fd00:1::5/64' }]);
  });

  test("a valid request: both families split, IPv6 from the option, the daemon's default options under the request's", () => {
    const config = testConfig({
      'default-network-opts': { bridge: { 'com.docker.network.driver.mtu': '1450', 'com.docker.network.bridge.enable_icc': 'false' } },
    });
    const req = parseCreateRequest(
      {
        Name: 'x',
        Options: { 'com.docker.network.driver.mtu': '1300', 'com.docker.network.enable_ipv6': 'true' },
        IPAM: { Config: [{ Subnet: 'fd00:2::/64' }, { Subnet: '10.2.0.0/24', Gateway: '10.2.0.254' }] },
      },
      nets,
      config,
    );
    assert.equal(req.name, 'x');
    assert.equal(req.driver, 'bridge');
    assert.equal(req.enableIPv6, true);
    assert.deepEqual(req.v4, { Subnet: '10.2.0.0/24', Gateway: '10.2.0.254' });
    assert.deepEqual(req.v6, { Subnet: 'fd00:2::/64' });
    assert.deepEqual(req.options, {
      'com.docker.network.driver.mtu': '1300',
      'com.docker.network.enable_ipv6': 'true',
      'com.docker.network.bridge.enable_icc': 'false',
    });
  });

  test('ConfigFrom: a config-only network gives options and IPAM; nothing else may be given', () => {
    const req = parseCreateRequest({ Name: 'y', ConfigFrom: { Network: 'conf' } }, nets, cfg);
    assert.equal(req.from?.Name, 'conf');
    assert.deepEqual(req.options, { 'com.docker.network.driver.mtu': '1400' });
    assert.deepEqual(req.v4, { Subnet: '10.77.0.0/24' });
    refused({ Name: 'y', ConfigFrom: { Network: 'taken' } }, 'FORBIDDEN', /network taken is not a config-only network/);
    refused(
      { Name: 'y', ConfigFrom: { Network: 'conf' }, Options: { a: 'b' } },
      'FORBIDDEN',
      /user specified configurations are not supported/,
    );
  });
});

describe('bridgeOptions', () => {
  test('defaults: a bridge named after the ID, MTU 1500, icc and masquerade on, eth', () => {
    assert.deepEqual(bridgeOptions({}, 'abcdef0123456789', nets, cfg), {
      bridgeName: 'br-abcdef012345',
      mtu: 1500,
      icc: true,
      masquerade: true,
      hostBindingIpv4: '',
      ifPrefix: 'eth',
    });
    assert.equal(bridgeOptions({}, 'abcdef0123456789', nets, testConfig({ iptables: false })).masquerade, false);
  });

  test('given options, under either prefix, and their refusals', () => {
    const opts = {
      'com.engine.network.bridge.name': 'mybr0',
      'com.docker.network.driver.mtu': '9000',
      'com.docker.network.bridge.enable_icc': 'false',
      'com.docker.network.bridge.host_binding_ipv4': '127.0.0.1',
      'com.docker.network.container_iface_prefix': 'net',
    };
    assert.deepEqual(bridgeOptions(opts, 'id', nets, cfg), {
      bridgeName: 'mybr0',
      mtu: 9000,
      icc: false,
      masquerade: true,
      hostBindingIpv4: '127.0.0.1',
      ifPrefix: 'net',
    });
    assert.throws(
      () => bridgeOptions({ 'com.docker.network.bridge.name': 'br-taken' }, 'id', nets, cfg),
      /bridge name br-taken is already in use/,
    );
    assert.throws(
      () => bridgeOptions({ 'com.docker.network.bridge.name': 'a-name-longer-than-15' }, 'id', nets, cfg),
      /invalid bridge name/,
    );
    assert.throws(() => bridgeOptions({ 'com.docker.network.driver.mtu': '40' }, 'id', nets, cfg), /must be an integer from 68 to 65535/);
    assert.throws(
      () => bridgeOptions({ 'com.docker.network.bridge.host_binding_ipv4': 'nope' }, 'id', nets, cfg),
      /invalid host binding address nope/,
    );
    assert.throws(
      () => bridgeOptions({ 'com.docker.network.container_iface_prefix': '9x' }, 'id', nets, cfg),
      /invalid container interface prefix/,
    );
  });
});
