// Container sandboxes: the network namespace of a run (loopback, one veth per bridge network with
// its addresses, the gateway network's default route, published ports), torn down after the run;
// endpoints added and removed while a container runs (connect/disconnect: hot-endpoints.ts);
// overlay endpoints announced to the cluster (overlay-endpoints.ts). Everything about one
// container happens under its lock.
import { existsSync } from 'node:fs';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import { attachmentsOrNone } from '../attachments.ts';
import type { NetContainer, SandboxInfo } from '../container-contract.ts';
import type { NetworkDns } from '../dns/dns-glue.ts';
import type { FirewallSync } from '../firewall/firewall-sync.ts';
import { IpServer } from '../host/ip-server.ts';
import { createSandbox, deleteLinks, type VethPlan } from '../host/netlink.ts';
import { newId } from '../naming.ts';
import { netnsPath, removeNetns } from '../host/netns.ts';
import type { OverlayNetworks } from '../overlay/driver.ts';
import type { PortPublisher } from '../ports/port-publisher.ts';
import type { Attachment, ContainerNet, NetworkRecord, Sandbox } from '../records.ts';
import type { NetworkState } from '../state.ts';
import { chooseGateway, setupError, vethPlan } from './endpoint-plan.ts';
import { HotEndpoints } from './hot-endpoints.ts';
import { OverlayEndpoints } from './overlay-endpoints.ts';

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

export class SandboxService {
  private readonly lock = new KeyedMutex();
  /** Long-lived `ip` processes: one for attaching veths, one for deleting them (slow: an RCU wait each). */
  private readonly attachIp = new IpServer();
  private readonly deleteIp = new IpServer();
  private readonly deletions = new Set<Promise<void>>();
  private readonly hostIp = (lines: string[]) => this.attachIp.run(lines);
  private readonly delIp = (lines: string[]) => this.deleteIp.run(lines);
  private readonly overlay: OverlayEndpoints;
  /** Hot connect and disconnect. */
  private readonly hot: HotEndpoints;

  constructor(private readonly d: SandboxDeps) {
    this.overlay = new OverlayEndpoints(d.state, d.overlay);
    const { log, state, ports, firewall } = d;
    const hairpin = () => !d.config()['userland-proxy'];
    this.hot = new HotEndpoints({
      log,
      state,
      ports,
      firewall,
      overlay: this.overlay,
      attachIp: this.hostIp,
      deleteIp: this.delIp,
      hairpin,
    });
  }

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
        .filter((x) => x.net.Driver === 'bridge' || this.overlay.is(x.net));
      const gw = chooseGateway(bridged.map((x) => ({ net: x.net, priority: x.a.config.GwPriority ?? 0 })));
      const sandbox: Sandbox = { key: netnsPath(this.d.execRoot, rec.Id), sandboxId: newId(), endpoints: [], ports: [] };
      try {
        const plans: VethPlan[] = [];
        c.sandbox = sandbox; // from the first endpoint on: a failure releases what was taken
        for (const [i, { a, net }] of bridged.entries()) {
          // Overlay: devices up and a cluster-unique address claimed first.
          const att = this.overlay.is(net) ? await this.overlay.prepare(net, a, rec.Id) : a;
          const ep = this.d.state.addresses.allocate(net, att, `${net.x.ifPrefix ?? 'eth'}${i}`);
          sandbox.endpoints.push(ep);
          plans.push(vethPlan(ep, net, gw?.Id === net.Id, !this.d.config()['userland-proxy']));
        }
        if (gw) sandbox.gatewayNetworkId = gw.Id;
        this.d.state.persist(c); // before the devices exist: a crash from here on is cleaned up at restart
        await createSandbox(sandbox.key, plans, this.hostIp);
        await this.overlay.publish(rec, c, sandbox.endpoints);
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
    for (const ep of sb.endpoints) if (this.overlay.is(this.d.state.network(ep.networkId))) await this.overlay.released(ep, id);
    if (sb.ports.length) await this.d.firewall.syncOrWarn();
    if (existsSync(sb.key)) await removeNetns(sb.key);
    // The host ends go in the background: the kernel's own clean-up of the namespace is deferred
    // and may lag, an explicit delete is prompt but costs an RCU wait nobody needs to sit through.
    this.deleteLater(sb.endpoints.map((e) => e.hostIf));
  }

  /** A hot connect (under the container's lock): a new interface in the running sandbox; undone if it fails. */
  addEndpoint(rec: NetContainer, c: ContainerNet, net: NetworkRecord, attachment: Attachment): Promise<void> {
    return this.hot.addEndpoint(rec, c, net, attachment);
  }

  /** A hot disconnect (under the container's lock; the attachment is already gone from `c`). */
  removeEndpoint(rec: NetContainer, c: ContainerNet, net: NetworkRecord): Promise<void> {
    return this.hot.removeEndpoint(rec, c, net);
  }

  /** Shutdown: the background deletions finish, the `ip` processes end. */
  async close(): Promise<void> {
    await Promise.all([...this.deletions]);
    this.attachIp.close();
    this.deleteIp.close();
  }

  private deleteLater(links: string[]): void {
    if (!links.length) return;
    const p = deleteLinks(links, this.delIp).catch((err: unknown) =>
      this.d.log.debug(`deleting host veth ends ${links.join(' ')}: ${(err as Error).message}`),
    );
    this.deletions.add(p);
    void p.finally(() => this.deletions.delete(p));
  }
}
