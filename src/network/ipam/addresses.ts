// Container addresses: one IPv4 (and, on IPv6 networks, one IPv6) address space per bridge network,
// and the endpoint an attachment gets in it — address, MAC, gateway, host-side veth name.
import { internal } from '../../errors.ts';
import { formatIPv4, isIPv4, macFromIPv4, parseCidr, parseIPv4 } from './ip4.ts';
import { addressFromMac, formatIPv6, isIPv6, parseCidr6, parseIPv6 } from './ip6.ts';
import { AddressSpace, AddressSpace6 } from './ipam.ts';
import { newId, vethName } from '../naming.ts';
import type { ActiveEndpoint, Attachment, NetworkRecord } from '../records.ts';

export class AddressBook {
  private readonly spaces = new Map<string, AddressSpace>();
  private readonly spaces6 = new Map<string, AddressSpace6>();

  /** The network's address spaces: its range (or subnet) minus the gateway and reserved addresses. */
  add(n: NetworkRecord): void {
    if ((n.Driver !== 'bridge' && n.Driver !== 'overlay') || !n.x.subnet || !n.x.gateway) return;
    const subnet = parseCidr(n.x.subnet);
    const range = n.x.range ? parseCidr(n.x.range) : subnet;
    const reserved = [n.x.gateway, ...(n.x.reserved ?? [])].filter(isIPv4).map(parseIPv4);
    this.spaces.set(n.Id, new AddressSpace(subnet, range, reserved));
    if (n.x.subnet6 && n.x.gateway6) {
      const subnet6 = parseCidr6(n.x.subnet6);
      const reserved6 = [n.x.gateway6, ...(n.x.reserved6 ?? [])].filter(isIPv6).map(parseIPv6);
      this.spaces6.set(n.Id, new AddressSpace6(subnet6, n.x.range6 ? parseCidr6(n.x.range6) : subnet6, reserved6));
    }
  }

  drop(netId: string): void {
    this.spaces.delete(netId);
    this.spaces6.delete(netId);
  }

  /** An endpoint that survived a restart keeps its addresses. */
  reserve(ep: ActiveEndpoint): void {
    this.spaces.get(ep.networkId)?.reserve(parseIPv4(ep.ip));
    if (ep.ip6) this.spaces6.get(ep.networkId)?.reserve(parseIPv6(ep.ip6));
  }

  /** A new endpoint on the network: the requested or next free addresses; nothing held if it throws. */
  allocate(net: NetworkRecord, a: Attachment, ifname: string): ActiveEndpoint {
    const space = this.spaces.get(net.Id);
    if (!space || !net.x.bridge || !net.x.subnet || !net.x.gateway) throw internal(`network ${net.Name} has no address space`);
    const want = a.config.IPAMConfig?.IPv4Address;
    const addr = space.allocate(want ? parseIPv4(want) : undefined);
    const mac = a.config.MacAddress ?? macFromIPv4(addr);
    let v6: Pick<ActiveEndpoint, 'ip6' | 'prefixLen6' | 'gateway6'> = {};
    const space6 = this.spaces6.get(net.Id);
    if (space6 && net.x.subnet6 && net.x.gateway6) {
      try {
        v6 = {
          ip6: formatIPv6(allocate6(net, space6, a, mac)),
          prefixLen6: parseCidr6(net.x.subnet6).bits,
          gateway6: net.x.routeVia6 ?? net.x.gateway6,
        };
      } catch (err) {
        space.release(addr);
        throw err;
      }
    }
    return {
      networkId: net.Id,
      endpointId: newId(),
      ifname,
      hostIf: vethName(),
      bridge: net.x.bridge,
      ip: formatIPv4(addr),
      prefixLen: parseCidr(net.x.subnet).bits,
      gateway: net.x.routeVia ?? net.x.gateway,
      mac,
      ...v6,
    };
  }

  release(ep: ActiveEndpoint): void {
    this.spaces.get(ep.networkId)?.release(parseIPv4(ep.ip));
    if (ep.ip6) this.spaces6.get(ep.networkId)?.release(parseIPv6(ep.ip6));
  }
}

/**
 * A static IPv6Address, else on the default bridge the range's prefix with the MAC as host part
 * (dockerd's way there), else the next free address.
 */
function allocate6(net: NetworkRecord, space: AddressSpace6, a: Attachment, mac: string): bigint {
  const want = a.config.IPAMConfig?.IPv6Address;
  if (want) return space.allocate(parseIPv6(want));
  if (net.x.defaultBridge) {
    const fromMac = addressFromMac(space.range, mac);
    if (fromMac !== undefined && !space.inUse(fromMac)) return space.allocate(fromMac);
  }
  return space.allocate();
}
