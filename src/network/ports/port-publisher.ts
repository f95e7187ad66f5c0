// Published ports: host ports chosen (PortBindings, PublishAllPorts, ranges, other daemons' DNATs
// avoided), each bound by the userland proxy (in-process or external) or held by a reserved socket,
// the DNAT rules written, and the listeners of a surviving sandbox started again after a restart.
import { existsSync } from 'node:fs';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import type { Logger } from '../../util/log.ts';
import type { NetContainer } from '../container-contract.ts';
import { chainNames, readForeignDnatPorts } from '../firewall/firewall.ts';
import type { FirewallSync } from '../firewall/firewall-sync.ts';
import { isV6Text } from '../ipam/ip6.ts';
import { chainPrefix } from '../naming.ts';
import { readSysctl } from '../host/netlink.ts';
import { PortAllocator, requestedPorts, type Proto } from './ports.ts';
import { killStaleProxy, reservePort, startProxy, type ProxyHandle } from './proxy.ts';
import type { ActivePort, ContainerNet, NetworkRecord } from '../records.ts';
import type { NetworkState } from '../state.ts';
import type { RootlesskitPorts } from './rootlesskit-ports.ts';

export interface PortPublisherDeps {
  config: () => DaemonConfig;
  log: Logger;
  state: NetworkState;
  firewall: FirewallSync;
  tag: string;
  /** Rootless mode: published ports are also opened on the host by rootlesskit's port driver. */
  parentPorts?: Pick<RootlesskitPorts, 'expose'>;
}

interface BindSpec {
  proto: Proto;
  hostIp: string;
  hostPort: number;
  containerIp: string;
  containerPort: number;
}

/** Whether the host has IPv6 at all (wildcard port bindings are then published on :: too). */
function hostHasIPv6(): boolean {
  return existsSync('/proc/net/if_inet6') && readSysctl('net/ipv6/conf/all/disable_ipv6') !== '1';
}

export class PortPublisher {
  private readonly alloc = new PortAllocator();
  /** The open listeners (proxies or reserved sockets) of each container. */
  private readonly proxies = new Map<string, ProxyHandle[]>();

  constructor(private readonly d: PortPublisherDeps) {}

  /** A surviving sandbox's port stays taken (start-up). */
  hold(owner: string, p: ActivePort): void {
    this.alloc.hold(owner, p);
  }

  /** Publishes the container's ports on the endpoint of `net` (its gateway network). */
  async publish(rec: NetContainer, c: ContainerNet, net: NetworkRecord): Promise<void> {
    const { bindings } = requestedPorts(rec.HostConfig, rec.Config.ExposedPorts);
    const ep = c.sandbox!.endpoints.find((e) => e.networkId === net.Id);
    if (!bindings.length || !ep) return;
    const defaultIp = net.x.hostBindingIpv4 || this.d.config().ip || '0.0.0.0';
    const handles: ProxyHandle[] = [];
    this.proxies.set(rec.Id, handles);
    const cfg = this.d.config();
    const foreign = bindings.some((b) => b.hostPortLo !== b.hostPortHi || b.hostPortLo === 0)
      ? await this.foreignPorts()
      : new Set<string>();
    for (const b of bindings) {
      const hostIp = b.hostIp || defaultIp;
      // An IPv6 host address goes to the container's IPv6 address, or through the proxy to its IPv4 one.
      const target = isV6Text(hostIp) ? (ep.ip6 ?? ep.ip) : ep.ip;
      const avoid = (p: number) => foreign.has(`${b.proto}/${p}`);
      const { port, handle } = await this.alloc.allocate(
        rec.Id,
        { proto: b.proto, hostIp, lo: b.hostPortLo, hi: b.hostPortHi, avoid },
        (hostPort) => this.bind({ proto: b.proto, hostIp, hostPort, containerIp: target, containerPort: b.port }),
      );
      handles.push(handle);
      c.sandbox!.ports.push({
        proto: b.proto,
        containerPort: b.port,
        hostIp,
        hostPort: port,
        containerIp: target,
        bridge: ep.bridge,
        ...(handle.pid ? { proxyPid: handle.pid } : {}),
      });
      // As dockerd, a binding without an address is published on IPv6 too, on the same port: the
      // wildcard listener above is dual-stack (the proxy's path), and ip6tables DNATs external
      // IPv6 traffic to the container's IPv6 address when it has one.
      if (b.hostIp === '' && hostIp === '0.0.0.0' && hostHasIPv6() && (ep.ip6 || cfg['userland-proxy'])) {
        const twin = {
          proto: b.proto,
          containerPort: b.port,
          hostIp: '::',
          hostPort: port,
          containerIp: ep.ip6 ?? ep.ip,
          bridge: ep.bridge,
        };
        if (!cfg['userland-proxy'] || !cfg['userland-proxy-path']) {
          c.sandbox!.ports.push({ ...twin, sharesListener: true });
        } else {
          // An external proxy listens on one family: the IPv6 side needs its own.
          const h = await this.bind(twin).catch(
            (err: Error) => void this.d.log.warn(`publishing ${port}/${b.proto} on [::]: ${err.message}`, { id: rec.Id }),
          );
          if (h) {
            handles.push(h);
            c.sandbox!.ports.push({ ...twin, ...(h.pid ? { proxyPid: h.pid } : {}) });
          }
        }
      }
    }
    this.d.state.persist(c);
    await this.d.firewall.sync();
  }

  /** After a restart: the proxies of a surviving sandbox (an old external one is stopped first). */
  async restore(c: ContainerNet): Promise<void> {
    const proxyPath = this.d.config()['userland-proxy-path'];
    const handles: ProxyHandle[] = [];
    this.proxies.set(c.id, handles);
    for (const p of c.sandbox!.ports) {
      if (p.sharesListener) continue;
      if (p.proxyPid && proxyPath) killStaleProxy(p.proxyPid, proxyPath);
      const h = await this.bind({
        proto: p.proto,
        hostIp: p.hostIp,
        hostPort: p.hostPort,
        containerIp: p.containerIp,
        containerPort: p.containerPort,
      });
      handles.push(h);
      if (h.pid) p.proxyPid = h.pid;
      else delete p.proxyPid;
    }
    this.d.state.persist(c);
  }

  /** Closes the container's listeners; returns how many there were. */
  async close(owner: string): Promise<number> {
    const handles = this.proxies.get(owner) ?? [];
    this.proxies.delete(owner);
    await Promise.all(
      handles.map((h) =>
        h.close().catch((err: unknown) => this.d.log.debug(`closing a port listener: ${(err as Error).message}`, { id: owner })),
      ),
    );
    return handles.length;
  }

  /**
   * Gives the container's host ports back (its listeners closed first). `staleProxies`: ports whose
   * external proxy a previous daemon started (this one opened no listener for them): stopped.
   */
  release(owner: string, staleProxies: ActivePort[] = []): void {
    const proxyPath = this.d.config()['userland-proxy-path'];
    if (proxyPath) for (const p of staleProxies) if (p.proxyPid) killStaleProxy(p.proxyPid, proxyPath);
    this.alloc.releaseOwner(owner);
  }

  /** Daemon shutdown: every listener closes, except external proxies kept for live-restore. */
  async shutdown(liveRestore: boolean): Promise<void> {
    for (const [id, hs] of this.proxies) {
      this.proxies.delete(id);
      await Promise.all(
        hs.map((h) =>
          h.pid && liveRestore
            ? Promise.resolve()
            : h.close().catch((err: unknown) => this.d.log.debug(`closing a port listener: ${(err as Error).message}`, { id })),
        ),
      );
    }
  }

  private async bind(spec: BindSpec): Promise<ProxyHandle> {
    const cfg = this.d.config();
    const local = cfg['userland-proxy'] ? await startProxy(spec, cfg['userland-proxy-path'] || undefined) : await reservePort(spec);
    if (!this.d.parentPorts) return local;
    try {
      return await this.d.parentPorts.expose(spec, local);
    } catch (err) {
      await local.close().catch((e: unknown) => this.d.log.debug(`closing a port listener: ${(e as Error).message}`));
      throw err;
    }
  }

  /** Ports other daemons DNAT on this host (empty if the nat table cannot be read). */
  private async foreignPorts(): Promise<Set<string>> {
    return readForeignDnatPorts(chainNames(chainPrefix(this.d.tag))).catch((err: unknown) => {
      this.d.log.debug(`reading the nat table for foreign ports: ${(err as Error).message}`);
      return new Set<string>();
    });
  }
}
