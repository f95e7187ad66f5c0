// Network records and a daemon configuration for the network layer's unit tests: a default bridge
// and user bridge networks as the daemon would have stored them, without a daemon.
import { defaultConfig } from '../../src/config/build.ts';
import type { DaemonConfig } from '../../src/config/daemon-config.ts';
import { notFound } from '../../src/errors.ts';
import type { NetworkLookup } from '../../src/network/attachments.ts';
import type { ExistingNetworks } from '../../src/network/create-request.ts';
import type { NetworkFacts, NetworkRecord } from '../../src/network/records.ts';

/** The daemon's defaults, with `over` on top. */
export function testConfig(over: Partial<DaemonConfig> = {}): DaemonConfig {
  return { ...(defaultConfig() as unknown as DaemonConfig), ...over };
}

let serial = 0;

/** A bridge network record; `x` facts on top of a 10.1.0.0/24 user network with gateway .1. */
export function bridgeNetwork(name: string, x: Partial<NetworkFacts> = {}, over: Partial<NetworkRecord> = {}): NetworkRecord {
  serial++;
  const id = `${serial.toString(16).padStart(4, '0')}${'ab'.repeat(30)}`;
  return {
    Name: name,
    Id: id,
    Created: '2026-01-01T00:00:00.000000000Z',
    Scope: 'local',
    Driver: 'bridge',
    EnableIPv4: true,
    EnableIPv6: Boolean(x.subnet6),
    IPAM: { Driver: 'default', Options: null, Config: [] },
    Internal: false,
    Attachable: false,
    Ingress: false,
    ConfigFrom: { Network: '' },
    ConfigOnly: false,
    Options: {},
    Labels: {},
    x: {
      predefined: false,
      bridge: `br-${id.slice(0, 12)}`,
      ownsBridge: true,
      subnet: '10.1.0.0/24',
      gateway: '10.1.0.1',
      userSubnet: false,
      mtu: 1500,
      icc: true,
      masquerade: true,
      ifPrefix: 'eth',
      ...x,
    },
    ...over,
  };
}

/** The default bridge ("bridge", predefined) on 172.17.0.0/16. */
export function defaultBridgeNetwork(x: Partial<NetworkFacts> = {}): NetworkRecord {
  return bridgeNetwork('bridge', {
    predefined: true,
    defaultBridge: true,
    bridge: 'engine0',
    subnet: '172.17.0.0/16',
    gateway: '172.17.0.1',
    ...x,
  });
}

/** The predefined host or none network. */
export function specialNetwork(name: 'host' | 'none'): NetworkRecord {
  return bridgeNetwork(
    name,
    { predefined: true, bridge: undefined, subnet: undefined, gateway: undefined },
    { Driver: name === 'host' ? 'host' : 'null', EnableIPv4: false },
  );
}

/** A network lookup over a fixed list (what NetworkState provides), for the pure rules. */
export function lookupOf(nets: NetworkRecord[]): NetworkLookup & ExistingNetworks {
  return {
    networks: () => nets,
    network: (id) => nets.find((n) => n.Id === id),
    defaultBridge: () => nets.find((n) => n.x.defaultBridge),
    findNetwork: (ref) => {
      const n = nets.find((m) => m.Id === ref || m.Name === ref) ?? nets.find((m) => ref && m.Id.startsWith(ref));
      if (!n) throw notFound(`network ${ref} not found`);
      return n;
    },
  };
}
