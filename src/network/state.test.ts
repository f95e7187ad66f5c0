// The network layer's state over a real store: network lookups in dockerd's order (ID, name, ID
// prefix; ambiguity is a 400, absence a 404), write-through persistence, endpoint queries.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { EngineError } from '../errors.ts';
import { openDatabase, type EngineDatabase } from '../store/database.ts';
import { tempDir, type TempDir } from '../../test/helpers/temp-dir.ts';
import { bridgeNetwork, defaultBridgeNetwork } from '../../test/helpers/network-records.ts';
import { firewallState } from './firewall/firewall-sync.ts';
import { swarmRecord } from './overlay/driver.ts';
import { NetworkState } from './state.ts';

let tmp: TempDir;
let db: EngineDatabase;

beforeEach(() => {
  tmp = tempDir('engine-netstate-');
  db = openDatabase(tmp.file('engine.db'));
});
afterEach(() => {
  db.close();
  tmp.remove();
});

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof EngineError);
    return e.code;
  }
  return 'none';
}

describe('NetworkState', () => {
  test('findNetwork: full ID, exact name, unique ID prefix; ambiguity 400, absence 404', () => {
    const state = new NetworkState(db);
    const a = bridgeNetwork('alpha', {}, { Id: 'aaaa1111'.padEnd(64, '0') });
    const b = bridgeNetwork('beta', {}, { Id: 'aaaa2222'.padEnd(64, '0') });
    // A network whose name is another's ID prefix: the name wins (dockerd's order).
    const c = bridgeNetwork('aaaa2', {}, { Id: 'cccc'.padEnd(64, '0') });
    for (const n of [a, b, c]) state.saveNetwork(n);
    assert.equal(state.findNetwork(a.Id).Name, 'alpha');
    assert.equal(state.findNetwork('beta').Id, b.Id);
    assert.equal(state.findNetwork('aaaa1').Id, a.Id);
    assert.equal(state.findNetwork('aaaa2').Id, c.Id);
    assert.equal(
      code(() => state.findNetwork('aaaa')),
      'INVALID_PARAMETER',
    );
    assert.equal(
      code(() => state.findNetwork('zzz')),
      'NOT_FOUND',
    );
    assert.equal(
      code(() => state.findNetwork('')),
      'NOT_FOUND',
    );
  });

  test('networks and containers are written through and load again', () => {
    const state = new NetworkState(db);
    const bridge = defaultBridgeNetwork();
    const user = bridgeNetwork('front', { subnet6: 'fd00:1::/64', gateway6: 'fd00:1::1' });
    state.saveNetwork(bridge);
    state.saveNetwork(user);
    state.persist({ id: 'c1', attachments: [{ networkId: user.Id, name: 'front', config: {} }] });
    const again = new NetworkState(db);
    again.load();
    assert.equal(again.defaultBridge()?.Id, bridge.Id);
    assert.equal(again.hasIPv6Networks(), true);
    assert.equal(again.configuredOn(user.Id), true);
    assert.equal(again.configuredOn(bridge.Id), false, 'the predefined networks are never "configured on"');
    again.deleteNetwork(user);
    again.forgetContainer('c1');
    const third = new NetworkState(db);
    third.load();
    assert.deepEqual(
      third.networks().map((n) => n.Name),
      ['bridge'],
    );
    assert.equal(third.container('c1'), undefined);
    assert.equal(third.hasIPv6Networks(), false);
  });

  test("endpointsOn lists running sandboxes' endpoints on a network; events carry the container", () => {
    const published: unknown[] = [];
    const state = new NetworkState(db, { publish: (e) => void published.push(e) });
    const user = bridgeNetwork('front');
    state.saveNetwork(user);
    const ep = {
      networkId: user.Id,
      endpointId: 'e',
      ifname: 'eth0',
      hostIf: 'v',
      bridge: 'b',
      ip: '10.1.0.2',
      prefixLen: 24,
      gateway: '10.1.0.1',
      mac: 'm',
    };
    state.persist({ id: 'c1', attachments: [], sandbox: { key: 'k', sandboxId: 's', endpoints: [ep], ports: [] } });
    state.persist({ id: 'c2', attachments: [] });
    assert.deepEqual(
      state.endpointsOn(user.Id).map((x) => x.c.id),
      ['c1'],
    );
    state.event(user, 'connect', 'c1');
    assert.deepEqual(published, [
      { Type: 'network', Action: 'connect', Actor: { ID: user.Id, Attributes: { name: 'front', type: 'bridge', container: 'c1' } } },
    ]);
  });

  test("firewallState: bridge and overlay networks (config-only ones aside) and every sandbox's published ports", () => {
    const state = new NetworkState(db);
    const user = bridgeNetwork('front', { bridge: 'br-f', subnet: '10.2.0.0/24', icc: false, subnet6: 'fd00:2::/64' }, { Internal: true });
    const plain = bridgeNetwork('plain', { bridge: 'br-p', subnet: '10.3.0.0/24', masquerade: false });
    const conf = bridgeNetwork('conf', { bridge: 'br-c' }, { ConfigOnly: true });
    for (const n of [user, plain, conf]) state.saveNetwork(n);
    const port = {
      proto: 'tcp' as const,
      containerPort: 80,
      hostIp: '0.0.0.0',
      hostPort: 8080,
      containerIp: '10.3.0.2',
      bridge: 'br-p',
      proxyPid: 42,
    };
    state.persist({ id: 'c1', attachments: [], sandbox: { key: 'k', sandboxId: 's', endpoints: [], ports: [port] } });
    // A cluster's overlay network (kept in memory only) has its bridge's forwarding rules too.
    const swarm = swarmRecord({
      Id: 'f'.repeat(64),
      Name: 'ov',
      Created: '',
      Labels: {},
      Options: {},
      Attachable: false,
      Internal: false,
      Ingress: false,
      subnet: '10.0.1.0/24',
      gateway: '10.0.1.1',
      ipamOptions: null,
      vni: 4097,
    });
    state.putSwarmNetwork(swarm);
    assert.deepEqual(firewallState(state), {
      networks: [
        { bridge: 'br-f', subnet: '10.2.0.0/24', subnet6: 'fd00:2::/64', icc: false, masquerade: true, internal: true },
        { bridge: 'br-p', subnet: '10.3.0.0/24', icc: true, masquerade: false, internal: false },
        { bridge: 'ov-ffffffffffff', subnet: '10.0.1.0/24', icc: true, masquerade: true, internal: false },
      ],
      ports: [{ bridge: 'br-p', proto: 'tcp', hostIp: '0.0.0.0', hostPort: 8080, containerIp: '10.3.0.2', containerPort: 80 }],
    });
  });
});
