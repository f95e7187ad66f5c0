// Networking's start-up and shutdown: networks from the store, the predefined networks and the
// default bridge, IP forwarding, user bridges brought up again, stray bridges removed, surviving
// sandboxes kept (addresses, ports, proxies), firewall written, DNS servers started; after the
// containers are restored, sandboxes of containers that are gone or stopped released; at shutdown,
// listeners and DNS stop and, with nothing attached any more, bridges and chains go.
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { Logger } from '../util/log.ts';
import { bringUpUserBridge, ensurePredefined, removeStrayBridges } from './host/bridges.ts';
import { setupDefaultBridge } from './default-bridge.ts';
import { servesDns, type NetworkDns } from './dns/dns-glue.ts';
import type { FirewallSync } from './firewall/firewall-sync.ts';
import { validatePools } from './ipam/ipam.ts';
import { linkAlias } from './naming.ts';
import { deleteLinks, linksWithAlias } from './host/netlink.ts';
import type { PortPublisher } from './ports/port-publisher.ts';
import type { SandboxService } from './sandbox/sandboxes.ts';
import type { NetworkState } from './state.ts';

export interface NetworkLifecycleDeps {
  config: () => DaemonConfig;
  log: Logger;
  state: NetworkState;
  firewall: FirewallSync;
  ports: PortPublisher;
  dns: NetworkDns;
  sandboxes: SandboxService;
  /** Cluster mode's overlay networks: their devices and the routing mesh go with the rest. */
  overlay?: { close(): Promise<void> };
  tag: string;
  /** Seed of the daemon's ULA /48 (its ID). */
  ulaSeed: string;
  env?: NodeJS.ProcessEnv;
}

export class NetworkLifecycle {
  constructor(private readonly d: NetworkLifecycleDeps) {
    validatePools(d.config()['default-address-pools']);
  }

  /** Networks from the store, the default bridge, kernel settings, firewall, and surviving sandboxes. */
  async init(): Promise<void> {
    const { state, log } = this.d;
    const cfg = this.d.config();
    state.load();
    ensurePredefined(state, 'host', 'host');
    ensurePredefined(state, 'none', 'null');
    if (cfg['ip-forward']) this.d.firewall.enableForwarding();
    if (cfg.ipv6 && !cfg.iptables && cfg.ip6tables)
      log.warn('--ip6tables has no effect with --iptables=false: no IPv6 firewall rules are added');
    await setupDefaultBridge({
      config: this.d.config,
      log,
      state,
      tag: this.d.tag,
      ulaSeed: this.d.ulaSeed,
      ...(this.d.env ? { env: this.d.env } : {}),
    });
    for (const n of state.networks()) {
      if (n.Driver !== 'bridge' || n.x.defaultBridge || n.ConfigOnly) continue;
      await bringUpUserBridge(n, this.d.tag, cfg, log).catch((err) => log.error(`network ${n.Name}: ${(err as Error).message}`));
    }
    for (const n of state.networks()) state.addresses.add(n);
    await removeStrayBridges(state, this.d.tag);
    // Sandboxes of containers that survived the restart keep their addresses and ports.
    for (const c of state.containers()) {
      if (!c.sandbox) continue;
      for (const ep of c.sandbox.endpoints) state.addresses.reserve(ep);
      for (const p of c.sandbox.ports) this.d.ports.hold(c.id, p);
    }
    for (const c of state.containers())
      if (c.sandbox?.ports.length)
        await this.d.ports.restore(c).catch((err) => log.warn(`restoring published ports: ${(err as Error).message}`, { id: c.id }));
    if (state.hasIPv6Networks()) {
      if (cfg['ip-forward']) this.d.firewall.enableForwarding6();
    } else {
      // A crash after the last IPv6 network went can leave its chains: nothing needs them now.
      await this.d.firewall.dropStaleIPv6();
    }
    await this.d.firewall.sync();
    for (const n of state.networks()) if (servesDns(n)) await this.d.dns.start(n);
  }

  /**
   * After the containers service restored its records: sandboxes of containers that are gone or
   * not running are released (a crash between setting up and recording a start leaves them).
   */
  async reconcile(isRunning: (id: string) => boolean | undefined): Promise<void> {
    const { state, sandboxes } = this.d;
    for (const c of state.containers()) {
      const running = isRunning(c.id);
      if (running === undefined) {
        await sandboxes.withContainer(c.id, () => sandboxes.teardownLocked(c.id));
        state.forgetContainer(c.id);
      } else if (!running && c.sandbox) {
        await sandboxes.withContainer(c.id, () => sandboxes.teardownLocked(c.id));
      }
    }
  }

  /**
   * Proxies and DNS servers stop with the daemon. When no container is attached any more (without
   * live-restore every container has been stopped by now) the bridges, overlay devices and every
   * other link the daemon created (they carry its alias) and its firewall chains go too — the next
   * start creates them again; otherwise they stay for the containers that keep running.
   */
  async shutdown(liveRestore: boolean): Promise<void> {
    await this.d.ports.shutdown(liveRestore);
    await this.d.dns.stopAll();
    await this.d.sandboxes.close();
    // Anything still attached (live-restore, or a container that would not stop) keeps it all.
    if (this.d.state.containers().some((c) => c.sandbox)) return;
    await this.d.overlay?.close().catch((err: Error) => this.d.log.warn(`removing overlay devices: ${err.message}`));
    const owned = this.d.state
      .networks()
      .filter((n) => n.x.ownsBridge && n.x.bridge)
      .map((n) => n.x.bridge!);
    await deleteLinks([...new Set([...owned, ...linksWithAlias(linkAlias(this.d.tag))])]);
    await this.d.firewall.teardown();
  }
}
