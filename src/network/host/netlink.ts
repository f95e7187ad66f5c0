// Links, addresses and routes through iproute2. Each operation is one `ip -batch` process (in the
// host namespace, or in a container's through unshare/nsenter), so a container's whole network —
// namespace, veth pair, address, route, bridge port — costs two short processes, started by the
// helper shells (util/helper-shell.ts) or the long-lived `ip` (ip-server.ts), never by a fork of the daemon.
import { runCommand } from '../../util/helper-shell.ts';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export type Where = { kind: 'host' } | { kind: 'new-netns'; path: string } | { kind: 'netns'; path: string };

/** `ip -batch -` with the lines, in the host namespace, a new namespace bound on `path`, or an existing one. */
export async function ipBatch(lines: string[], where: Where = { kind: 'host' }): Promise<void> {
  if (lines.length === 0) return;
  const input = lines.join('\n') + '\n';
  switch (where.kind) {
    case 'host':
      await runCommand('ip', ['-batch', '-'], { input });
      return;
    case 'new-netns':
      // unshare bind-mounts the new namespace on the (existing, empty) file and runs ip inside it.
      await mkdir(dirname(where.path), { recursive: true, mode: 0o700 });
      await writeFile(where.path, '');
      await runCommand('unshare', [`--net=${where.path}`, 'ip', '-batch', '-'], { input });
      return;
    case 'netns':
      await runCommand('nsenter', [`--net=${where.path}`, 'ip', '-batch', '-'], { input });
  }
}

export function linkExists(name: string): boolean {
  return existsSync(`/sys/class/net/${name}`);
}

export function isBridge(name: string): boolean {
  return existsSync(`/sys/class/net/${name}/bridge`);
}

/** The global IPv6 addresses on a link, as "addr/n". */
export async function linkIPv6(name: string): Promise<string[]> {
  const out = await runCommand('ip', ['-j', '-6', 'addr', 'show', 'dev', name, 'scope', 'global']);
  const parsed = JSON.parse(out || '[]') as Array<{ addr_info?: Array<{ family: string; local: string; prefixlen: number }> }>;
  return parsed.flatMap((l) => (l.addr_info ?? []).filter((a) => a.family === 'inet6').map((a) => `${a.local}/${a.prefixlen}`));
}

/** The IPv4 addresses on a link, as "a.b.c.d/n". */
export async function linkIPv4(name: string): Promise<string[]> {
  const out = await runCommand('ip', ['-j', '-4', 'addr', 'show', 'dev', name]);
  const parsed = JSON.parse(out || '[]') as Array<{ addr_info?: Array<{ family: string; local: string; prefixlen: number }> }>;
  return parsed.flatMap((l) => (l.addr_info ?? []).filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`));
}

export function linkAliasOf(name: string): string {
  try {
    return readFileSync(`/sys/class/net/${name}/ifalias`, 'utf8').trim();
  } catch {
    return ''; // no such link (or no alias file): no alias
  }
}

/** Links whose alias marks them as created by the daemon with this tag (see naming.ts). */
export function linksWithAlias(alias: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSafe('/sys/class/net');
  } catch {
    return []; // no /sys/class/net (not a network namespace we can read): no links of ours
  }
  return names.filter((n) => {
    try {
      return readFileSync(`/sys/class/net/${n}/ifalias`, 'utf8').trim() === alias;
    } catch {
      return false; // the link went between the listing and the read
    }
  });
}

function readdirSafe(path: string): string[] {
  // Synchronous is fine: /sys/class/net is small and in memory.
  return readdirSync(path);
}

/** One side of a container's attachment to a bridge. */
export interface VethPlan {
  /** Interface name inside the container (eth0…). */
  ifname: string;
  /** The host end, enslaved to the bridge. */
  hostIf: string;
  mac: string;
  mtu: number;
  /** "a.b.c.d/n" */
  address: string;
  /** Default route through this interface, when it is the container's gateway endpoint. */
  gateway?: string;
  /** "addr/n" on IPv6 networks, and the IPv6 default route (gateway endpoint only). */
  address6?: string;
  gateway6?: string;
  bridge: string;
  hairpin: boolean;
}

function inNamespaceLines(p: VethPlan): string[] {
  const lines = [
    // Created inside the container's namespace with the peer moved straight to the daemon's
    // (process.pid names it), so nothing ever sits in the host namespace under the name eth0.
    `link add ${p.ifname} address ${p.mac} mtu ${p.mtu} type veth peer name ${p.hostIf} mtu ${p.mtu} netns ${process.pid}`,
    `addr add ${p.address} brd + dev ${p.ifname}`,
  ];
  // nodad: the address is ours alone on the bridge; duplicate detection would hold it
  // "tentative" (unusable) for a second or more after the container starts.
  if (p.address6) lines.push(`addr add ${p.address6} dev ${p.ifname} nodad`);
  lines.push(`link set ${p.ifname} up`);
  if (p.gateway) lines.push(`route add default via ${p.gateway} dev ${p.ifname}`);
  if (p.gateway6) lines.push(`route add ::/0 via ${p.gateway6} dev ${p.ifname}`);
  return lines;
}

function hostLines(p: VethPlan): string[] {
  const lines = [`link set ${p.hostIf} master ${p.bridge} up`];
  if (p.hairpin) lines.push(`link set ${p.hostIf} type bridge_slave hairpin on`);
  return lines;
}

/** Runs `ip` lines in the host namespace (a one-off `ip -batch`, or the daemon's long-lived one). */
export type HostIp = (lines: string[]) => Promise<void>;

const oneOff: HostIp = (lines) => ipBatch(lines);

/** A new network namespace bound on `path` with loopback up and the planned interfaces. */
export async function createSandbox(path: string, plans: VethPlan[], host: HostIp = oneOff): Promise<void> {
  await ipBatch(['link set lo up', ...plans.flatMap(inNamespaceLines)], { kind: 'new-netns', path });
  await host(plans.flatMap(hostLines));
}

/** Interfaces added to an existing namespace (network connect on a running container). */
export async function addInterfaces(path: string, plans: VethPlan[], host: HostIp = oneOff): Promise<void> {
  await ipBatch(plans.flatMap(inNamespaceLines), { kind: 'netns', path });
  await host(plans.flatMap(hostLines));
}

/** Replaces the default routes inside a namespace (removes them where `via` has none). */
export async function setDefaultRoute(
  path: string,
  via: { gateway: string; gateway6?: string; ifname: string } | undefined,
): Promise<void> {
  const lines = [
    via ? `route replace default via ${via.gateway} dev ${via.ifname}` : 'route flush exact 0.0.0.0/0',
    via?.gateway6 ? `route replace ::/0 via ${via.gateway6} dev ${via.ifname}` : 'route flush exact ::/0',
  ];
  for (const line of lines) await ipBatch([line], { kind: 'netns', path }).catch(() => undefined); // Line by line, each failure ignored: flushing a route that is not there fails, and is the goal.
}

/** Deletes links (a veth's peer goes with it); ones already gone are fine. */
export async function deleteLinks(names: string[], host: HostIp = oneOff): Promise<void> {
  const present = names.filter(linkExists);
  if (present.length === 0) return;
  await host(present.map((n) => `link del ${n}`)).catch(async () => {
    // One may have vanished between the check and the batch: delete the rest one by one.
    // A link that still cannot be deleted is going with its namespace (the kernel's deferred clean-up).
    for (const n of present) if (linkExists(n)) await host([`link del ${n}`]).catch(() => undefined); // see above: the namespace takes it
  });
}

export interface BridgeSpec {
  name: string;
  mtu: number;
  /** "a.b.c.d/n" for the bridge, or undefined to leave its addresses alone (an existing --bridge). */
  address?: string;
  /** Its one global IPv6 address ("addr/n"), null for none, undefined to leave them alone. */
  address6?: string | null;
  /** ifalias marking the link as the daemon's (removed with the daemon's networks). */
  alias?: string;
}

/** Creates the bridge if missing, gives it exactly its IPv4 address, and brings it up. */
export async function ensureBridge(spec: BridgeSpec): Promise<void> {
  const lines: string[] = [];
  if (!linkExists(spec.name)) {
    lines.push(`link add ${spec.name} mtu ${spec.mtu} type bridge`);
    if (spec.alias) lines.push(`link set ${spec.name} alias ${spec.alias}`);
  }
  if (spec.address) {
    const have = lines.length ? [] : await linkIPv4(spec.name);
    for (const a of have) if (a !== spec.address) lines.push(`addr del ${a} dev ${spec.name}`);
    if (!have.includes(spec.address)) lines.push(`addr add ${spec.address} brd + dev ${spec.name}`);
  }
  lines.push(`link set ${spec.name} up`);
  await ipBatch(lines);
  if (spec.address6 !== undefined) await ensureBridgeIPv6(spec.name, spec.address6);
}

/** Gives a bridge exactly one global IPv6 address (or none), IPv6 enabled on it when it has one. */
async function ensureBridgeIPv6(name: string, address6: string | null): Promise<void> {
  if (address6) writeSysctl(`net/ipv6/conf/${name}/disable_ipv6`, '0');
  const have = readSysctl(`net/ipv6/conf/${name}/disable_ipv6`) === '1' ? [] : await linkIPv6(name);
  const norm = (a: string) => a.toLowerCase();
  const lines: string[] = [];
  for (const a of have) if (!address6 || norm(a) !== norm(address6)) lines.push(`addr del ${a} dev ${name}`);
  if (address6 && !have.some((a) => norm(a) === norm(address6))) lines.push(`addr add ${address6} dev ${name} nodad`);
  await ipBatch(lines);
}

/** Writes a sysctl given as its path under /proc/sys ("net/ipv4/ip_forward"); false on failure. */
export function writeSysctl(path: string, value: string): boolean {
  try {
    writeFileSync(`/proc/sys/${path}`, value);
    return true;
  } catch {
    return false; // not writable here (no such sysctl, read-only /proc): the caller decides what that means
  }
}

export function readSysctl(path: string): string | undefined {
  try {
    return readFileSync(`/proc/sys/${path}`, 'utf8').trim();
  } catch {
    return undefined; // no such sysctl in this kernel
  }
}
