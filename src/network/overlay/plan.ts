// The pure rules of overlay networks: VNI choice (dockerd's range from 4096), subnet choice from the
// cluster's address pools, address choice within a subnet, device names, and the kernel entries a
// node needs for the remote endpoints it knows (forwarding database + neighbour), as a diff.
import { contains, formatCidr, formatIPv4, overlaps, parseCidr, parseIPv4, size, type Cidr } from '../ipam/ip4.ts';

/** VNIs handed out by the cluster start here (libnetwork's overlay driver: vxlanIDStart). */
export const VNI_START = 4096;
export const VNI_END = (1 << 24) - 1;
/** The VXLAN header costs 50 bytes of the underlay's 1500. */
export const OVERLAY_MTU = 1450;

/** The lowest free VNI at or above VNI_START; undefined when all are taken. */
export function pickVni(taken: Iterable<number>): number | undefined {
  const used = new Set(taken);
  for (let v = VNI_START; v <= VNI_END; v++) if (!used.has(v)) return v;
  return undefined;
}

/** A VNI given in com.docker.network.driver.overlay.vxlanid_list (the first; one subnet per network here). */
export function parseVniList(text: string): number {
  const first = text.split(',')[0]!.trim();
  const v = Number(first);
  if (!/^\d+$/.test(first) || v < 1 || v > VNI_END) throw new Error(`invalid VXLAN ID ${JSON.stringify(first)}: must be 1..${VNI_END}`);
  return v;
}

/** The first subnet of `bits` in the pools that overlaps none taken. */
export function pickOverlaySubnet(pools: string[], bits: number, taken: string[]): string | undefined {
  const used = taken.map(parseCidr);
  for (const p of pools) {
    const pool = parseCidr(p);
    if (bits < pool.bits) continue;
    const step = 2 ** (32 - bits);
    for (let base = pool.base; base < pool.base + size(pool); base += step) {
      const c: Cidr = { base: base >>> 0, bits };
      if (!used.some((u) => overlaps(u, c))) return formatCidr(c);
    }
  }
  return undefined;
}

/** The first host address of the subnet that is not the gateway, the broadcast or taken. */
export function pickAddress(subnetText: string, gateway: string, taken: Iterable<string>): string | undefined {
  return freeAddresses(subnetText, gateway, taken, 1)[0];
}

/** Up to `limit` free host addresses in order (candidates for claims racing with other nodes). */
export function freeAddresses(subnetText: string, gateway: string, taken: Iterable<string>, limit: number): string[] {
  const subnet = parseCidr(subnetText);
  const used = new Set(taken);
  used.add(gateway);
  const out: string[] = [];
  const last = subnet.base + size(subnet) - 1;
  for (let a = subnet.base + 1; a < last && out.length < limit; a++) {
    const ip = formatIPv4(a >>> 0);
    if (!used.has(ip)) out.push(ip);
  }
  return out;
}

/** Whether an address lies in the subnet (a static address must). */
export function inSubnet(subnetText: string, ip: string): boolean {
  return contains(parseCidr(subnetText), parseIPv4(ip));
}

/** Device names: the bridge and the vxlan link of a network on this node (Linux names ≤ 15 chars). */
export function overlayDevices(networkId: string): { bridge: string; vxlan: string } {
  return { bridge: `ov-${networkId.slice(0, 12)}`, vxlan: `vx-${networkId.slice(0, 12)}` };
}

/** One remote endpoint as the kernel needs it: its MAC behind the VTEP, its IP answered by proxy ARP. */
export interface PeerEntry {
  ip: string;
  mac: string;
  vtep: string;
}

const key = (p: PeerEntry) => `${p.ip}|${p.mac}|${p.vtep}`;

/**
 * The `bridge` and `ip` batch lines that take a vxlan device from the entries it has to the ones it
 * should have: removals first (a MAC may move to another VTEP), then additions.
 */
export function planPeers(dev: string, have: PeerEntry[], want: PeerEntry[]): { bridge: string[]; ip: string[] } {
  const wantKeys = new Set(want.map(key));
  const haveKeys = new Set(have.map(key));
  const bridge: string[] = [];
  const ip: string[] = [];
  for (const p of have) {
    if (wantKeys.has(key(p))) continue;
    bridge.push(`fdb del ${p.mac} dev ${dev} dst ${p.vtep} self`);
    ip.push(`neigh del ${p.ip} dev ${dev}`);
  }
  for (const p of want) {
    if (haveKeys.has(key(p))) continue;
    bridge.push(`fdb append ${p.mac} dev ${dev} dst ${p.vtep} self permanent`);
    ip.push(`neigh replace ${p.ip} lladdr ${p.mac} dev ${dev} nud permanent`);
  }
  return { bridge, ip };
}
