// Subnet choice for new networks: what a new subnet must not overlap (the daemon's networks and the
// host's routes on other devices), the IPv6 pools, and a new network's IPv6 facts. Pure: the host's
// routes are passed in (ipam.ts hostRoutes/hostRoutes6 read them).
import { forbidden } from '../../errors.ts';
import { overlaps, parseCidr, type Cidr } from './ip4.ts';
import { formatCidr6, formatIPv6, isIPv6, isV6Text, overlaps6, parseCidr6, parseIPv6, ulaBase, type Cidr6 } from './ip6.ts';
import { pickSubnet6, type AddressPool } from './ipam.ts';
import type { IpamConfigEntry } from '../../types/networks.ts';
import type { NetworkFacts, NetworkRecord } from '../records.ts';

export interface Route<C> {
  dev: string;
  cidr: C;
}

/** Bridges of the daemon's own networks (plus `ownBridge`): their routes are not the host's. */
function ownBridges(nets: NetworkRecord[], ownBridge?: string): Set<string | undefined> {
  return new Set([ownBridge, ...nets.map((n) => n.x.bridge)].filter(Boolean));
}

/** IPv4 subnets a new network must not overlap; `ownId` (a network being set up again) is left out. */
export function takenSubnets(nets: NetworkRecord[], routes: Array<Route<Cidr>>, ownBridge?: string, ownId?: string): Cidr[] {
  const own = ownBridges(nets, ownBridge);
  const fromRoutes = routes.filter((r) => !own.has(r.dev)).map((r) => r.cidr);
  const fromNets = nets.filter((n) => n.Id !== ownId && n.x.subnet).map((n) => parseCidr(n.x.subnet!));
  return [...fromRoutes, ...fromNets];
}

/** IPv6 subnets a new network must not overlap. */
export function takenSubnets6(nets: NetworkRecord[], routes: Array<Route<Cidr6>>, ownBridge?: string, ownId?: string): Cidr6[] {
  const own = ownBridges(nets, ownBridge);
  const fromRoutes = routes.filter((r) => !own.has(r.dev)).map((r) => r.cidr);
  const fromNets = nets.filter((n) => n.Id !== ownId && n.x.subnet6).map((n) => parseCidr6(n.x.subnet6!));
  return [...fromRoutes, ...fromNets];
}

/** IPv6 pools: those of default-address-pools, else /64s of the daemon's own ULA /48 (from `seed`). */
export function pools6(configured: AddressPool[], seed: string): AddressPool[] {
  const mine = configured.filter((p) => isV6Text(p.base));
  return mine.length ? mine : [{ base: ulaBase(seed), size: 64 }];
}

/** A given IPv4 subnet must not overlap another network's (dockerd's 403). */
export function checkFreeSubnet(nets: NetworkRecord[], subnet: Cidr): void {
  if (nets.some((n) => n.x.subnet && overlaps(parseCidr(n.x.subnet), subnet)))
    throw forbidden('invalid pool request: Pool overlaps with other one on this address space');
}

/** A new network's IPv6 subnet (given, or a /64 from the pools), gateway, range and reserved addresses. */
export function newIPv6Facts(
  nets: NetworkRecord[],
  pools: AddressPool[],
  routes: Array<Route<Cidr6>>,
  given: IpamConfigEntry | undefined,
): Partial<NetworkFacts> {
  let subnet: Cidr6;
  if (given?.Subnet) {
    subnet = parseCidr6(given.Subnet);
    const clash = nets.find((n) => n.x.subnet6 && overlaps6(parseCidr6(n.x.subnet6), subnet));
    if (clash) throw forbidden('invalid pool request: Pool overlaps with other one on this address space');
  } else {
    const picked = pickSubnet6(pools, takenSubnets6(nets, routes));
    if (!picked) throw forbidden('all predefined address pools have been fully subnetted');
    subnet = picked;
  }
  const gateway = given?.Gateway ? formatIPv6(parseIPv6(given.Gateway)) : formatIPv6(subnet.base + 1n);
  return {
    subnet6: formatCidr6(subnet),
    gateway6: gateway,
    userSubnet6: Boolean(given?.Subnet),
    ...(given?.IPRange ? { range6: formatCidr6(parseCidr6(given.IPRange)) } : {}),
    reserved6: Object.values(given?.AuxiliaryAddresses ?? {})
      .filter(isIPv6)
      .map((a) => formatIPv6(parseIPv6(a))),
  };
}
