// Listen and advertise addresses of `swarm init`/`join`: `ip`, `ip:port`, `[v6]:port`, `:port` or an
// interface name, as dockerd accepts them. The manager endpoint listens on the listen port (2377
// by default); a manager's etcd takes the two ports after it (client +2, peer +3: 2379 and 2380).
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { invalidParameter } from '../../errors.ts';
import { runCommand } from '../../util/helper-shell.ts';

export const DEFAULT_LISTEN_PORT = 2377;

export interface HostPort {
  host: string;
  port: number;
}

export const formatHostPort = (a: HostPort): string => (a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

function interfaceAddress(name: string, what = 'listen address'): string {
  const addrs = networkInterfaces()[name];
  if (!addrs) throw invalidParameter(`invalid ${what}: no such interface ${JSON.stringify(name)}`);
  const v4 = addrs.filter((a) => a.family === 'IPv4');
  if (v4.length !== 1) throw invalidParameter(`interface ${name} has ${v4.length} IPv4 addresses: give an IP address instead`);
  return v4[0]!.address;
}

/** Parses an address; a missing port is `defaultPort`, a missing host is 0.0.0.0. */
export function parseAddr(raw: string, defaultPort: number, what: string): HostPort {
  let host = raw;
  let port = defaultPort;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
  if (v6) {
    host = v6[1]!;
    if (v6[2]) port = Number(v6[2]);
  } else if (/^[^:]*:\d+$/.test(raw)) {
    const i = raw.lastIndexOf(':');
    host = raw.slice(0, i);
    port = Number(raw.slice(i + 1));
  } else if (/:/.test(raw) && !isIP(raw)) {
    throw invalidParameter(`invalid ${what} ${JSON.stringify(raw)}`);
  }
  if (host === '') host = '0.0.0.0';
  if (!isIP(host)) host = interfaceAddress(host);
  if (!(port > 0 && port < 65534)) throw invalidParameter(`invalid ${what} ${JSON.stringify(raw)}: port out of range`);
  return { host, port };
}

const unspecified = (host: string) => host === '0.0.0.0' || host === '::';

/** A network interface as `ip -d -j addr show` describes it. */
export interface SystemLink {
  name: string;
  /** The link kind (veth, bridge, vxlan…); '' for a device (a NIC, or lo). */
  kind: string;
  /** Administratively up. */
  up: boolean;
  loopback: boolean;
  addrs: string[];
}

/** What the system-address detection needs: the links, and the subnets of the daemon's own networks. */
export interface SystemAddresses {
  links: SystemLink[];
  managedSubnets: string[];
}

/** The host's links and their addresses (iproute2's JSON). */
export async function systemLinks(): Promise<SystemLink[]> {
  const out = await runCommand('ip', ['-d', '-j', 'addr', 'show']);
  const rows = JSON.parse(out || '[]') as Array<{
    ifname: string;
    flags?: string[];
    linkinfo?: { info_kind?: string };
    addr_info?: Array<{ local?: string }>;
  }>;
  return rows.map((r) => ({
    name: r.ifname,
    kind: r.linkinfo?.info_kind ?? '',
    up: (r.flags ?? []).includes('UP'),
    loopback: (r.flags ?? []).includes('LOOPBACK'),
    addrs: (r.addr_info ?? []).flatMap((a) => (a.local ? [a.local] : [])),
  }));
}

/** Go's net.IP.IsGlobalUnicast: not unspecified, loopback, link-local, multicast or broadcast. */
export function isGlobalUnicast(ip: string): boolean {
  if (isIPv4(ip)) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    return !(ip === '0.0.0.0' || ip === '255.255.255.255' || a === 127 || (a === 169 && b === 254) || a >= 224);
  }
  if (!isIPv6(ip)) return false;
  const v = v6Value(ip);
  return !(v === 0n || v === 1n || v >> 118n === 0x3fan || v >> 120n === 0xffn);
}

function v6Value(ip: string): bigint {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const parse = (s: string | undefined) =>
    (s ? s.split(':') : []).flatMap((g) => {
      if (!g.includes('.')) return [parseInt(g, 16)];
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  const h = parse(head);
  const t = parse(tail);
  const groups = tail === undefined ? h : [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function inSubnet(ip: string, cidr: string): boolean {
  const [net, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  if (!net || !(bits >= 0)) return false;
  if (isIPv4(ip) && isIPv4(net)) {
    const v = (x: string) => x.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    const size = 2 ** (32 - bits);
    return Math.floor(v(ip) / size) === Math.floor(v(net) / size);
  }
  if (isIPv6(ip) && isIPv6(net)) return v6Value(ip) >> BigInt(128 - bits) === v6Value(net) >> BigInt(128 - bits);
  return false;
}

const multipleIps = (ifA: string, ifB: string, a: string, b: string) =>
  invalidParameter(
    ifA === ifB
      ? `could not choose an IP address to advertise since this system has multiple addresses on interface ${ifA} (${a} and ${b})`
      : `could not choose an IP address to advertise since this system has multiple addresses on different interfaces (${a} on ${ifA} and ${b} on ${ifB})`,
  );

/**
 * dockerd's system address: the one address of the up, non-loopback links with global unicast
 * addresses — device links only (no veth, bridge, vxlan…) when there is any such device, else
 * every link, leaving out the daemon's own networks' subnets (a daemon inside a container, whose
 * interfaces are veths). An interface with one IPv4 and one IPv6 address counts as its IPv4 one.
 */
export function resolveSystemAddr(sys: SystemAddresses): string {
  const pick = (links: SystemLink[], skipManaged: boolean): string | undefined => {
    let chosen: { ip: string; link: string } | undefined;
    outer: for (const l of links) {
      let v4: string | undefined;
      let v6: string | undefined;
      for (const ip of l.addrs) {
        if (!isGlobalUnicast(ip)) continue;
        if (skipManaged && sys.managedSubnets.some((c) => inSubnet(ip, c))) continue outer;
        if (isIPv4(ip)) {
          if (v4) throw multipleIps(l.name, l.name, v4, ip);
          v4 = ip;
        } else {
          if (v6) throw multipleIps(l.name, l.name, v6, ip);
          v6 = ip;
        }
      }
      const ip = v4 ?? v6;
      if (!ip) continue;
      if (chosen) throw multipleIps(chosen.link, l.name, chosen.ip, ip);
      chosen = { ip, link: l.name };
    }
    return chosen?.ip;
  };
  const devices = sys.links.filter((l) => l.kind === '' && l.up && l.addrs.some(isGlobalUnicast));
  const ip = devices.length
    ? pick(devices, false)
    : pick(
        sys.links.filter((l) => l.up && !l.loopback),
        true,
      );
  if (!ip) throw invalidParameter("could not find the system's IP address");
  return ip;
}

/**
 * The address to advertise, as dockerd resolves it: the given one; else the daemon's
 * --cluster-default-advertise-addr (an IP or interface name, with the listen port); else the
 * system's address (resolveSystemAddr over `links`, leaving out `managedSubnets`), with the listen
 * port.
 */
export async function chooseAdvertise(
  listen: HostPort,
  advertise: string | undefined,
  defaultAddr: string | undefined,
  managedSubnets: () => string[],
  links: () => Promise<SystemLink[]> = systemLinks,
): Promise<HostPort> {
  if (advertise) {
    const a = parseAddr(advertise, listen.port, 'advertise address');
    if (unspecified(a.host)) throw invalidParameter('advertise address must be a non-zero IP address');
    return a;
  }
  if (defaultAddr) {
    let host = defaultAddr;
    if (!isIP(host)) {
      host = interfaceAddress(defaultAddr, 'default advertise address');
    }
    if (unspecified(host)) throw invalidParameter('default advertise address must be a non-zero IP address or network interface');
    return { host, port: listen.port };
  }
  return { host: resolveSystemAddr({ links: await links(), managedSubnets: managedSubnets() }), port: listen.port };
}

/**
 * The advertise address a joining node sends, as dockerd: only one given is resolved (a bad one
 * ignored); without it the host stays unspecified and the manager takes the address the node
 * connects from (JoinResponse.advertiseAddr). The daemon's default is not used on join.
 */
export async function joinAdvertise(listen: HostPort, advertise: string | undefined, managedSubnets: () => string[]): Promise<HostPort> {
  const detected = { host: '0.0.0.0', port: listen.port };
  if (!advertise) return detected;
  return chooseAdvertise(listen, advertise, undefined, managedSubnets).catch(() => detected); // a bad one is ignored (above)
}

/**
 * The IP addresses a node certificate names. etcd checks a peer's client certificate against the
 * address the connection comes from, and a connection between two loopback addresses leaves from
 * 127.0.0.1 (the loopback route's source), so loopback nodes also name 127.0.0.1.
 */
export function certificateIps(...hosts: string[]): string[] {
  const ips = hosts.filter((h) => h !== '0.0.0.0' && h !== '::');
  if (ips.some((h) => h.startsWith('127.'))) ips.push('127.0.0.1');
  return [...new Set(ips)];
}
