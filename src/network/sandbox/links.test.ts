// /etc/hosts entries and link variables a run gets: --add-host in both spellings, host-gateway
// (configured addresses, else the default bridge's), legacy --link targets on the default bridge
// (running ones only, dockerd's message otherwise), over a real state and a fake container lookup.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { notFound } from '../../errors.ts';
import { openDatabase, type EngineDatabase } from '../../store/database.ts';
import { tempDir, type TempDir } from '../../../test/helpers/temp-dir.ts';
import { defaultBridgeNetwork, testConfig } from '../../../test/helpers/network-records.ts';
import type { NetContainer } from '../container-contract.ts';
import { ContainerLinks } from './links.ts';
import { NetworkState } from '../state.ts';

let tmp: TempDir;
let db: EngineDatabase;
beforeEach(() => {
  tmp = tempDir('engine-netlinks-');
  db = openDatabase(tmp.file('engine.db'));
});
afterEach(() => {
  db.close();
  tmp.remove();
});

function rec(id: string, name: string, hc: NetContainer['HostConfig'] = {}, config: NetContainer['Config'] = {}): NetContainer {
  return { Id: id.padEnd(64, '0'), Name: `/${name}`, HostsPath: '', Config: config, HostConfig: hc, State: { Running: true } };
}

function setup(cfg = testConfig(), withBridge = true) {
  const state = new NetworkState(db);
  const bridge = defaultBridgeNetwork({ gateway6: 'fd00:17::1', subnet6: 'fd00:17::/64' });
  if (withBridge) state.saveNetwork(bridge);
  const db1 = rec('db1', 'mysql', {}, { Env: ['PASS=x'], ExposedPorts: { '3306/tcp': {} } });
  const idle = rec('idle', 'idle');
  const all = [db1, idle];
  const containers = {
    find: (ref: string) =>
      all.find((c) => c.Id === ref || c.Name === `/${ref}`) ??
      (() => {
        throw notFound(`No such container: ${ref}`);
      })(),
  };
  const ep = {
    networkId: bridge.Id,
    endpointId: 'e',
    ifname: 'eth0',
    hostIf: 'v',
    bridge: 'engine0',
    ip: '172.17.0.5',
    prefixLen: 16,
    gateway: '172.17.0.1',
    mac: 'm',
  };
  state.persist({
    id: db1.Id,
    attachments: [{ networkId: bridge.Id, name: 'bridge', config: {} }],
    sandbox: { key: 'k', sandboxId: 's', endpoints: [ep], ports: [] },
  });
  state.persist({ id: idle.Id, attachments: [{ networkId: bridge.Id, name: 'bridge', config: {} }] });
  return new ContainerLinks({ config: () => cfg, state, containers });
}

describe('ContainerLinks', () => {
  test("--add-host: name:ip and name=ip, bracketed IPv6, host-gateway as the default bridge's addresses", () => {
    const links = setup();
    const hosts = links.extraHosts(rec('w', 'web', { ExtraHosts: ['a:10.0.0.1', 'b=10.0.0.2', 'c:[fd00::3]', 'gw:host-gateway'] }));
    assert.deepEqual(hosts, ['10.0.0.1 a', '10.0.0.2 b', 'fd00::3 c', '172.17.0.1 gw', 'fd00:17::1 gw']);
  });

  test('host-gateway: --host-gateway-ip wins; without it and without a default bridge it is a 400', () => {
    assert.deepEqual(
      setup(testConfig({ 'host-gateway-ips': ['10.9.8.7'] })).extraHosts(rec('w', 'web', { ExtraHosts: ['gw:host-gateway'] })),
      ['10.9.8.7 gw'],
    );
    assert.throws(
      () => setup(testConfig(), false).extraHosts(rec('w', 'web', { ExtraHosts: ['gw:host-gateway'] })),
      /unable to derive the IP value for host-gateway/,
    );
  });

  test("--link: the target's default-bridge address under the alias, its short ID and name; its environment", () => {
    const links = setup();
    const web = rec('w', 'web', { Links: ['/mysql:/web/db'] });
    assert.deepEqual(links.extraHosts(web), ['172.17.0.5 db db1000000000 mysql']);
    const env = links.linkEnvironment(web);
    assert.ok(env.includes('DB_PORT_3306_TCP_ADDR=172.17.0.5'), env.join('\n'));
    assert.ok(env.includes('DB_NAME=/web/db'), env.join('\n'));
    assert.ok(env.includes('DB_ENV_PASS=x'), env.join('\n'));
  });

  test("--link to a container that is not running, or does not exist: dockerd's message", () => {
    const links = setup();
    assert.throws(() => links.extraHosts(rec('w', 'web', { Links: ['idle:i'] })), {
      code: 'INVALID_PARAMETER',
      message: 'Cannot link to a non running container: /idle AS /web/i',
    });
    assert.throws(() => links.linkEnvironment(rec('w', 'web', { Links: ['/nope:n'] })), {
      code: 'INVALID_PARAMETER',
      message: 'Cannot link to a non running container: /nope AS /web/n',
    });
  });
});
