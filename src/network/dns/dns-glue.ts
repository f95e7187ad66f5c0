// The embedded DNS of user networks, as the network services see it: one server per user bridge
// network on its gateway, answering from the containers attached (names, aliases, short IDs,
// hostnames; PTR), scoped to the asking container's networks, forwarding the rest upstream; and the
// resolv.conf settings of a container the embedded DNS serves.
import { readFileSync } from 'node:fs';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import type { Logger } from '../../util/log.ts';
import type { ContainerLookup, NetContainer } from '../container-contract.ts';
import { EmbeddedDns } from './dns-server.ts';
import { parseResolvConf, type DnsSettings } from '../sandbox/etc-files.ts';
import { contains, formatIPv4, isIPv4, parseCidr, parseIPv4 } from '../ipam/ip4.ts';
import { formatIPv6, parseIPv6 } from '../ipam/ip6.ts';
import type { NetworkRecord, Sandbox } from '../records.ts';
import type { NetworkState } from '../state.ts';
import { dnsNamesFor } from '../views.ts';

export interface NetworkDnsDeps {
  config: () => DaemonConfig;
  log: Logger;
  state: NetworkState;
  containers: ContainerLookup;
  /** Endpoints of other nodes on a network (overlay networks: overlay/driver.ts). */
  remote?: (netId: string) => Array<{ names: string[]; ip: string; containerId: string }>;
}

function readResolvConf(): string {
  try {
    return readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return ''; // no host resolv.conf: no host resolvers (the container files fall back to public ones)
  }
}

/** User bridge networks with a gateway get an embedded DNS server. */
export function servesDns(n: NetworkRecord): boolean {
  return (n.Driver === 'bridge' || n.Driver === 'overlay') && !n.x.predefined && !n.ConfigOnly && Boolean(n.x.gateway);
}

export class NetworkDns {
  private readonly servers = new Map<string, EmbeddedDns>();

  constructor(private readonly d: NetworkDnsDeps) {}

  has(netId: string): boolean {
    return this.servers.has(netId);
  }

  /** Starts the network's server; a failure to listen is a warning (its containers use the host's resolvers). */
  async start(n: NetworkRecord): Promise<void> {
    if (this.servers.has(n.Id) || !n.x.gateway) return;
    const subnet = parseCidr(n.x.subnet!);
    const server = new EmbeddedDns(
      n.x.gateway,
      {
        serves: (clientIp) => isIPv4(clientIp) && contains(subnet, parseIPv4(clientIp)),
        lookup: (name, clientIp) => this.lookup(n.Id, name, clientIp),
        reverse: (addr) => this.reverse(n.Id, addr),
        upstreams: (clientIp) => this.upstreams(n.Id, clientIp),
      },
      this.d.log.child({ module: 'dns', network: n.Name }),
    );
    try {
      await server.start();
      this.servers.set(n.Id, server);
    } catch (err) {
      this.d.log.warn(
        `embedded DNS for network ${n.Name} could not listen on ${n.x.gateway}:53: ${(err as Error).message}; its containers use the host's resolvers`,
      );
    }
  }

  async stop(netId: string): Promise<void> {
    const server = this.servers.get(netId);
    this.servers.delete(netId);
    await server?.stop().catch((err: unknown) => this.d.log.debug(`stopping an embedded DNS server: ${(err as Error).message}`));
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.servers.keys()].map((id) => this.stop(id)));
  }

  /** resolv.conf settings for a container the embedded DNS serves (through its gateway network first); undefined otherwise. */
  resolvConf(rec: NetContainer, sb: Sandbox): DnsSettings | undefined {
    const dnsEp = [...sb.endpoints]
      .sort((a, b) => Number(b.networkId === sb.gatewayNetworkId) - Number(a.networkId === sb.gatewayNetworkId))
      .find((e) => this.servers.has(e.networkId));
    if (!dnsEp) return undefined;
    const cfg = this.d.config();
    const hc = rec.HostConfig;
    const host = parseResolvConf(readResolvConf());
    const options = hc.DnsOptions?.length ? [...hc.DnsOptions] : cfg['dns-opts'].length ? [...cfg['dns-opts']] : host.options;
    if (!options.some((o) => o.startsWith('ndots:'))) options.push('ndots:0');
    return {
      servers: [this.d.state.network(dnsEp.networkId)!.x.gateway!],
      options,
      search: hc.DnsSearch?.length ? hc.DnsSearch : cfg['dns-search'],
    };
  }

  /** A container by ID, or undefined when it is gone (removed while its endpoint was being released). */
  private record(id: string): NetContainer | undefined {
    try {
      return this.d.containers.find(id);
    } catch {
      return undefined; // not found: it has no names to answer with
    }
  }

  /** The networks a query is answered from: every user network of the asking container (as dockerd's per-sandbox resolver). */
  private scopeOf(netId: string, clientIp: string | undefined): string[] {
    if (clientIp) {
      for (const c of this.d.state.containers()) {
        if (c.sandbox?.endpoints.some((e) => e.networkId === netId && e.ip === clientIp)) {
          return c.sandbox.endpoints
            .map((e) => e.networkId)
            .filter((id) => this.d.state.network(id) && !this.d.state.network(id)!.x.predefined);
        }
      }
    }
    return [netId];
  }

  private lookup(netId: string, rawName: string, clientIp?: string): Array<number | bigint> | undefined {
    const name = rawName.toLowerCase();
    const out: Array<number | bigint> = [];
    const linked = clientIp ? this.linkTarget(netId, name, clientIp) : undefined;
    for (const id of this.scopeOf(netId, clientIp)) {
      const net = this.d.state.network(id);
      if (!net) continue;
      const suffix = `.${net.Name.toLowerCase()}`;
      const short = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined;
      for (const { c, ep } of this.d.state.endpointsOn(id)) {
        const rec = this.record(c.id);
        if (!rec) continue;
        const a = c.attachments.find((x) => x.networkId === id);
        const names = dnsNamesFor(rec, a?.config.Aliases ?? []).map((s) => s.toLowerCase());
        if (names.includes(name) || (short !== undefined && names.includes(short)) || (linked !== undefined && rec.Id === linked)) {
          out.push(parseIPv4(ep.ip));
          if (ep.ip6) out.push(parseIPv6(ep.ip6));
        }
      }
      for (const r of this.d.remote?.(id) ?? []) {
        const names = r.names.map((s) => s.toLowerCase());
        if (names.includes(name) || (short !== undefined && names.includes(short))) out.push(parseIPv4(r.ip));
      }
    }
    return out.length ? out : undefined;
  }

  /**
   * `--link other:alias` on a user network (dockerd: the endpoint's Links, an alias only the linking
   * container resolves): the ID of the container `name` is a link alias for, seen from the asking
   * container, or undefined.
   */
  private linkTarget(netId: string, name: string, clientIp: string): string | undefined {
    const asking = this.d.state.containers().find((c) => c.sandbox?.endpoints.some((e) => e.networkId === netId && e.ip === clientIp));
    const rec = asking && this.record(asking.id);
    if (!asking || !rec) return undefined;
    const net = this.d.state.network(netId);
    const links = [...(asking.attachments.find((x) => x.networkId === netId)?.config.Links ?? [])];
    // API clients put --link in HostConfig only; on the container's own user network it means the same.
    if (net && rec.HostConfig.NetworkMode === net.Name) links.push(...(rec.HostConfig.Links ?? []));
    for (const link of links) {
      const colon = link.indexOf(':');
      const target = (colon < 0 ? link : link.slice(0, colon)).replace(/^\//, '');
      const alias =
        colon < 0
          ? target
          : (link
              .slice(colon + 1)
              .split('/')
              .pop() ?? '');
      if (alias.toLowerCase() !== name) continue;
      const other = this.record(target);
      if (other) return other.Id;
    }
    return undefined;
  }

  private reverse(netId: string, addr: number | bigint): string | undefined {
    const ip = typeof addr === 'bigint' ? formatIPv6(addr) : formatIPv4(addr);
    for (const { c, ep } of this.d.state.endpointsOn(netId)) {
      if (ep.ip !== ip && ep.ip6 !== ip) continue;
      const rec = this.record(c.id);
      if (rec) return `${rec.Name.slice(1)}.${this.d.state.network(netId)?.Name ?? ''}`.replace(/\.$/, '');
    }
    const r = (this.d.remote?.(netId) ?? []).find((x) => x.ip === ip);
    if (r) return `${r.names[0]}.${this.d.state.network(netId)?.Name ?? ''}`;
    return undefined;
  }

  private upstreams(netId: string, clientIp: string): string[] {
    let rec: NetContainer | undefined;
    let external = !this.d.state.network(netId)?.Internal;
    for (const c of this.d.state.containers()) {
      if (!c.sandbox?.endpoints.some((e) => e.networkId === netId && e.ip === clientIp)) continue;
      rec = this.record(c.id);
      external = c.sandbox.endpoints.some((e) => !this.d.state.network(e.networkId)?.Internal);
      break;
    }
    if (!external) return [];
    if (rec?.HostConfig.Dns?.length) return rec.HostConfig.Dns;
    const cfg = this.d.config();
    if (cfg.dns.length) return cfg.dns;
    return parseResolvConf(readResolvConf()).servers;
  }
}
