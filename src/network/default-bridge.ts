// The default bridge network ("bridge"): created (engine0, or engine-<tag> beside another daemon's),
// adopted (--bridge) or absent (-b none); its IPv4 subnet from --bip, the bridge's address, the one
// it had, or the pools; --fixed-cidr, --default-gateway; IPv6 (--ipv6, --bip6, --fixed-cidr-v6,
// --default-gateway-v6). Subnets are chosen under the host-wide lock.
import type { DaemonConfig } from '../config/daemon-config.ts';
import { invalidParameter } from '../errors.ts';
import type { IpamConfigEntry } from '../types/networks.ts';
import type { Logger } from '../util/log.ts';
import { nowIso } from '../util/time.ts';
import { bridgeSysctls } from './host/bridges.ts';
import { withHostLock } from './ipam/host-lock.ts';
import {
  contains,
  formatCidr,
  formatIPv4,
  isIPv4,
  overlaps,
  parseCidr,
  parseCidrWithHost,
  parseIPv4,
  within,
  type Cidr,
} from './ipam/ip4.ts';
import {
  contains6,
  formatCidr6,
  formatIPv6,
  isIPv6,
  overlaps6,
  parseCidr6,
  parseCidr6WithHost,
  parseIPv6,
  within6,
  type Cidr6,
} from './ipam/ip6.ts';
import { DEFAULT_POOLS, hostRoutes, hostRoutes6, pickSubnet, pickSubnet6 } from './ipam/ipam.ts';
import { ensureBridge, isBridge, linkAliasOf, linkExists, linkIPv4 } from './host/netlink.ts';
import { defaultBridgeName, linkAlias, newId, validInterfaceName } from './naming.ts';
import { engineKey, OPT_BRIDGE_NAME, OPT_DEFAULT_BRIDGE, OPT_HOST_BINDING, OPT_ICC, OPT_MASQ, OPT_MTU } from './options.ts';
import type { NetworkFacts, NetworkRecord } from './records.ts';
import type { NetworkState } from './state.ts';
import { pools6, takenSubnets, takenSubnets6 } from './ipam/subnets.ts';

export interface DefaultBridgeDeps {
  config: () => DaemonConfig;
  log: Logger;
  state: NetworkState;
  tag: string;
  /** Seed of the daemon's ULA /48 (its ID). */
  ulaSeed: string;
  env?: NodeJS.ProcessEnv;
}

/** The default bridge network: created, adopted (--bridge) or removed (-b none). */
export async function setupDefaultBridge(d: DefaultBridgeDeps): Promise<void> {
  const cfg = d.config();
  const stored = d.state.defaultBridge();
  if (cfg.bridge === 'none') {
    if (stored) d.state.deleteNetwork(stored);
    return;
  }
  let name = cfg.bridge || defaultBridgeName(d.env);
  if (!validInterfaceName(name)) throw invalidParameter(`invalid bridge name ${JSON.stringify(name)}`);
  const existingBridge = Boolean(cfg.bridge);
  if (existingBridge && !isBridge(name)) throw invalidParameter(`bridge device with non default name ${name} must be created manually`);
  let owns = !existingBridge;
  const mtu = cfg.mtu || 1500;
  let subnet!: Cidr;
  let gateway!: number;
  let v6: { subnet: Cidr6; gateway: bigint } | undefined;
  await withHostLock(async () => {
    if (!existingBridge && linkExists(name)) {
      const alias = linkAliasOf(name);
      if (alias.startsWith('engine:') && alias !== linkAlias(d.tag)) {
        // Another daemon's default bridge (daemons side by side): sharing it would mix two
        // address allocators on one subnet, so this one gets its own.
        const own = `engine-${d.tag || 'default'}`.slice(0, 15);
        d.log.warn(`bridge ${name} belongs to another daemon (${alias}); using ${own} instead (give each daemon its own --bridge)`);
        name = own;
      } else if (!alias) {
        owns = false; // made by someone else: used, never deleted
      }
    }
    const have = linkExists(name) ? await linkIPv4(name) : [];
    if (cfg.bip) {
      const b = parseCidrWithHost(cfg.bip);
      if (b.addr === b.cidr.base && b.cidr.bits < 31)
        throw invalidParameter(`invalid --bip ${cfg.bip}: give the bridge's address with its prefix length (for example 172.17.0.1/16)`);
      subnet = b.cidr;
      gateway = b.addr;
    } else if (have.length) {
      const b = parseCidrWithHost(have[0]!);
      subnet = b.cidr;
      gateway = b.addr;
    } else {
      const taken = takenSubnets(d.state.networks(), hostRoutes(), name, stored?.Id);
      const previous = stored?.x.subnet ? parseCidr(stored.x.subnet) : undefined;
      const chosen = previous && !taken.some((t) => overlaps(t, previous)) ? previous : pickSubnet(DEFAULT_POOLS, taken);
      if (!chosen)
        throw invalidParameter(
          'could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the default bridge network',
        );
      subnet = chosen;
      gateway = previous && previous.base === chosen.base && stored?.x.gateway ? parseIPv4(stored.x.gateway) : chosen.base + 1;
    }
    if (cfg.ipv6) v6 = defaultBridgeIPv6(d, name, stored);
    const address6 = v6 ? `${formatIPv6(v6.gateway)}/${v6.subnet.bits}` : owns ? null : undefined;
    await ensureBridge({
      name,
      mtu,
      address: `${formatIPv4(gateway)}/${subnet.bits}`,
      address6,
      ...(owns ? { alias: linkAlias(d.tag) } : {}),
    });
  });
  if (!cfg.ipv6)
    for (const k of ['fixed-cidr-v6', 'bip6', 'default-gateway-v6'] as const) if (cfg[k]) d.log.warn(`--${k} has no effect without --ipv6`);
  let range: Cidr | undefined;
  if (cfg['fixed-cidr']) {
    range = parseCidr(cfg['fixed-cidr']);
    if (!within(range, subnet))
      throw invalidParameter(`fixed-cidr ${cfg['fixed-cidr']} is not within the bridge subnet ${formatCidr(subnet)}`);
  }
  let routeVia: string | undefined;
  if (cfg['default-gateway']) {
    if (!isIPv4(cfg['default-gateway']) || !contains(subnet, parseIPv4(cfg['default-gateway']))) {
      throw invalidParameter(`default-gateway ${cfg['default-gateway']} is not an address in the bridge subnet ${formatCidr(subnet)}`);
    }
    routeVia = cfg['default-gateway'];
  }
  const gw = formatIPv4(gateway);
  const ipamEntry: IpamConfigEntry = {
    Subnet: formatCidr(subnet),
    ...(range ? { IPRange: formatCidr(range) } : {}),
    Gateway: gw,
    ...(routeVia ? { AuxiliaryAddresses: { DefaultGatewayIPv4: routeVia } } : {}),
  };
  const ipam6 = v6 ? defaultBridgeIPv6Config(cfg, v6.subnet, v6.gateway) : undefined;
  const rec: NetworkRecord = {
    Name: 'bridge',
    Id: stored?.Id ?? newId(),
    Created: stored?.Created ?? nowIso(),
    Scope: 'local',
    Driver: 'bridge',
    EnableIPv4: true,
    EnableIPv6: Boolean(v6),
    IPAM: { Driver: 'default', Options: null, Config: ipam6 ? [ipamEntry, ipam6.entry] : [ipamEntry] },
    Internal: false,
    Attachable: false,
    Ingress: false,
    ConfigFrom: { Network: '' },
    ConfigOnly: false,
    Options: {
      [engineKey(OPT_DEFAULT_BRIDGE)]: 'true',
      [engineKey(OPT_ICC)]: String(cfg.icc),
      [engineKey(OPT_MASQ)]: String(cfg['ip-masq']),
      [engineKey(OPT_HOST_BINDING)]: cfg.ip || '0.0.0.0',
      [engineKey(OPT_BRIDGE_NAME)]: name,
      [engineKey(OPT_MTU)]: String(mtu),
    },
    Labels: {},
    x: {
      predefined: true,
      defaultBridge: true,
      bridge: name,
      ownsBridge: owns,
      subnet: formatCidr(subnet),
      gateway: gw,
      ...(range ? { range: formatCidr(range) } : {}),
      ...(routeVia ? { routeVia, reserved: [routeVia] } : {}),
      userSubnet: false,
      mtu,
      icc: cfg.icc,
      masquerade: cfg['ip-masq'] && cfg.iptables,
      hostBindingIpv4: cfg.ip || '0.0.0.0',
      ifPrefix: 'eth',
      ...(ipam6?.facts ?? {}),
    },
  };
  if (stored && stored.Id !== rec.Id) d.state.deleteNetwork(stored);
  d.state.saveNetwork(rec);
  bridgeSysctls(rec, cfg, d.log);
}

/**
 * The default bridge's IPv6 subnet and address (--ipv6): --bip6 gives both, else --fixed-cidr-v6
 * is the subnet, else the one it had, else a /64 from the pools (the daemon's ULA prefix).
 */
function defaultBridgeIPv6(d: DefaultBridgeDeps, bridge: string, stored: NetworkRecord | undefined): { subnet: Cidr6; gateway: bigint } {
  const cfg = d.config();
  if (cfg.bip6) {
    const b = parseCidr6WithHost(cfg.bip6);
    if (b.addr === b.cidr.base)
      throw invalidParameter(`invalid --bip6 ${cfg.bip6}: give the bridge's address with its prefix length (for example fd00:1::1/64)`);
    return { subnet: b.cidr, gateway: b.addr };
  }
  if (cfg['fixed-cidr-v6']) {
    const c = parseCidr6(cfg['fixed-cidr-v6']);
    const keep = stored?.x.subnet6 === formatCidr6(c) && stored.x.gateway6 ? parseIPv6(stored.x.gateway6) : c.base + 1n;
    return { subnet: c, gateway: keep };
  }
  const taken = takenSubnets6(d.state.networks(), hostRoutes6(), bridge, stored?.Id);
  const previous = stored?.x.subnet6 ? parseCidr6(stored.x.subnet6) : undefined;
  if (previous && !taken.some((t) => overlaps6(t, previous)))
    return { subnet: previous, gateway: stored?.x.gateway6 ? parseIPv6(stored.x.gateway6) : previous.base + 1n };
  const picked = pickSubnet6(pools6(cfg['default-address-pools'], d.ulaSeed), taken);
  if (!picked)
    throw invalidParameter('could not find an available, non-overlapping IPv6 address pool to assign to the default bridge network');
  return { subnet: picked, gateway: picked.base + 1n };
}

/** The default bridge's IPv6 IPAM entry and facts: --fixed-cidr-v6 as the range under --bip6, --default-gateway-v6. */
function defaultBridgeIPv6Config(
  cfg: DaemonConfig,
  subnet: Cidr6,
  gateway: bigint,
): { entry: IpamConfigEntry; facts: Partial<NetworkFacts> } {
  let range: Cidr6 | undefined;
  if (cfg.bip6 && cfg['fixed-cidr-v6']) {
    range = parseCidr6(cfg['fixed-cidr-v6']);
    if (!within6(range, subnet))
      throw invalidParameter(`fixed-cidr-v6 ${cfg['fixed-cidr-v6']} is not within the bridge's IPv6 subnet ${formatCidr6(subnet)}`);
  }
  let routeVia: string | undefined;
  if (cfg['default-gateway-v6']) {
    if (!isIPv6(cfg['default-gateway-v6']) || !contains6(subnet, parseIPv6(cfg['default-gateway-v6']))) {
      throw invalidParameter(
        `default-gateway-v6 ${cfg['default-gateway-v6']} is not an address in the bridge's IPv6 subnet ${formatCidr6(subnet)}`,
      );
    }
    routeVia = formatIPv6(parseIPv6(cfg['default-gateway-v6']));
  }
  const gw = formatIPv6(gateway);
  return {
    entry: {
      Subnet: formatCidr6(subnet),
      ...(range ? { IPRange: formatCidr6(range) } : {}),
      Gateway: gw,
      ...(routeVia ? { AuxiliaryAddresses: { DefaultGatewayIPv6: routeVia } } : {}),
    },
    facts: {
      subnet6: formatCidr6(subnet),
      gateway6: gw,
      ...(range ? { range6: formatCidr6(range) } : {}),
      ...(routeVia ? { routeVia6: routeVia, reserved6: [routeVia] } : {}),
      userSubnet6: Boolean(cfg['fixed-cidr-v6'] || cfg.bip6),
    },
  };
}
