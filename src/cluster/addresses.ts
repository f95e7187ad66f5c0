// Listen and advertise addresses of `swarm init`/`join`: `ip`, `ip:port`, `[v6]:port`, `:port` or an
// interface name, as dockerd accepts them. The manager endpoint listens on the listen port (2377
// by default); a manager's etcd takes the two ports after it (client +2, peer +3: 2379 and 2380).
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { invalidParameter } from '../errors.ts';

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

/**
 * The address to advertise: the given one; else the daemon's --cluster-default-advertise-addr (an IP
 * or interface name, with the listen port, as dockerd); else a specific listen IP; else the host's
 * only address.
 */
export function chooseAdvertise(listen: HostPort, advertise: string | undefined, defaultAddr?: string): HostPort {
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
  if (!unspecified(listen.host)) return listen;
  const candidates = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && a.family === 'IPv4');
  if (candidates.length !== 1) {
    throw invalidParameter(
      'could not choose an IP address to advertise since this system has multiple addresses on different interfaces (use --advertise-addr)',
    );
  }
  return { host: candidates[0]!.address, port: listen.port };
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
