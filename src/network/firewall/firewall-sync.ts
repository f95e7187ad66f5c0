// The firewall as the network services see it: the daemon's IPv4 chains (--iptables) and IPv6 chains
// (--ip6tables, present while some network has IPv6) rewritten from the current state, and IP
// forwarding turned on (with a DROP FORWARD policy when it was off) for the networks to route.
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { runCommand } from '../../util/helper-shell.ts';
import type { Logger } from '../../util/log.ts';
import { Firewall, removeChains, type FwMesh, type FwState } from './firewall.ts';
import { chainPrefix } from '../naming.ts';
import { readSysctl, writeSysctl } from '../host/netlink.ts';
import type { NetworkState } from '../state.ts';

export interface FirewallSyncDeps {
  config: () => DaemonConfig;
  log: Logger;
  state: NetworkState;
  /** The daemon's tag (naming.ts daemonTag): its chains' prefix. */
  tag: string;
}

/** The rules the current networks and published ports need. */
export function firewallState(state: NetworkState): FwState {
  const networks = state
    .networks()
    .filter((n) => (n.Driver === 'bridge' || n.Driver === 'overlay') && n.x.bridge && n.x.subnet && !n.ConfigOnly)
    .map((n) => ({
      bridge: n.x.bridge!,
      subnet: n.x.subnet!,
      ...(n.x.subnet6 ? { subnet6: n.x.subnet6 } : {}),
      icc: n.x.icc !== false,
      masquerade: n.x.masquerade !== false,
      internal: n.Internal,
    }));
  const ports = state.containers().flatMap((c) =>
    (c.sandbox?.ports ?? []).map((p) => ({
      bridge: p.bridge,
      proto: p.proto,
      hostIp: p.hostIp,
      hostPort: p.hostPort,
      containerIp: p.containerIp,
      containerPort: p.containerPort,
    })),
  );
  return { networks, ports };
}

export class FirewallSync {
  private readonly firewall?: Firewall;
  private readonly firewall6?: Firewall;
  /** The routing mesh of cluster mode, as the overlay driver last set it. */
  private mesh: FwMesh | undefined;
  /** Torn down at shutdown: a late sync (the overlay driver closing) must not write the chains again. */
  private closed = false;

  constructor(private readonly d: FirewallSyncDeps) {
    const cfg = d.config();
    if (!cfg.iptables) return;
    const settings = () => ({ userlandProxy: d.config()['userland-proxy'], allowDirectRouting: d.config()['allow-direct-routing'] });
    const desired = (): FwState => ({ ...firewallState(d.state), ...(this.mesh ? { mesh: this.mesh } : {}) });
    this.firewall = new Firewall(chainPrefix(d.tag), settings, desired, d.log);
    if (cfg.ip6tables) this.firewall6 = new Firewall(chainPrefix(d.tag), settings, desired, d.log, 6);
  }

  /** Both families' rules from the current state; IPv6 only while some network has IPv6. */
  async sync(): Promise<void> {
    if (this.closed) return;
    await this.firewall?.sync();
    if (!this.firewall6) return;
    if (this.d.state.hasIPv6Networks()) await this.firewall6.sync();
    else if (this.firewall6.isInstalled) await this.firewall6.teardown();
  }

  /**
   * The routing mesh's rules (undefined: none), written with the next sync. Without --iptables the
   * daemon writes no rules at all: the mesh then has none either.
   */
  setMesh(mesh: FwMesh | undefined): void {
    this.mesh = mesh;
  }

  /** Whether the daemon writes firewall rules (--iptables). */
  get enabled(): boolean {
    return this.firewall !== undefined;
  }

  /** A sync whose failure is logged, not thrown (the change it follows has been made already). */
  async syncOrWarn(): Promise<void> {
    await this.sync().catch((err: unknown) => this.d.log.warn(`firewall sync: ${(err as Error).message}`));
  }

  /** Start-up without IPv6 networks: chains a crash left after the last IPv6 network went. */
  async dropStaleIPv6(): Promise<void> {
    if (!this.firewall6) return;
    await removeChains(this.firewall6.chains, false, 6).catch((err: unknown) =>
      this.d.log.debug(`removing stale IPv6 chains: ${(err as Error).message}`),
    );
  }

  /** Shutdown with nothing attached: our jumps and chains go (the next start writes them again). */
  async teardown(): Promise<void> {
    this.closed = true;
    await this.firewall?.teardown().catch(this.firewall.warnOnFailure('teardown'));
    if (this.d.state.hasIPv6Networks()) await this.firewall6?.teardown().catch(this.firewall6.warnOnFailure('teardown'));
  }

  enableForwarding(): void {
    const before = readSysctl('net/ipv4/ip_forward');
    if (before === '1') return;
    if (!writeSysctl('net/ipv4/ip_forward', '1')) {
      this.d.log.warn('could not enable IP forwarding (net.ipv4.ip_forward): containers will not reach other networks');
      return;
    }
    // Forwarding was off: turning it on must not open the host as a router to everything else.
    const cfg = this.d.config();
    if (cfg.iptables && !cfg['ip-forward-no-drop']) {
      void runCommand('iptables', ['-w', '-P', 'FORWARD', 'DROP']).catch((err) =>
        this.d.log.warn(`setting the FORWARD policy to DROP: ${(err as Error).message}`),
      );
    }
  }

  /** IPv6 forwarding, for the first IPv6 network (as IPv4's, with a DROP policy if it was off). */
  enableForwarding6(): void {
    if (readSysctl('net/ipv6/conf/all/forwarding') === '1') return;
    if (!writeSysctl('net/ipv6/conf/all/forwarding', '1')) {
      this.d.log.warn(
        'could not enable IPv6 forwarding (net.ipv6.conf.all.forwarding): containers will not reach other networks over IPv6',
      );
      return;
    }
    const cfg = this.d.config();
    if (this.firewall6 && !cfg['ip-forward-no-drop']) {
      void runCommand('ip6tables', ['-w', '-P', 'FORWARD', 'DROP']).catch((err) =>
        this.d.log.warn(`setting the IPv6 FORWARD policy to DROP: ${(err as Error).message}`),
      );
    }
  }
}
