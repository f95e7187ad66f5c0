// What inspect and list show of networks and of a container's networking: field order, the legacy
// top-level fields mirroring the default bridge, DNSNames on user networks only, published ports.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bridgeNetwork, defaultBridgeNetwork } from '../../test/helpers/network-records.ts';
import type { NetContainer } from './container-contract.ts';
import type { ContainerNet, NetworkRecord } from './records.ts';
import { buildContainerView, dnsNamesFor, networkInspect } from './views.ts';

const bridge = defaultBridgeNetwork();
const user = bridgeNetwork('front', { subnet: '10.8.0.0/24', gateway: '10.8.0.1' });
const byId = (id: string): NetworkRecord | undefined => [bridge, user].find((n) => n.Id === id);

function container(running: boolean): NetContainer {
  return {
    Id: 'c0ffee'.padEnd(64, '0'),
    Name: '/web',
    HostsPath: '',
    State: { Running: running },
    Config: { Hostname: 'web-host', ExposedPorts: { '80/tcp': {}, '53/udp': {} } },
    HostConfig: { PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '8080' }] } },
  };
}

function netOf(rec: NetContainer, withSandbox: boolean): ContainerNet {
  const ep = (net: NetworkRecord, ip: string, ifname: string) => ({
    networkId: net.Id,
    endpointId: `ep-${ifname}`,
    ifname,
    hostIf: `veth${ifname}`,
    bridge: net.x.bridge!,
    ip,
    prefixLen: 24,
    gateway: net.x.gateway!,
    mac: `02:42:00:00:00:0${ifname.slice(-1)}`,
  });
  const port = { proto: 'tcp' as const, containerPort: 80, hostPort: 8080, containerIp: '172.17.0.2', bridge: 'engine0' };
  return {
    id: rec.Id,
    attachments: [
      { networkId: bridge.Id, name: 'bridge', config: {} },
      { networkId: user.Id, name: 'front', config: { Aliases: ['www', 'web'] } },
    ],
    ...(withSandbox
      ? {
          sandbox: {
            key: '/run/engine/netns/c0ffee',
            sandboxId: 'sb1',
            gatewayNetworkId: bridge.Id,
            endpoints: [ep(bridge, '172.17.0.2', 'eth0'), ep(user, '10.8.0.2', 'eth1')],
            ports: [
              { ...port, hostIp: '0.0.0.0' },
              { ...port, hostIp: '::', sharesListener: true },
            ],
          },
        }
      : {}),
  };
}

describe('views', () => {
  test("networkInspect: the wire fields in dockerd's order, with the containers given", () => {
    const doc = networkInspect(user, { abc: { Name: 'web' } });
    assert.deepEqual(Object.keys(doc), [
      'Name',
      'Id',
      'Created',
      'Scope',
      'Driver',
      'EnableIPv4',
      'EnableIPv6',
      'IPAM',
      'Internal',
      'Attachable',
      'Ingress',
      'ConfigFrom',
      'ConfigOnly',
      'Containers',
      'Options',
      'Labels',
    ]);
    assert.deepEqual(doc.Containers, { abc: { Name: 'web' } });
    assert.equal('x' in doc, false, "the daemon's own facts stay out");
  });

  test('dnsNamesFor: name, aliases, short ID, hostname, without repeats', () => {
    assert.deepEqual(dnsNamesFor(container(true), ['www', 'web']), ['web', 'www', 'c0ffee000000', 'web-host']);
  });

  test('a running container: endpoints, ports by key (both families), legacy fields from the default bridge', () => {
    const rec = container(true);
    const view = buildContainerView(rec, netOf(rec, true), byId, '');
    const s = view.settings;
    assert.equal(s.SandboxKey, '/run/engine/netns/c0ffee');
    assert.equal(s.IPAddress, '172.17.0.2');
    assert.equal(s.EndpointID, 'ep-eth0');
    assert.deepEqual(s.Ports, {
      '80/tcp': [
        { HostIp: '0.0.0.0', HostPort: '8080' },
        { HostIp: '::', HostPort: '8080' },
      ],
      '53/udp': null,
    });
    const nets = s.Networks;
    assert.deepEqual(Object.keys(nets), ['bridge', 'front']);
    assert.equal(nets.bridge?.DNSNames, null, 'no DNS names on the default bridge');
    assert.deepEqual(nets.front?.DNSNames, ['web', 'www', 'c0ffee000000', 'web-host']);
    assert.equal(nets.front?.IPAddress, '10.8.0.2');
    assert.deepEqual(view.ports, [
      { PrivatePort: 53, Type: 'udp' },
      { IP: '0.0.0.0', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
      { IP: '::', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
    ]);
  });

  test('a stopped container: configured networks without addresses, no ports, no sandbox', () => {
    const rec = container(false);
    const view = buildContainerView(rec, netOf(rec, false), byId, 'engine0');
    const s = view.settings;
    assert.equal(s.SandboxKey, '');
    assert.equal(s.Bridge, 'engine0');
    assert.deepEqual(s.Ports, {});
    assert.deepEqual(view.ports, []);
    const nets = s.Networks;
    assert.equal(nets.front?.IPAddress, '');
    assert.equal(nets.front?.NetworkID, user.Id);
  });

  test('a network removed since the container was attached shows under its old name', () => {
    const rec = container(false);
    const c: ContainerNet = { id: rec.Id, attachments: [{ networkId: 'gone', name: 'old-net', config: {} }] };
    const nets = (buildContainerView(rec, c, byId, '').settings as { Networks: Record<string, unknown> }).Networks;
    assert.deepEqual(Object.keys(nets), ['old-net']);
  });
});
