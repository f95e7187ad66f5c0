// Container sandboxes: the network namespace of a run (loopback, one veth per bridge network with
// its addresses, the gateway network's default route, published ports), torn down after the run;
// endpoints added and removed while a container runs (connect/disconnect); the container's
// /etc/hosts kept current. Everything about one container happens under its lock.
import { existsSync } from 'node:fs';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { EngineError, internal } from '../../errors.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import { attachmentsOrNone } from '../attachments.ts';
import type { NetContainer, SandboxInfo } from '../container-contract.ts';
import type { NetworkDns } from '../dns/dns-glue.ts';
import { ownHostsLine, updateHostsEntries } from './etc-files.ts';
import type { FirewallSync } from '../firewall/firewall-sync.ts';
import { IpServer } from '../host/ip-server.ts';
import { addInterfaces, createSandbox, deleteLinks, setDefaultRoute, type VethPlan } from '../host/netlink.ts';
import { newId } from '../naming.ts';
import { netnsPath, removeNetns } from '../host/netns.ts';
import type { OverlayNetworks } from '../overlay/driver.ts';
import type { PortPublisher } from '../ports/port-publisher.ts';
import type { ActiveEndpoint, Attachment, ContainerNet, NetworkRecord, Sandbox } from '../records.ts';
import type { NetworkState } from '../state.ts';

export interface SandboxDeps {
  config: () => DaemonConfig;
  log: Logger;
  execRoot: string;
  state: NetworkState;
  ports: PortPublisher;
  dns: NetworkDns;
  firewall: FirewallSync;
  /** Overlay networks of cluster mode (absent: none). */
  overlay?: OverlayNetworks;
}

/** Non-internal bridge networks qualify; highest GwPriority wins, ties go to the first name. */
export function chooseGateway(list: Array<{ net: NetworkRecord; priority: number }>): NetworkRecord | undefined {
  const candidates = list.filter((x) => !x.net.Internal);
  candidates.sort((a, b) => b.priority - a.priority || (a.net.Name < b.net.Name ? -1 : a.net.Name > b.net.Name ? 1 : 0));
  return candidates[0]?.net;
}

/** dockerd's wording for a failed sandbox set-up; the cause's class (400/403/404…) is kept. */
export function setupError(err: unknown, rec: NetContainer, sb: Sandbox): Error {
  const msg = (err as Error).message ?? String(err);
  const ports = sb.ports.length > 0 || /port is already allocated|userland proxy/.test(msg);
  const text = ports
    ? `failed to set up container networking: driver failed programming external connectivity on endpoint ${rec.Name.slice(1)} (${sb.endpoints[0]?.endpointId ?? sb.sandboxId}): ${msg}`
    : `failed to set up container networking: ${msg}`;
  if (err instanceof EngineError) return new EngineError(err.code, text, { cause: err });
  return internal(text, err);
}

export class SandboxService {
  private readonly lock = new KeyedMutex();
  /** Long-lived `ip` processes: one for attaching veths, one for deleting them (slow: an RCU wait each). */
  private readonly attachIp = new IpServer();
  private readonly deleteIp = new IpServer();
  private readonly deletions = new Set<Promise<void>>();
  private readonly hostIp = (lines: string[]) => this.attachIp.run(lines);
  private readonly delIp = (lines: string[]) => this.deleteIp.run(lines);

  constructor(private readonly d: SandboxDeps) {}

  /** Runs `fn` under the container's lock (sandbox changes, connect, disconnect, removal). */
  withContainer<T>(id: string, fn: () => Promise<T>): Promise<T> {
    return this.lock.run(id, fn);
  }

  /** The container's network facts; made from its configuration if networking has none yet. */
  containerNet(rec: NetContainer): ContainerNet {
    let c = this.d.state.container(rec.Id);
    if (!c) {
      c = { id: rec.Id, attachments: attachmentsOrNone(this.d.state, rec.HostConfig, rec.Config) };
      this.d.state.persist(c);
    }
    return c;
  }

  /**
   * The container's network namespace for a run: loopback, one veth per bridge network with its
   * address (the gateway network's carrying the default route), published ports. Rolled back
   * entirely when any step fails.
   */
  async setupSandbox(rec: NetContainer): Promise<SandboxInfo> {
    return this.lock.run(rec.Id, async () => {
      await this.teardownLocked(rec.Id);
      const c = this.containerNet(rec);
      for (const a of c.attachments) {
        if (this.d.state.network(a.networkId)) continue;
        // Created before the network existed, or the network was removed and made again.
        const net = this.d.state.findNetwork(a.name);
        a.networkId = net.Id;
        a.name = net.Name;
        this.d.state.persist(c);
      }
      const bridged = c.attachments
        .map((a) => ({ a, net: this.d.state.network(a.networkId)! }))
        .filter((x) => x.net.Driver === 'bridge' || this.isOverlay(x.net));
      const gw = chooseGateway(bridged.map((x) => ({ net: x.net, priority: x.a.config.GwPriority ?? 0 })));
      const sandbox: Sandbox = { key: netnsPath(this.d.execRoot, rec.Id), sandboxId: newId(), endpoints: [], ports: [] };
      try {
        const plans: VethPlan[] = [];
        c.sandbox = sandbox; // from the first endpoint on: a failure releases what was taken
        for (const [i, { a, net }] of bridged.entries()) {
          // Overlay: devices up and a cluster-unique address claimed first.
          const att = this.isOverlay(net) ? await this.d.overlay!.prepare(net, a, rec.Id) : a;
          const ep = this.d.state.addresses.allocate(net, att, `${net.x.ifPrefix ?? 'eth'}${i}`);
          sandbox.endpoints.push(ep);
          plans.push(this.plan(ep, net, gw?.Id === net.Id));
        }
        if (gw) sandbox.gatewayNetworkId = gw.Id;
        this.d.state.persist(c); // before the devices exist: a crash from here on is cleaned up at restart
        await createSandbox(sandbox.key, plans, this.hostIp);
        await this.publishOverlay(rec, c, sandbox.endpoints);
        if (gw) await this.d.ports.publish(rec, c, gw);
      } catch (err) {
        await this.teardownLocked(rec.Id).catch((e: unknown) =>
          this.d.log.warn(`rolling back a failed network set-up: ${(e as Error).message}`, { id: rec.Id }),
        );
        throw setupError(err, rec, sandbox);
      }
      this.d.state.persist(c);
      for (const ep of sandbox.endpoints) this.d.state.event(this.d.state.network(ep.networkId)!, 'connect', rec.Id);
      const info: SandboxInfo = { netnsPath: sandbox.key, addresses: sandbox.endpoints.flatMap((e) => (e.ip6 ? [e.ip, e.ip6] : [e.ip])) };
      const dns = this.d.dns.resolvConf(rec, sandbox);
      if (dns) info.dns = dns;
      return info;
    });
  }

  /** Releases the container's sandbox: ports, firewall rules, addresses, veths, namespace. */
  async teardownSandbox(id: string): Promise<void> {
    await this.lock.run(id, () => this.teardownLocked(id));
  }

  /** teardownSandbox for a caller that holds the container's lock. */
  async teardownLocked(id: string): Promise<void> {
    const c = this.d.state.container(id);
    const sb = c?.sandbox;
    const listeners = await this.d.ports.close(id);
    if (!c || !sb) {
      const path = netnsPath(this.d.execRoot, id);
      if (existsSync(path)) await removeNetns(path);
      return;
    }
    this.d.ports.release(id, listeners ? [] : sb.ports);
    for (const ep of sb.endpoints) {
      this.d.state.addresses.release(ep);
      const n = this.d.state.network(ep.networkId);
      if (n) this.d.state.event(n, 'disconnect', id);
    }
    delete c.sandbox;
    this.d.state.persist(c);
    for (const ep of sb.endpoints) if (this.isOverlay(this.d.state.network(ep.networkId))) await this.d.overlay!.released(ep, id);
    if (sb.ports.length) await this.d.firewall.syncOrWarn();
    if (existsSync(sb.key)) await removeNetns(sb.key);
    // The host ends go in the background: the kernel's own clean-up of the namespace is deferred
    // and may lag, an explicit delete is prompt but costs an RCU wait nobody needs to sit through.
    this.deleteLater(sb.endpoints.map((e) => e.hostIf));
  }

  /** A hot connect (under the container's lock): a new interface in the running sandbox; undone if it fails. */
  async addEndpoint(rec: NetContainer, c: ContainerNet, net: NetworkRecord, attachment: Attachment): Promise<void> {
    const sb = c.sandbox!;
    const used = new Set(sb.endpoints.map((e) => e.ifname));
    const prefix = net.x.ifPrefix ?? 'eth';
    let i = 0;
    while (used.has(`${prefix}${i}`)) i++;
    const att = this.isOverlay(net) ? await this.d.overlay!.prepare(net, attachment, rec.Id) : attachment;
    const ep = this.d.state.addresses.allocate(net, att, `${prefix}${i}`);
    const becomesGateway = !sb.gatewayNetworkId && !net.Internal;
    try {
      sb.endpoints.push(ep);
      c.attachments.push(attachment);
      if (becomesGateway) sb.gatewayNetworkId = net.Id;
      this.d.state.persist(c);
      await addInterfaces(sb.key, [this.plan(ep, net, becomesGateway)], this.hostIp);
      await this.publishOverlay(rec, c, [ep]);
      await this.updateHosts(rec, { add: [ep.ip, ...(ep.ip6 ? [ep.ip6] : [])] });
      this.d.state.event(net, 'connect', rec.Id);
    } catch (err) {
      sb.endpoints = sb.endpoints.filter((e) => e !== ep);
      c.attachments = c.attachments.filter((a) => a !== attachment);
      if (becomesGateway) delete sb.gatewayNetworkId;
      this.d.state.addresses.release(ep);
      this.d.state.persist(c);
      if (this.isOverlay(net)) await this.d.overlay!.released(ep, rec.Id);
      await deleteLinks([ep.hostIf], this.delIp);
      throw setupError(err, rec, sb);
    }
  }

  /**
   * A hot disconnect (under the container's lock; the attachment is already gone from `c`): the
   * interface goes; when it carried the default route, the route and the published ports move to
   * the next best network, if any.
   */
  async removeEndpoint(rec: NetContainer, c: ContainerNet, net: NetworkRecord): Promise<void> {
    const sb = c.sandbox;
    const ep = sb?.endpoints.find((e) => e.networkId === net.Id);
    if (!sb || !ep) return;
    sb.endpoints = sb.endpoints.filter((e) => e !== ep);
    this.d.state.addresses.release(ep);
    await deleteLinks([ep.hostIf], this.delIp);
    if (this.isOverlay(net)) await this.d.overlay!.released(ep, rec.Id);
    await this.updateHosts(rec, { remove: [ep.ip, ...(ep.ip6 ? [ep.ip6] : [])] });
    this.d.state.event(net, 'disconnect', rec.Id);
    if (sb.gatewayNetworkId !== net.Id) return;
    const priority = (netId: string) => c.attachments.find((a) => a.networkId === netId)?.config.GwPriority ?? 0;
    const next = chooseGateway(
      sb.endpoints.map((e) => ({ net: this.d.state.network(e.networkId)!, priority: priority(e.networkId) })).filter((x) => x.net),
    );
    const nextEp = next ? sb.endpoints.find((e) => e.networkId === next.Id) : undefined;
    if (next) sb.gatewayNetworkId = next.Id;
    else delete sb.gatewayNetworkId;
    await setDefaultRoute(
      sb.key,
      nextEp ? { gateway: nextEp.gateway, ...(nextEp.gateway6 ? { gateway6: nextEp.gateway6 } : {}), ifname: nextEp.ifname } : undefined,
    );
    await this.d.ports.close(rec.Id);
    this.d.ports.release(rec.Id);
    const hadPorts = sb.ports.length > 0;
    sb.ports = [];
    if (next)
      await this.d.ports
        .publish(rec, c, next)
        .catch((err) => this.d.log.warn(`republishing ports: ${(err as Error).message}`, { id: rec.Id }));
    else if (hadPorts) await this.d.firewall.syncOrWarn();
  }

  /** Shutdown: the background deletions finish, the `ip` processes end. */
  async close(): Promise<void> {
    await Promise.all([...this.deletions]);
    this.attachIp.close();
    this.deleteIp.close();
  }

  /** A running container's /etc/hosts follows hot connects and disconnects (as dockerd's). */
  private async updateHosts(rec: NetContainer, change: { add?: string[]; remove?: string[] }): Promise<void> {
    if (!rec.HostsPath) return;
    const line = (ip: string) => ownHostsLine(ip, rec.Config.Hostname ?? rec.Id.slice(0, 12), rec.Config.Domainname ?? '');
    await updateHostsEntries(rec.HostsPath, { add: (change.add ?? []).map(line), removeIps: change.remove ?? [] }).catch((err) =>
      this.d.log.warn(`updating /etc/hosts: ${(err as Error).message}`, { id: rec.Id }),
    );
  }

  private isOverlay(net: NetworkRecord | undefined): boolean {
    return this.d.overlay?.isOverlay(net) === true;
  }

  /** Overlay endpoints are announced to the cluster once their interfaces exist. */
  private async publishOverlay(rec: NetContainer, c: ContainerNet, eps: ActiveEndpoint[]): Promise<void> {
    for (const ep of eps) {
      if (!this.isOverlay(this.d.state.network(ep.networkId))) continue;
      const aliases = c.attachments.find((a) => a.networkId === ep.networkId)?.config.Aliases ?? [];
      await this.d.overlay!.published(ep, rec.Id, rec.Name.slice(1), aliases);
    }
  }

  private deleteLater(links: string[]): void {
    if (!links.length) return;
    const p = deleteLinks(links, this.delIp).catch((err: unknown) =>
      this.d.log.debug(`deleting host veth ends ${links.join(' ')}: ${(err as Error).message}`),
    );
    this.deletions.add(p);
    void p.finally(() => this.deletions.delete(p));
  }

  private plan(ep: ActiveEndpoint, net: NetworkRecord, isGateway: boolean): VethPlan {
    return {
      ifname: ep.ifname,
      hostIf: ep.hostIf,
      mac: ep.mac,
      mtu: net.x.mtu ?? 1500,
      address: `${ep.ip}/${ep.prefixLen}`,
      ...(isGateway ? { gateway: ep.gateway } : {}),
      bridge: ep.bridge,
      hairpin: !this.d.config()['userland-proxy'],
      ...(ep.ip6 ? { address6: `${ep.ip6}/${ep.prefixLen6}`, ...(isGateway && ep.gateway6 ? { gateway6: ep.gateway6 } : {}) } : {}),
    };
  }
}
