// The network backend: networks (the predefined bridge/host/none and user-defined bridges), their
// addresses, the containers' sandboxes (namespace + veths), published ports, firewall rules and
// embedded DNS. The containers service calls it around each run (setupSandbox / teardownSandbox);
// the /networks routes call it for the API.
import { existsSync, readFileSync } from 'node:fs';
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { ContainerRecord } from '../daemon/containers/record.ts';
import { netnsPath, removeNetns } from '../daemon/containers/netns.ts';
import { ownHostsLine, parseResolvConf, updateHostsEntries, type DnsSettings } from '../daemon/containers/etc-files.ts';
import type { NetworkView } from '../daemon/containers/views.ts';
import { conflict, EngineError, forbidden, internal, invalidParameter, notFound } from '../errors.ts';
import type { EngineDatabase } from '../store/database.ts';
import type { ContainerConfig, EndpointSettings, HostConfig, NetworkingConfig } from '../types/container-api.ts';
import type { Logger } from '../util/log.ts';
import { KeyedMutex } from '../util/mutex.ts';
import { runCommand } from '../util/helper-shell.ts';
import type { EventPublisher } from '../events/bus.ts';
import { EmbeddedDns } from './dns-server.ts';
import { IpServer } from './ip-server.ts';
import { compileListFilters, compilePruneFilters } from './filters.ts';
import { chainNames, Firewall, readForeignDnatPorts, removeChains, type FwState } from './firewall.ts';
import { withHostLock } from './host-lock.ts';
import { contains, formatCidr, formatIPv4, isIPv4, macFromIPv4, overlaps, parseCidr, parseCidrWithHost, parseIPv4, within, type Cidr } from './ip4.ts';
import { addressFromMac, contains6, formatCidr6, formatIPv6, isIPv6, isV6Text, overlaps6, parseCidr6, parseCidr6WithHost, parseIPv6, ulaBase, within6, type Cidr6 } from './ip6.ts';
import { ipv4First, validateIpam } from './ipam-config.ts';
import { AddressSpace, AddressSpace6, DEFAULT_POOLS, hostRoutes, hostRoutes6, pickSubnet, pickSubnet6, validatePools, type AddressPool } from './ipam.ts';
import { createSandbox, addInterfaces, deleteLinks, ensureBridge, isBridge, linkAliasOf, linkExists, linkIPv4, linksWithAlias, readSysctl, setDefaultRoute, writeSysctl, type VethPlan } from './netlink.ts';
import { chainPrefix, daemonTag, defaultBridgeName, linkAlias, newId, userBridgeName, validInterfaceName, vethName } from './naming.ts';
import { boolOpt, engineKey, getOpt, intOpt, OPT_BRIDGE_NAME, OPT_DEFAULT_BRIDGE, OPT_ENABLE_IPV4, OPT_ENABLE_IPV6, OPT_HOST_BINDING, OPT_ICC, OPT_IFACE_PREFIX, OPT_MASQ, OPT_MTU } from './options.ts';
import { linkEnv } from './link-env.ts';
import { PortAllocator, requestedPorts } from './ports.ts';
import { killStaleProxy, reservePort, startProxy, type ProxyHandle } from './proxy.ts';
import { NetworkStore, type ActiveEndpoint, type Attachment, type ContainerNet, type EndpointConfig, type IpamConfigEntry, type NetworkRecord, type Sandbox } from './records.ts';
import { buildContainerView, dnsNamesFor, networkInspect } from './views.ts';

export interface NetworkServiceDeps {
  db: EngineDatabase;
  config: () => DaemonConfig;
  log: Logger;
  execRoot: string;
  env?: NodeJS.ProcessEnv;
  /** network create/destroy/connect/disconnect events. */
  events?: EventPublisher;
  /** The daemon's stable ID: its IPv6 ULA pool derives from it. */
  daemonId?: string;
}

/** What the network layer needs to know about containers (their records live in the containers service). */
export interface ContainerLookup {
  /** By ID, unique prefix or name; throws the 404. */
  find(ref: string): ContainerRecord;
}

/** What the task launcher gets back for a container's run. */
export interface SandboxInfo {
  netnsPath: string;
  /** The container's addresses (for its /etc/hosts). */
  addresses: string[];
  /** resolv.conf settings when the embedded DNS serves the container. */
  dns?: DnsSettings;
}

export interface NetworkCreateBody {
  Name?: string;
  Driver?: string;
  Scope?: string;
  Internal?: boolean;
  Attachable?: boolean;
  Ingress?: boolean;
  ConfigOnly?: boolean;
  ConfigFrom?: { Network?: string } | null;
  IPAM?: { Driver?: string; Config?: IpamConfigEntry[] | null; Options?: Record<string, string> | null } | null;
  EnableIPv4?: boolean | null;
  EnableIPv6?: boolean | null;
  Options?: Record<string, string> | null;
  Labels?: Record<string, string> | null;
  CheckDuplicate?: boolean;
}

const PREDEFINED = ['bridge', 'host', 'none'];
const ZERO_TIME = '0001-01-01T00:00:00Z';
const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

function nowIso(): string {
  return new Date().toISOString().replace(/Z$/, '000000Z');
}

function emptyIpam(): NetworkRecord['IPAM'] {
  return { Driver: 'default', Options: null, Config: [] };
}

export class NetworkService {
  private readonly store: NetworkStore;
  private readonly nets = new Map<string, NetworkRecord>();
  private readonly spaces = new Map<string, AddressSpace>();
  private readonly spaces6 = new Map<string, AddressSpace6>();
  private readonly cons = new Map<string, ContainerNet>();
  private readonly proxies = new Map<string, ProxyHandle[]>();
  private readonly dns = new Map<string, EmbeddedDns>();
  private readonly lock = new KeyedMutex();
  private readonly portAlloc = new PortAllocator();
  private readonly firewall?: Firewall;
  /** ip6tables: programmed while some network has IPv6 (--ip6tables, with --iptables). */
  private readonly firewall6?: Firewall;
  private readonly tag: string;
  private containers?: ContainerLookup;
  /** Long-lived `ip` processes: one for attaching veths, one for deleting them (slow: an RCU wait each). */
  private readonly attachIp = new IpServer();
  private readonly deleteIp = new IpServer();
  private readonly deletions = new Set<Promise<void>>();

  constructor(private readonly d: NetworkServiceDeps) {
    this.store = new NetworkStore(d.db);
    this.tag = daemonTag(d.execRoot);
    const cfg = d.config();
    validatePools(cfg['default-address-pools']);
    if (cfg.iptables) {
      const settings = () => ({ userlandProxy: this.d.config()['userland-proxy'], allowDirectRouting: this.d.config()['allow-direct-routing'] });
      this.firewall = new Firewall(chainPrefix(this.tag), settings, () => this.firewallState(), d.log);
      if (cfg.ip6tables) this.firewall6 = new Firewall(chainPrefix(this.tag), settings, () => this.firewallState(), d.log, 6);
    }
  }

  /** The containers service, for names and records (set once both exist). */
  attachContainers(lookup: ContainerLookup): void {
    this.containers = lookup;
  }

  // ---- start-up and shutdown -------------------------------------------------------------------

  /** Networks from the store, the default bridge, kernel settings, firewall, and surviving sandboxes. */
  async init(): Promise<void> {
    const cfg = this.d.config();
    for (const n of this.store.networks.list()) this.nets.set(n.Id, n);
    for (const c of this.store.containers.list()) this.cons.set(c.id, c);
    this.ensurePredefined('host', 'host');
    this.ensurePredefined('none', 'null');
    if (cfg['ip-forward']) this.enableForwarding();
    if (cfg.ipv6 && !cfg.iptables && cfg.ip6tables) this.d.log.warn('--ip6tables has no effect with --iptables=false: no IPv6 firewall rules are added');
    await this.setupDefaultBridge();
    for (const n of this.nets.values()) {
      if (n.Driver !== 'bridge' || n.x.defaultBridge || n.ConfigOnly) continue;
      await this.bringUpUserBridge(n).catch((err) => this.d.log.error(`network ${n.Name}: ${(err as Error).message}`));
    }
    for (const n of this.nets.values()) this.makeSpace(n);
    await this.removeStrayBridges();
    // Sandboxes of containers that survived the restart keep their addresses and ports.
    for (const c of this.cons.values()) {
      if (!c.sandbox) continue;
      for (const ep of c.sandbox.endpoints) {
        this.spaces.get(ep.networkId)?.reserve(parseIPv4(ep.ip));
        if (ep.ip6) this.spaces6.get(ep.networkId)?.reserve(parseIPv6(ep.ip6));
      }
      for (const p of c.sandbox.ports) this.portAlloc.hold(c.id, p);
    }
    for (const c of this.cons.values()) if (c.sandbox?.ports.length) await this.restartProxies(c).catch((err) => this.d.log.warn(`restoring published ports: ${(err as Error).message}`, { id: c.id }));
    if (this.hasIPv6Networks()) {
      if (cfg['ip-forward']) this.enableForwarding6();
    } else if (this.firewall6) {
      // A crash after the last IPv6 network went can leave its chains: nothing needs them now.
      await removeChains(this.firewall6.chains, false, 6).catch(() => undefined);
    }
    await this.syncFirewall();
    for (const n of this.nets.values()) if (this.hasDns(n)) await this.startDns(n);
  }

  /**
   * After the containers service restored its records: sandboxes of containers that are gone or
   * not running are released (a crash between setting up and recording a start leaves them).
   */
  async reconcile(isRunning: (id: string) => boolean | undefined): Promise<void> {
    for (const c of [...this.cons.values()]) {
      const running = isRunning(c.id);
      if (running === undefined) {
        await this.lock.run(c.id, () => this.teardownLocked(c.id));
        this.cons.delete(c.id);
        this.store.containers.delete(c.id);
      } else if (!running && c.sandbox) {
        await this.lock.run(c.id, () => this.teardownLocked(c.id));
      }
    }
  }

  /**
   * Proxies and DNS servers stop with the daemon. When no container is attached any more (without
   * live-restore every container has been stopped by now) the bridges the daemon created and its
   * firewall chains go too — the next start creates them again; otherwise they stay for the
   * containers that keep running.
   */
  async shutdown(liveRestore: boolean): Promise<void> {
    for (const [id, hs] of this.proxies) {
      this.proxies.delete(id);
      await Promise.all(hs.map((h) => (h.pid && liveRestore ? Promise.resolve() : h.close().catch(() => undefined))));
    }
    await Promise.all([...this.dns.values()].map((s) => s.stop().catch(() => undefined)));
    this.dns.clear();
    await Promise.all([...this.deletions]);
    this.attachIp.close();
    this.deleteIp.close();
    // Anything still attached (live-restore, or a container that would not stop) keeps it all.
    if ([...this.cons.values()].some((c) => c.sandbox)) return;
    await deleteLinks([...this.nets.values()].filter((n) => n.x.ownsBridge && n.x.bridge).map((n) => n.x.bridge!));
    await this.firewall?.teardown().catch(this.firewall.warnOnFailure('teardown'));
    if (this.hasIPv6Networks()) await this.firewall6?.teardown().catch(this.firewall6.warnOnFailure('teardown'));
  }

  private hasIPv6Networks(): boolean {
    return [...this.nets.values()].some((n) => n.x.subnet6);
  }

  /** Both families' rules from the current state; IPv6 only while some network has IPv6. */
  private async syncFirewall(): Promise<void> {
    await this.firewall?.sync();
    if (!this.firewall6) return;
    if (this.hasIPv6Networks()) await this.firewall6.sync();
    else if (this.firewall6.isInstalled) await this.firewall6.teardown();
  }

  private readonly fwWarn = (what: string) => (err: unknown) => this.d.log.warn(`firewall ${what}: ${(err as Error).message}`);

  private ensurePredefined(name: 'host' | 'none', driver: string): void {
    if ([...this.nets.values()].some((n) => n.Name === name && n.x.predefined)) return;
    const rec: NetworkRecord = {
      Name: name, Id: newId(), Created: ZERO_TIME, Scope: 'local', Driver: driver, EnableIPv4: false, EnableIPv6: false,
      IPAM: emptyIpam(), Internal: false, Attachable: false, Ingress: false, ConfigFrom: { Network: '' }, ConfigOnly: false,
      Options: {}, Labels: {}, x: { predefined: true },
    };
    this.saveNetwork(rec);
  }

  private enableForwarding(): void {
    const before = readSysctl('net/ipv4/ip_forward');
    if (before === '1') return;
    if (!writeSysctl('net/ipv4/ip_forward', '1')) {
      this.d.log.warn('could not enable IP forwarding (net.ipv4.ip_forward): containers will not reach other networks');
      return;
    }
    // Forwarding was off: turning it on must not open the host as a router to everything else.
    const cfg = this.d.config();
    if (cfg.iptables && !cfg['ip-forward-no-drop']) void runCommand('iptables', ['-w', '-P', 'FORWARD', 'DROP']).catch((err) => this.d.log.warn(`setting the FORWARD policy to DROP: ${(err as Error).message}`));
  }

  /** IPv6 forwarding, for the first IPv6 network (as IPv4's, with a DROP policy if it was off). */
  private enableForwarding6(): void {
    if (readSysctl('net/ipv6/conf/all/forwarding') === '1') return;
    if (!writeSysctl('net/ipv6/conf/all/forwarding', '1')) {
      this.d.log.warn('could not enable IPv6 forwarding (net.ipv6.conf.all.forwarding): containers will not reach other networks over IPv6');
      return;
    }
    const cfg = this.d.config();
    if (this.firewall6 && !cfg['ip-forward-no-drop']) void runCommand('ip6tables', ['-w', '-P', 'FORWARD', 'DROP']).catch((err) => this.d.log.warn(`setting the IPv6 FORWARD policy to DROP: ${(err as Error).message}`));
  }

  private defaultBridgeRecord(): NetworkRecord | undefined {
    return [...this.nets.values()].find((n) => n.x.defaultBridge);
  }

  /** The default bridge network: created, adopted (--bridge) or absent (-b none). */
  private async setupDefaultBridge(): Promise<void> {
    const cfg = this.d.config();
    const stored = this.defaultBridgeRecord();
    if (cfg.bridge === 'none') {
      if (stored) this.deleteNetworkRecord(stored);
      return;
    }
    let name = cfg.bridge || defaultBridgeName(this.d.env);
    if (!validInterfaceName(name)) throw invalidParameter(`invalid bridge name ${JSON.stringify(name)}`);
    const existingBridge = Boolean(cfg.bridge);
    if (existingBridge && !isBridge(name)) throw invalidParameter(`bridge device with non default name ${name} must be created manually`);
    let owns = !existingBridge;
    const mtu = cfg.mtu || 1500;
    let subnet!: Cidr;
    let gateway!: number;
    let v6: { subnet: Cidr6; gateway: bigint } | undefined;
    await withHostLock(async () => {
      if (!existingBridge && linkExists(name)) {
        const alias = linkAliasOf(name);
        if (alias.startsWith('engine:') && alias !== linkAlias(this.tag)) {
          // Another daemon's default bridge (daemons side by side): sharing it would mix two
          // address allocators on one subnet, so this one gets its own.
          const own = `engine-${this.tag || 'default'}`.slice(0, 15);
          this.d.log.warn(`bridge ${name} belongs to another daemon (${alias}); using ${own} instead (give each daemon its own --bridge)`);
          name = own;
        } else if (!alias) {
          owns = false; // made by someone else: used, never deleted
        }
      }
      const have = linkExists(name) ? await linkIPv4(name) : [];
      if (cfg.bip) {
        const b = parseCidrWithHost(cfg.bip);
        if (b.addr === b.cidr.base && b.cidr.bits < 31) throw invalidParameter(`invalid --bip ${cfg.bip}: give the bridge's address with its prefix length (for example 172.17.0.1/16)`);
        subnet = b.cidr;
        gateway = b.addr;
      } else if (have.length) {
        const b = parseCidrWithHost(have[0]!);
        subnet = b.cidr;
        gateway = b.addr;
      } else {
        const taken = this.takenSubnets(name, stored?.Id);
        const previous = stored?.x.subnet ? parseCidr(stored.x.subnet) : undefined;
        const chosen = previous && !taken.some((t) => overlaps(t, previous)) ? previous : pickSubnet(DEFAULT_POOLS, taken);
        if (!chosen) throw invalidParameter('could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the default bridge network');
        subnet = chosen;
        gateway = previous && previous.base === chosen.base && stored?.x.gateway ? parseIPv4(stored.x.gateway) : chosen.base + 1;
      }
      if (cfg.ipv6) v6 = this.defaultBridgeIPv6(name, stored);
      const address6 = v6 ? `${formatIPv6(v6.gateway)}/${v6.subnet.bits}` : owns ? null : undefined;
      await ensureBridge({ name, mtu, address: `${formatIPv4(gateway)}/${subnet.bits}`, address6, ...(owns ? { alias: linkAlias(this.tag) } : {}) });
    });
    if (!cfg.ipv6) for (const k of ['fixed-cidr-v6', 'bip6', 'default-gateway-v6'] as const) if (cfg[k]) this.d.log.warn(`--${k} has no effect without --ipv6`);
    let range: Cidr | undefined;
    if (cfg['fixed-cidr']) {
      range = parseCidr(cfg['fixed-cidr']);
      if (!within(range, subnet)) throw invalidParameter(`fixed-cidr ${cfg['fixed-cidr']} is not within the bridge subnet ${formatCidr(subnet)}`);
    }
    let routeVia: string | undefined;
    if (cfg['default-gateway']) {
      if (!isIPv4(cfg['default-gateway']) || !contains(subnet, parseIPv4(cfg['default-gateway']))) throw invalidParameter(`default-gateway ${cfg['default-gateway']} is not an address in the bridge subnet ${formatCidr(subnet)}`);
      routeVia = cfg['default-gateway'];
    }
    const gw = formatIPv4(gateway);
    const ipamEntry: IpamConfigEntry = { Subnet: formatCidr(subnet), ...(range ? { IPRange: formatCidr(range) } : {}), Gateway: gw, ...(routeVia ? { AuxiliaryAddresses: { DefaultGatewayIPv4: routeVia } } : {}) };
    const ipam6 = v6 ? this.defaultBridgeIPv6Config(v6.subnet, v6.gateway) : undefined;
    const rec: NetworkRecord = {
      Name: 'bridge', Id: stored?.Id ?? newId(), Created: stored?.Created ?? nowIso(), Scope: 'local', Driver: 'bridge', EnableIPv4: true, EnableIPv6: Boolean(v6),
      IPAM: { Driver: 'default', Options: null, Config: ipam6 ? [ipamEntry, ipam6.entry] : [ipamEntry] }, Internal: false, Attachable: false, Ingress: false, ConfigFrom: { Network: '' }, ConfigOnly: false,
      Options: {
        [engineKey(OPT_DEFAULT_BRIDGE)]: 'true',
        [engineKey(OPT_ICC)]: String(cfg.icc),
        [engineKey(OPT_MASQ)]: String(cfg['ip-masq']),
        [engineKey(OPT_HOST_BINDING)]: cfg.ip || '0.0.0.0',
        [engineKey(OPT_BRIDGE_NAME)]: name,
        [engineKey(OPT_MTU)]: String(mtu),
      },
      Labels: {},
      x: {
        predefined: true, defaultBridge: true, bridge: name, ownsBridge: owns, subnet: formatCidr(subnet), gateway: gw,
        ...(range ? { range: formatCidr(range) } : {}), ...(routeVia ? { routeVia, reserved: [routeVia] } : {}),
        userSubnet: false, mtu, icc: cfg.icc, masquerade: cfg['ip-masq'] && cfg.iptables, hostBindingIpv4: cfg.ip || '0.0.0.0', ifPrefix: 'eth',
        ...(ipam6?.facts ?? {}),
      },
    };
    if (stored && stored.Id !== rec.Id) this.deleteNetworkRecord(stored);
    this.saveNetwork(rec);
    this.bridgeSysctls(rec);
  }

  /**
   * The default bridge's IPv6 subnet and address (--ipv6): --bip6 gives both, else --fixed-cidr-v6
   * is the subnet, else the one it had, else a /64 from the pools (the daemon's ULA prefix).
   */
  private defaultBridgeIPv6(bridge: string, stored: NetworkRecord | undefined): { subnet: Cidr6; gateway: bigint } {
    const cfg = this.d.config();
    if (cfg.bip6) {
      const b = parseCidr6WithHost(cfg.bip6);
      if (b.addr === b.cidr.base) throw invalidParameter(`invalid --bip6 ${cfg.bip6}: give the bridge's address with its prefix length (for example fd00:1::1/64)`);
      return { subnet: b.cidr, gateway: b.addr };
    }
    if (cfg['fixed-cidr-v6']) {
      const c = parseCidr6(cfg['fixed-cidr-v6']);
      const keep = stored?.x.subnet6 === formatCidr6(c) && stored.x.gateway6 ? parseIPv6(stored.x.gateway6) : c.base + 1n;
      return { subnet: c, gateway: keep };
    }
    const taken = this.takenSubnets6(bridge, stored?.Id);
    const previous = stored?.x.subnet6 ? parseCidr6(stored.x.subnet6) : undefined;
    if (previous && !taken.some((t) => overlaps6(t, previous))) return { subnet: previous, gateway: stored?.x.gateway6 ? parseIPv6(stored.x.gateway6) : previous.base + 1n };
    const picked = pickSubnet6(this.pools6(), taken);
    if (!picked) throw invalidParameter('could not find an available, non-overlapping IPv6 address pool to assign to the default bridge network');
    return { subnet: picked, gateway: picked.base + 1n };
  }

  /** The default bridge's IPv6 IPAM entry and facts: --fixed-cidr-v6 as the range under --bip6, --default-gateway-v6. */
  private defaultBridgeIPv6Config(subnet: Cidr6, gateway: bigint): { entry: IpamConfigEntry; facts: Partial<NetworkRecord['x']> } {
    const cfg = this.d.config();
    let range: Cidr6 | undefined;
    if (cfg.bip6 && cfg['fixed-cidr-v6']) {
      range = parseCidr6(cfg['fixed-cidr-v6']);
      if (!within6(range, subnet)) throw invalidParameter(`fixed-cidr-v6 ${cfg['fixed-cidr-v6']} is not within the bridge's IPv6 subnet ${formatCidr6(subnet)}`);
    }
    let routeVia: string | undefined;
    if (cfg['default-gateway-v6']) {
      if (!isIPv6(cfg['default-gateway-v6']) || !contains6(subnet, parseIPv6(cfg['default-gateway-v6']))) throw invalidParameter(`default-gateway-v6 ${cfg['default-gateway-v6']} is not an address in the bridge's IPv6 subnet ${formatCidr6(subnet)}`);
      routeVia = formatIPv6(parseIPv6(cfg['default-gateway-v6']));
    }
    const gw = formatIPv6(gateway);
    return {
      entry: { Subnet: formatCidr6(subnet), ...(range ? { IPRange: formatCidr6(range) } : {}), Gateway: gw, ...(routeVia ? { AuxiliaryAddresses: { DefaultGatewayIPv6: routeVia } } : {}) },
      facts: { subnet6: formatCidr6(subnet), gateway6: gw, ...(range ? { range6: formatCidr6(range) } : {}), ...(routeVia ? { routeVia6: routeVia, reserved6: [routeVia] } : {}), userSubnet6: Boolean(cfg['fixed-cidr-v6'] || cfg.bip6) },
    };
  }

  /** IPv6 pools: those of default-address-pools, else /64s of the daemon's own ULA /48. */
  private pools6(): AddressPool[] {
    const mine = this.d.config()['default-address-pools'].filter((p) => isV6Text(p.base));
    return mine.length ? mine : [{ base: ulaBase(this.d.daemonId ?? this.tag), size: 64 }];
  }

  /** IPv6 subnets a new network must not overlap: the daemon's networks and the host's routes. */
  private takenSubnets6(ownBridge?: string, ownId?: string): Cidr6[] {
    const own = new Set([ownBridge, ...[...this.nets.values()].map((n) => n.x.bridge)].filter(Boolean));
    const fromRoutes = hostRoutes6().filter((r) => !own.has(r.dev)).map((r) => r.cidr);
    const fromNets = [...this.nets.values()].filter((n) => n.Id !== ownId && n.x.subnet6).map((n) => parseCidr6(n.x.subnet6!));
    return [...fromRoutes, ...fromNets];
  }

  private bridgeSysctls(n: NetworkRecord): void {
    if (!n.x.bridge) return;
    // Without the proxy, loopback traffic to published ports is DNATed to the bridge.
    if (!this.d.config()['userland-proxy']) writeSysctl(`net/ipv4/conf/${n.x.bridge}/route_localnet`, '1');
    // icc=false drops bridged traffic in FORWARD, which needs bridged frames to pass iptables.
    if (n.x.icc === false && !writeSysctl('net/bridge/bridge-nf-call-iptables', '1')) {
      this.d.log.warn(`network ${n.Name}: inter-container communication cannot be disabled: net.bridge.bridge-nf-call-iptables is not available (load the br_netfilter module)`);
    }
    if (n.x.icc === false && n.x.subnet6) writeSysctl('net/bridge/bridge-nf-call-ip6tables', '1');
  }

  /** Subnets a new network must not overlap: the daemon's networks and the host's other routes. */
  private takenSubnets(ownBridge?: string, ownId?: string): Cidr[] {
    const own = new Set([ownBridge, ...[...this.nets.values()].map((n) => n.x.bridge)].filter(Boolean));
    const fromRoutes = hostRoutes().filter((r) => !own.has(r.dev)).map((r) => r.cidr);
    const fromNets = [...this.nets.values()].filter((n) => n.Id !== ownId && n.x.subnet).map((n) => parseCidr(n.x.subnet!));
    return [...fromRoutes, ...fromNets];
  }

  private async bringUpUserBridge(n: NetworkRecord): Promise<void> {
    if (!n.x.bridge || !n.x.subnet || !n.x.gateway) return;
    if (!n.x.ownsBridge && !linkExists(n.x.bridge)) throw new Error(`bridge ${n.x.bridge} does not exist`);
    const address6 = n.x.subnet6 && n.x.gateway6 ? `${n.x.gateway6}/${parseCidr6(n.x.subnet6).bits}` : n.x.ownsBridge ? null : undefined;
    await ensureBridge({ name: n.x.bridge, mtu: n.x.mtu ?? 1500, address: `${n.x.gateway}/${parseCidr(n.x.subnet).bits}`, address6, ...(n.x.ownsBridge ? { alias: linkAlias(this.tag) } : {}) });
    this.bridgeSysctls(n);
  }

  /** Bridges carrying this daemon's alias that no network owns (a crash in the middle of a removal). */
  private async removeStrayBridges(): Promise<void> {
    const known = new Set([...this.nets.values()].map((n) => n.x.bridge));
    const stray = linksWithAlias(linkAlias(this.tag)).filter((l) => !known.has(l));
    if (stray.length) await deleteLinks(stray);
  }

  private makeSpace(n: NetworkRecord): void {
    if (n.Driver !== 'bridge' || !n.x.subnet || !n.x.gateway) return;
    const subnet = parseCidr(n.x.subnet);
    const range = n.x.range ? parseCidr(n.x.range) : subnet;
    const reserved = [n.x.gateway, ...(n.x.reserved ?? [])].filter(isIPv4).map(parseIPv4);
    this.spaces.set(n.Id, new AddressSpace(subnet, range, reserved));
    if (n.x.subnet6 && n.x.gateway6) {
      const subnet6 = parseCidr6(n.x.subnet6);
      const reserved6 = [n.x.gateway6, ...(n.x.reserved6 ?? [])].filter(isIPv6).map(parseIPv6);
      this.spaces6.set(n.Id, new AddressSpace6(subnet6, n.x.range6 ? parseCidr6(n.x.range6) : subnet6, reserved6));
    }
  }

  private saveNetwork(n: NetworkRecord): void {
    this.nets.set(n.Id, n);
    this.store.networks.put(n.Id, n);
  }

  private deleteNetworkRecord(n: NetworkRecord): void {
    this.nets.delete(n.Id);
    this.spaces.delete(n.Id);
    this.spaces6.delete(n.Id);
    this.store.networks.delete(n.Id);
  }

  private persist(c: ContainerNet): void {
    this.cons.set(c.id, c);
    this.store.containers.put(c.id, c);
  }

  private event(n: NetworkRecord, action: string, container?: string): void {
    this.d.events?.publish({ Type: 'network', Action: action, Actor: { ID: n.Id, Attributes: { name: n.Name, type: n.Driver, ...(container ? { container } : {}) } } });
  }

  // ---- lookups ---------------------------------------------------------------------------------

  /** Full ID, exact name, then unique ID prefix (dockerd's order). */
  findNetwork(ref: string): NetworkRecord {
    const all = [...this.nets.values()];
    const byId = this.nets.get(ref);
    if (byId) return byId;
    const byName = all.filter((n) => n.Name === ref);
    if (byName.length === 1) return byName[0]!;
    if (byName.length > 1) throw invalidParameter(`network ${ref} is ambiguous (${byName.length} matches found on name)`);
    const byPrefix = ref ? all.filter((n) => n.Id.startsWith(ref)) : [];
    if (byPrefix.length === 1) return byPrefix[0]!;
    if (byPrefix.length > 1) throw invalidParameter(`network ${ref} is ambiguous (${byPrefix.length} matches found based on ID prefix)`);
    throw notFound(`network ${ref} not found`);
  }

  private isUserDefined(n: NetworkRecord): boolean {
    return !n.x.predefined;
  }

  private hasDns(n: NetworkRecord): boolean {
    return n.Driver === 'bridge' && !n.x.predefined && !n.ConfigOnly && Boolean(n.x.gateway);
  }

  private endpointsOn(netId: string): Array<{ c: ContainerNet; ep: ActiveEndpoint }> {
    const out: Array<{ c: ContainerNet; ep: ActiveEndpoint }> = [];
    for (const c of this.cons.values()) for (const ep of c.sandbox?.endpoints ?? []) if (ep.networkId === netId) out.push({ c, ep });
    return out;
  }

  private record(id: string): ContainerRecord | undefined {
    try {
      return this.containers?.find(id);
    } catch {
      return undefined;
    }
  }

  // ---- container configuration -----------------------------------------------------------------

  /**
   * The networks a container is configured for: its NetworkMode's network first, then the other
   * EndpointsConfig entries. Validates modes, network existence and endpoint settings (dockerd's
   * messages); throws the 400/404.
   */
  attachmentsFor(hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): Attachment[] {
    const mode = !hc.NetworkMode || hc.NetworkMode === 'default' ? 'bridge' : hc.NetworkMode;
    const eps = nc?.EndpointsConfig ?? {};
    const entries = Object.entries(eps).map(([ref, cfg]) => ({ ref, cfg: cfg ?? {} }));
    if (config.NetworkDisabled) return [];
    if (mode.startsWith('container:')) {
      if (entries.length) throw invalidParameter('container sharing network namespace with another container or host cannot be connected to any other network');
      return [];
    }
    // As dockerd, a network may not exist yet when the container is created: it is looked up
    // again by name at start ("network … not found" then).
    const lookup = (ref: string): NetworkRecord | undefined => {
      try {
        return this.findNetwork(ref);
      } catch (err) {
        if (err instanceof EngineError && err.code === 'NOT_FOUND') return undefined;
        throw err;
      }
    };
    const primary = mode === 'bridge' ? this.defaultBridgeRecord() : lookup(mode);
    if (mode === 'bridge' && !primary) return []; // -b none: no default network, loopback only
    const out: Attachment[] = [];
    const add = (ref: string, net: NetworkRecord | undefined, cfg: EndpointSettings) => {
      if (net && out.some((a) => a.networkId === net.Id)) return;
      if (net?.ConfigOnly) throw invalidParameter(`cannot attach to config-only network ${net.Name}`);
      try {
        out.push({ networkId: net?.Id ?? '', name: net?.Name ?? ref, config: this.validateEndpoint(net, cfg, ref) });
      } catch (err) {
        throw invalidParameter(`invalid config for network ${ref}: ${(err as Error).message}`);
      }
    };
    const primaryEntry = entries.find((e) => (primary ? this.refersTo(e.ref, primary) : e.ref === mode));
    add(mode, primary, { ...(primaryEntry?.cfg ?? {}), ...(config.MacAddress && !primaryEntry?.cfg.MacAddress ? { MacAddress: config.MacAddress } : {}) });
    for (const e of entries) {
      if (e === primaryEntry) continue;
      add(e.ref, lookup(e.ref), e.cfg);
    }
    const special = out.find((a) => this.nets.get(a.networkId) && this.nets.get(a.networkId)!.Driver !== 'bridge');
    if (special && out.length > 1) {
      const n = this.nets.get(special.networkId)!;
      throw invalidParameter(n.Driver === 'host'
        ? 'container sharing network namespace with another container or host cannot be connected to any other network'
        : 'container cannot be connected to multiple networks with one of the networks in private (none) mode');
    }
    return out;
  }

  private refersTo(ref: string, n: NetworkRecord): boolean {
    // The CLI keys the default network's endpoint settings "default".
    if (ref === 'default') return n.x.defaultBridge === true;
    return ref === n.Name || ref === n.Id || (ref.length >= 3 && n.Id.startsWith(ref));
  }

  /** dockerd's endpoint checks; without the network (not created yet) only the network-free ones. */
  private validateEndpoint(net: NetworkRecord | undefined, cfg: EndpointSettings, ref = net?.Name ?? ''): EndpointConfig {
    const errs: string[] = [];
    const ipam = cfg.IPAMConfig ?? undefined;
    const v4 = ipam?.IPv4Address ?? '';
    const userDefined = net ? this.isUserDefined(net) : !PREDEFINED.includes(ref) && ref !== 'default';
    if (!userDefined) {
      if (v4 || ipam?.IPv6Address) errs.push('user specified IP address is supported on user defined networks only');
      if (cfg.Aliases?.length) errs.push('network-scoped alias is supported only for containers in user defined networks');
    }
    if (v4) {
      if (!isIPv4(v4) || v4 === '0.0.0.0') errs.push(`invalid IPv4 address: ${v4}`);
      else if (net && userDefined) {
        if (!net.x.userSubnet) errs.push('user specified IP address is supported only when connecting to networks with user configured subnets');
        else if (!contains(parseCidr(net.x.subnet!), parseIPv4(v4))) errs.push(`no configured subnet or ip-range contain the IP address ${v4}`);
      }
    }
    const v6 = ipam?.IPv6Address ?? '';
    if (v6) {
      if (!isIPv6(v6) || parseIPv6(v6) === 0n) errs.push(`invalid IPv6 address: ${v6}`);
      else if (net && userDefined) {
        if (!net.x.subnet6) errs.push(`no configured subnet contains IP address ${v6}: IPv6 is not enabled on network ${net.Name}`);
        else if (!net.x.userSubnet6) errs.push('user specified IP address is supported only when connecting to networks with user configured subnets');
        else if (!contains6(parseCidr6(net.x.subnet6), parseIPv6(v6))) errs.push(`no configured subnet or ip-range contain the IP address ${v6}`);
      }
    }
    if (cfg.MacAddress && !/^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(cfg.MacAddress)) throw invalidParameter(`invalid MAC address ${cfg.MacAddress}`);
    if (errs.length === 1) throw invalidParameter(`invalid endpoint settings:\n${errs[0]}`);
    if (errs.length > 1) throw invalidParameter(`invalid endpoint settings:\n* ${errs.join('\n* ')}`);
    const out: EndpointConfig = {};
    if (ipam && (ipam.IPv4Address || ipam.IPv6Address || ipam.LinkLocalIPs?.length)) {
      out.IPAMConfig = { ...(ipam.IPv4Address ? { IPv4Address: ipam.IPv4Address } : {}), ...(ipam.IPv6Address ? { IPv6Address: ipam.IPv6Address } : {}), ...(ipam.LinkLocalIPs?.length ? { LinkLocalIPs: ipam.LinkLocalIPs } : {}) };
    }
    if (cfg.Aliases?.length) out.Aliases = [...cfg.Aliases];
    if (cfg.Links?.length) out.Links = [...cfg.Links];
    if (cfg.MacAddress) out.MacAddress = cfg.MacAddress.toLowerCase().replace(/-/g, ':');
    if (cfg.DriverOpts && Object.keys(cfg.DriverOpts).length) out.DriverOpts = { ...cfg.DriverOpts };
    if (cfg.GwPriority) out.GwPriority = cfg.GwPriority;
    return out;
  }

  /** Create-time checks of NetworkMode and EndpointsConfig; returns warnings for the create response. */
  validateCreate(hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): string[] {
    this.attachmentsFor(hc, config, nc);
    return [];
  }

  /** Records the container's networks (after the create succeeded). */
  containerCreated(id: string, hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): void {
    this.persist({ id, attachments: this.attachmentsFor(hc, config, nc) });
  }

  /** The container is gone: its sandbox (if any) was torn down by the launcher; forget the rest. */
  async containerRemoved(id: string): Promise<void> {
    await this.lock.run(id, async () => {
      await this.teardownLocked(id);
      this.cons.delete(id);
      this.store.containers.delete(id);
    });
  }

  private stateOf(rec: ContainerRecord): ContainerNet {
    let c = this.cons.get(rec.Id);
    if (!c) {
      // A container created before networking existed (or whose record was lost): its mode decides.
      let attachments: Attachment[] = [];
      try {
        attachments = this.attachmentsFor(rec.HostConfig, rec.Config, undefined);
      } catch {
        attachments = [];
      }
      c = { id: rec.Id, attachments };
      this.persist(c);
    }
    return c;
  }

  // ---- sandboxes ---------------------------------------------------------------------------------

  /**
   * The container's network namespace for a run: loopback, one veth per bridge network with its
   * address (the gateway network's carrying the default route), published ports. Rolled back
   * entirely when any step fails.
   */
  async setupSandbox(rec: ContainerRecord): Promise<SandboxInfo> {
    return this.lock.run(rec.Id, async () => {
      await this.teardownLocked(rec.Id);
      const c = this.stateOf(rec);
      for (const a of c.attachments) {
        if (this.nets.has(a.networkId)) continue;
        // Created before the network existed, or the network was removed and made again.
        const net = this.findNetwork(a.name);
        a.networkId = net.Id;
        a.name = net.Name;
        this.persist(c);
      }
      const bridged = c.attachments.map((a) => ({ a, net: this.nets.get(a.networkId)! })).filter((x) => x.net.Driver === 'bridge');
      const gw = this.chooseGateway(bridged.map((x) => ({ net: x.net, priority: x.a.config.GwPriority ?? 0 })));
      const sandbox: Sandbox = { key: netnsPath(this.d.execRoot, rec.Id), sandboxId: newId(), endpoints: [], ports: [] };
      try {
        const plans = bridged.map(({ a, net }, i) => {
          const ep = this.allocateEndpoint(net, a, `${net.x.ifPrefix ?? 'eth'}${i}`);
          sandbox.endpoints.push(ep);
          return this.plan(ep, net, gw?.Id === net.Id);
        });
        if (gw) sandbox.gatewayNetworkId = gw.Id;
        c.sandbox = sandbox;
        this.persist(c); // before the devices exist: a crash from here on is cleaned up at restart
        await createSandbox(sandbox.key, plans, this.hostIp);
        if (gw) await this.publishPorts(rec, c, gw);
      } catch (err) {
        await this.teardownLocked(rec.Id).catch(() => undefined);
        throw setupError(err, rec, sandbox);
      }
      this.persist(c);
      for (const ep of sandbox.endpoints) this.event(this.nets.get(ep.networkId)!, 'connect', rec.Id);
      return this.sandboxInfo(rec, c);
    });
  }

  /** Releases the container's sandbox: ports, firewall rules, addresses, veths, namespace. */
  async teardownSandbox(id: string): Promise<void> {
    await this.lock.run(id, () => this.teardownLocked(id));
  }

  private async teardownLocked(id: string): Promise<void> {
    const c = this.cons.get(id);
    const sb = c?.sandbox;
    const handles = this.proxies.get(id) ?? [];
    this.proxies.delete(id);
    await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
    if (!c || !sb) {
      const path = netnsPath(this.d.execRoot, id);
      if (existsSync(path)) await removeNetns(path);
      return;
    }
    const proxyPath = this.d.config()['userland-proxy-path'];
    if (!handles.length && proxyPath) for (const p of sb.ports) if (p.proxyPid) killStaleProxy(p.proxyPid, proxyPath);
    this.portAlloc.releaseOwner(id);
    for (const ep of sb.endpoints) {
      this.releaseEndpoint(ep);
      const n = this.nets.get(ep.networkId);
      if (n) this.event(n, 'disconnect', id);
    }
    delete c.sandbox;
    this.persist(c);
    if (sb.ports.length) await this.syncFirewall().catch(this.fwWarn('sync'));
    if (existsSync(sb.key)) await removeNetns(sb.key);
    // The host ends go in the background: the kernel's own clean-up of the namespace is deferred
    // and may lag, an explicit delete is prompt but costs an RCU wait nobody needs to sit through.
    this.deleteLater(sb.endpoints.map((e) => e.hostIf));
  }

  /** A running container's /etc/hosts follows hot connects and disconnects (as dockerd's). */
  private async updateHosts(rec: ContainerRecord, change: { add?: string[]; remove?: string[] }): Promise<void> {
    if (!rec.HostsPath) return;
    const line = (ip: string) => ownHostsLine(ip, rec.Config.Hostname ?? rec.Id.slice(0, 12), rec.Config.Domainname ?? '');
    await updateHostsEntries(rec.HostsPath, { add: (change.add ?? []).map(line), removeIps: change.remove ?? [] })
      .catch((err) => this.d.log.warn(`updating /etc/hosts: ${(err as Error).message}`, { id: rec.Id }));
  }

  private readonly hostIp = (lines: string[]) => this.attachIp.run(lines);
  private readonly delIp = (lines: string[]) => this.deleteIp.run(lines);

  private deleteLater(links: string[]): void {
    if (!links.length) return;
    const p = deleteLinks(links, this.delIp).catch(() => undefined);
    this.deletions.add(p);
    void p.finally(() => this.deletions.delete(p));
  }

  /** Non-internal bridge networks qualify; highest GwPriority wins, ties go to the first name. */
  private chooseGateway(list: Array<{ net: NetworkRecord; priority: number }>): NetworkRecord | undefined {
    const candidates = list.filter((x) => !x.net.Internal);
    candidates.sort((a, b) => b.priority - a.priority || (a.net.Name < b.net.Name ? -1 : a.net.Name > b.net.Name ? 1 : 0));
    return candidates[0]?.net;
  }

  private allocateEndpoint(net: NetworkRecord, a: Attachment, ifname: string): ActiveEndpoint {
    const space = this.spaces.get(net.Id);
    if (!space || !net.x.bridge || !net.x.subnet || !net.x.gateway) throw internal(`network ${net.Name} has no address space`);
    const want = a.config.IPAMConfig?.IPv4Address;
    const addr = space.allocate(want ? parseIPv4(want) : undefined);
    const mac = a.config.MacAddress ?? macFromIPv4(addr);
    let v6: Pick<ActiveEndpoint, 'ip6' | 'prefixLen6' | 'gateway6'> = {};
    const space6 = this.spaces6.get(net.Id);
    if (space6 && net.x.subnet6 && net.x.gateway6) {
      try {
        v6 = { ip6: formatIPv6(this.allocate6(net, space6, a, mac)), prefixLen6: parseCidr6(net.x.subnet6).bits, gateway6: net.x.routeVia6 ?? net.x.gateway6 };
      } catch (err) {
        space.release(addr);
        throw err;
      }
    }
    return {
      networkId: net.Id, endpointId: newId(), ifname, hostIf: vethName(), bridge: net.x.bridge,
      ip: formatIPv4(addr), prefixLen: parseCidr(net.x.subnet).bits, gateway: net.x.routeVia ?? net.x.gateway,
      mac, ...v6,
    };
  }

  /**
   * A static IPv6Address, else on the default bridge the range's prefix with the MAC as host part
   * (dockerd's way there), else the next free address.
   */
  private allocate6(net: NetworkRecord, space: AddressSpace6, a: Attachment, mac: string): bigint {
    const want = a.config.IPAMConfig?.IPv6Address;
    if (want) return space.allocate(parseIPv6(want));
    if (net.x.defaultBridge) {
      const fromMac = addressFromMac(space.range, mac);
      if (fromMac !== undefined && !space.inUse(fromMac)) return space.allocate(fromMac);
    }
    return space.allocate();
  }

  private releaseEndpoint(ep: ActiveEndpoint): void {
    this.spaces.get(ep.networkId)?.release(parseIPv4(ep.ip));
    if (ep.ip6) this.spaces6.get(ep.networkId)?.release(parseIPv6(ep.ip6));
  }

  private plan(ep: ActiveEndpoint, net: NetworkRecord, isGateway: boolean): VethPlan {
    return {
      ifname: ep.ifname, hostIf: ep.hostIf, mac: ep.mac, mtu: net.x.mtu ?? 1500, address: `${ep.ip}/${ep.prefixLen}`,
      ...(isGateway ? { gateway: ep.gateway } : {}), bridge: ep.bridge, hairpin: !this.d.config()['userland-proxy'],
      ...(ep.ip6 ? { address6: `${ep.ip6}/${ep.prefixLen6}`, ...(isGateway && ep.gateway6 ? { gateway6: ep.gateway6 } : {}) } : {}),
    };
  }

  private async bindPort(spec: { proto: 'tcp' | 'udp' | 'sctp'; hostIp: string; hostPort: number; containerIp: string; containerPort: number }): Promise<ProxyHandle> {
    const cfg = this.d.config();
    if (cfg['userland-proxy']) return startProxy(spec, cfg['userland-proxy-path'] || undefined);
    return reservePort(spec);
  }

  /** Ports other daemons DNAT on this host (empty if the nat table cannot be read). */
  private async foreignPorts(): Promise<Set<string>> {
    return readForeignDnatPorts(chainNames(chainPrefix(this.tag))).catch((err: unknown) => {
      this.d.log.debug(`reading the nat table for foreign ports: ${(err as Error).message}`);
      return new Set<string>();
    });
  }

  private async publishPorts(rec: ContainerRecord, c: ContainerNet, net: NetworkRecord): Promise<void> {
    const { bindings } = requestedPorts(rec.HostConfig, rec.Config.ExposedPorts);
    const ep = c.sandbox!.endpoints.find((e) => e.networkId === net.Id);
    if (!bindings.length || !ep) return;
    const defaultIp = net.x.hostBindingIpv4 || this.d.config().ip || '0.0.0.0';
    const handles: ProxyHandle[] = [];
    this.proxies.set(rec.Id, handles);
    const cfg = this.d.config();
    const foreign = bindings.some((b) => b.hostPortLo !== b.hostPortHi || b.hostPortLo === 0) ? await this.foreignPorts() : new Set<string>();
    for (const b of bindings) {
      const hostIp = b.hostIp || defaultIp;
      // An IPv6 host address goes to the container's IPv6 address, or through the proxy to its IPv4 one.
      const target = isV6Text(hostIp) ? (ep.ip6 ?? ep.ip) : ep.ip;
      const avoid = (p: number) => foreign.has(`${b.proto}/${p}`);
      const { port, handle } = await this.portAlloc.allocate(rec.Id, { proto: b.proto, hostIp, lo: b.hostPortLo, hi: b.hostPortHi, avoid }, (hostPort) =>
        this.bindPort({ proto: b.proto, hostIp, hostPort, containerIp: target, containerPort: b.port }));
      handles.push(handle);
      c.sandbox!.ports.push({ proto: b.proto, containerPort: b.port, hostIp, hostPort: port, containerIp: target, bridge: ep.bridge, ...(handle.pid ? { proxyPid: handle.pid } : {}) });
      // As dockerd, a binding without an address is published on IPv6 too, on the same port: the
      // wildcard listener above is dual-stack (the proxy's path), and ip6tables DNATs external
      // IPv6 traffic to the container's IPv6 address when it has one.
      if (b.hostIp === '' && hostIp === '0.0.0.0' && hostHasIPv6() && (ep.ip6 || cfg['userland-proxy'])) {
        const twin = { proto: b.proto, containerPort: b.port, hostIp: '::', hostPort: port, containerIp: ep.ip6 ?? ep.ip, bridge: ep.bridge };
        if (!cfg['userland-proxy'] || !cfg['userland-proxy-path']) {
          c.sandbox!.ports.push({ ...twin, sharesListener: true });
        } else {
          // An external proxy listens on one family: the IPv6 side needs its own.
          const h = await this.bindPort(twin).catch((err: Error) => void this.d.log.warn(`publishing ${port}/${b.proto} on [::]: ${err.message}`, { id: rec.Id }));
          if (h) {
            handles.push(h);
            c.sandbox!.ports.push({ ...twin, ...(h.pid ? { proxyPid: h.pid } : {}) });
          }
        }
      }
    }
    this.persist(c);
    await this.syncFirewall();
  }

  /** After a restart: the proxies of a surviving sandbox (an old external one is stopped first). */
  private async restartProxies(c: ContainerNet): Promise<void> {
    const proxyPath = this.d.config()['userland-proxy-path'];
    const handles: ProxyHandle[] = [];
    this.proxies.set(c.id, handles);
    for (const p of c.sandbox!.ports) {
      if (p.sharesListener) continue;
      if (p.proxyPid && proxyPath) killStaleProxy(p.proxyPid, proxyPath);
      const h = await this.bindPort({ proto: p.proto, hostIp: p.hostIp, hostPort: p.hostPort, containerIp: p.containerIp, containerPort: p.containerPort });
      handles.push(h);
      if (h.pid) p.proxyPid = h.pid;
      else delete p.proxyPid;
    }
    this.persist(c);
  }

  private sandboxInfo(rec: ContainerRecord, c: ContainerNet): SandboxInfo {
    const sb = c.sandbox!;
    const info: SandboxInfo = { netnsPath: sb.key, addresses: sb.endpoints.flatMap((e) => (e.ip6 ? [e.ip, e.ip6] : [e.ip])) };
    const dnsEp = [...sb.endpoints].sort((a, b) => Number(b.networkId === sb.gatewayNetworkId) - Number(a.networkId === sb.gatewayNetworkId))
      .find((e) => this.dns.has(e.networkId));
    if (dnsEp) {
      const cfg = this.d.config();
      const hc = rec.HostConfig;
      const host = parseResolvConf(readResolvConf());
      const options = hc.DnsOptions?.length ? [...hc.DnsOptions] : cfg['dns-opts'].length ? [...cfg['dns-opts']] : host.options;
      if (!options.some((o) => o.startsWith('ndots:'))) options.push('ndots:0');
      info.dns = { servers: [this.nets.get(dnsEp.networkId)!.x.gateway!], options, search: hc.DnsSearch?.length ? hc.DnsSearch : cfg['dns-search'] };
    }
    return info;
  }

  /**
   * /etc/hosts lines ("ip name") for --add-host (host-gateway resolved to --host-gateway-ip(s) or
   * the default bridge's address) and legacy --link entries on the default bridge.
   */
  extraHosts(rec: ContainerRecord): string[] {
    const out: string[] = [];
    for (const entry of rec.HostConfig.ExtraHosts ?? []) {
      let sep = entry.indexOf('=');
      if (sep < 0) sep = entry.indexOf(':');
      const name = entry.slice(0, sep);
      const ip = entry.slice(sep + 1).replace(/^\[|\]$/g, '');
      if (ip === 'host-gateway') for (const g of this.hostGatewayIps()) out.push(`${g} ${name}`);
      else out.push(`${ip} ${name}`);
    }
    for (const { alias, other, ep } of this.resolveLinks(rec)) {
      out.push(`${ep.ip} ${[alias, other.Id.slice(0, 12), other.Name.slice(1)].filter((v, i, a) => a.indexOf(v) === i).join(' ')}`);
    }
    return out;
  }

  /** The legacy --link environment (ALIAS_PORT_…, ALIAS_NAME, ALIAS_ENV_…) for the container's process. */
  linkEnvironment(rec: ContainerRecord): string[] {
    return this.resolveLinks(rec).flatMap(({ alias, other, ep }) => linkEnv({
      alias, parentName: rec.Name, childIp: ep.ip, childEnv: other.Config.Env ?? [], exposedPorts: Object.keys(other.Config.ExposedPorts ?? {}),
    }));
  }

  /** --link targets on the default bridge: running containers only (dockerd's error otherwise). */
  private resolveLinks(rec: ContainerRecord): Array<{ alias: string; other: ContainerRecord; ep: ActiveEndpoint }> {
    const bridge = this.defaultBridgeRecord();
    return (rec.HostConfig.Links ?? []).map((link) => {
      const [target = '', aliasPath = ''] = link.split(':');
      const alias = aliasPath.split('/').pop() || target.replace(/^\//, '');
      const other = this.record(target.replace(/^\//, ''));
      const ep = other && bridge ? this.cons.get(other.Id)?.sandbox?.endpoints.find((e) => e.networkId === bridge.Id) : undefined;
      if (!other || !ep) throw invalidParameter(`Cannot link to a non running container: ${target.startsWith('/') ? target : `/${target}`} AS ${rec.Name}/${alias}`);
      return { alias, other, ep };
    });
  }

  private hostGatewayIps(): string[] {
    const cfg = this.d.config();
    if (cfg['host-gateway-ips'].length) return cfg['host-gateway-ips'];
    const bridge = this.defaultBridgeRecord();
    if (!bridge?.x.gateway) throw invalidParameter('unable to derive the IP value for host-gateway');
    return bridge.x.gateway6 ? [bridge.x.gateway, bridge.x.gateway6] : [bridge.x.gateway];
  }

  // ---- views -------------------------------------------------------------------------------------

  /** NetworkSettings for inspect, and the list entry's networks and ports. */
  containerView(rec: ContainerRecord): NetworkView {
    const c = this.cons.get(rec.Id) ?? { id: rec.Id, attachments: this.safeAttachments(rec) };
    return buildContainerView(rec, c, (id) => this.nets.get(id), this.d.config().bridge ?? '');
  }

  private safeAttachments(rec: ContainerRecord): Attachment[] {
    try {
      return this.attachmentsFor(rec.HostConfig, rec.Config, undefined);
    } catch {
      return [];
    }
  }

  /** Names and IDs of the networks a container is configured for (the `network` ps filter). */
  networksOf(rec: ContainerRecord): string[] {
    const c = this.cons.get(rec.Id);
    if (!c) return [rec.HostConfig.NetworkMode ?? 'bridge'];
    return c.attachments.flatMap((a) => [this.nets.get(a.networkId)?.Name ?? a.name, a.networkId]).filter(Boolean);
  }

  // ---- DNS ---------------------------------------------------------------------------------------

  private async startDns(n: NetworkRecord): Promise<void> {
    if (this.dns.has(n.Id) || !n.x.gateway) return;
    const subnet = parseCidr(n.x.subnet!);
    const server = new EmbeddedDns(n.x.gateway, {
      serves: (clientIp) => isIPv4(clientIp) && contains(subnet, parseIPv4(clientIp)),
      lookup: (name, clientIp) => this.dnsLookup(n.Id, name, clientIp),
      reverse: (addr) => this.dnsReverse(n.Id, addr),
      upstreams: (clientIp) => this.dnsUpstreams(n.Id, clientIp),
    }, this.d.log.child({ module: 'dns', network: n.Name }));
    try {
      await server.start();
      this.dns.set(n.Id, server);
    } catch (err) {
      this.d.log.warn(`embedded DNS for network ${n.Name} could not listen on ${n.x.gateway}:53: ${(err as Error).message}; its containers use the host's resolvers`);
    }
  }

  /** The networks a query is answered from: every user network of the asking container (as dockerd's per-sandbox resolver). */
  private scopeOf(netId: string, clientIp: string | undefined): string[] {
    if (clientIp) {
      for (const c of this.cons.values()) {
        if (c.sandbox?.endpoints.some((e) => e.networkId === netId && e.ip === clientIp)) {
          return c.sandbox.endpoints.map((e) => e.networkId).filter((id) => this.nets.get(id) && !this.nets.get(id)!.x.predefined);
        }
      }
    }
    return [netId];
  }

  private dnsLookup(netId: string, rawName: string, clientIp?: string): Array<number | bigint> | undefined {
    const name = rawName.toLowerCase();
    const out: Array<number | bigint> = [];
    for (const id of this.scopeOf(netId, clientIp)) {
      const net = this.nets.get(id);
      if (!net) continue;
      const suffix = `.${net.Name.toLowerCase()}`;
      const short = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined;
      for (const { c, ep } of this.endpointsOn(id)) {
        const rec = this.record(c.id);
        if (!rec) continue;
        const a = c.attachments.find((x) => x.networkId === id);
        const names = dnsNamesFor(rec, a?.config.Aliases ?? []).map((s) => s.toLowerCase());
        if (names.includes(name) || (short !== undefined && names.includes(short))) {
          out.push(parseIPv4(ep.ip));
          if (ep.ip6) out.push(parseIPv6(ep.ip6));
        }
      }
    }
    return out.length ? out : undefined;
  }

  private dnsReverse(netId: string, addr: number | bigint): string | undefined {
    const ip = typeof addr === 'bigint' ? formatIPv6(addr) : formatIPv4(addr);
    for (const { c, ep } of this.endpointsOn(netId)) {
      if (ep.ip !== ip && ep.ip6 !== ip) continue;
      const rec = this.record(c.id);
      if (rec) return `${rec.Name.slice(1)}.${this.nets.get(netId)?.Name ?? ''}`.replace(/\.$/, '');
    }
    return undefined;
  }

  private dnsUpstreams(netId: string, clientIp: string): string[] {
    let rec: ContainerRecord | undefined;
    let external = !this.nets.get(netId)?.Internal;
    for (const c of this.cons.values()) {
      if (!c.sandbox?.endpoints.some((e) => e.networkId === netId && e.ip === clientIp)) continue;
      rec = this.record(c.id);
      external = c.sandbox.endpoints.some((e) => !this.nets.get(e.networkId)?.Internal);
      break;
    }
    if (!external) return [];
    if (rec?.HostConfig.Dns?.length) return rec.HostConfig.Dns;
    const cfg = this.d.config();
    if (cfg.dns.length) return cfg.dns;
    return parseResolvConf(readResolvConf()).servers;
  }

  // ---- firewall ----------------------------------------------------------------------------------

  private firewallState(): FwState {
    const networks = [...this.nets.values()].filter((n) => n.Driver === 'bridge' && n.x.bridge && n.x.subnet && !n.ConfigOnly).map((n) => ({
      bridge: n.x.bridge!, subnet: n.x.subnet!, ...(n.x.subnet6 ? { subnet6: n.x.subnet6 } : {}), icc: n.x.icc !== false, masquerade: n.x.masquerade !== false, internal: n.Internal,
    }));
    const ports = [...this.cons.values()].flatMap((c) => (c.sandbox?.ports ?? []).map((p) => ({
      bridge: p.bridge, proto: p.proto, hostIp: p.hostIp, hostPort: p.hostPort, containerIp: p.containerIp, containerPort: p.containerPort,
    })));
    return { networks, ports };
  }

  // ---- the /networks API -------------------------------------------------------------------------

  list(filters: Map<string, string[]>): unknown[] {
    const inUse = (n: NetworkRecord) => this.endpointsOn(n.Id).length > 0 || this.configuredOn(n.Id);
    const match = compileListFilters(filters, { inUse });
    return [...this.nets.values()].filter(match).sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0)).map((n) => networkInspect(n, {}));
  }

  private configuredOn(netId: string): boolean {
    for (const c of this.cons.values()) if (c.attachments.some((a) => a.networkId === netId) && !this.nets.get(netId)?.x.predefined) return true;
    return false;
  }

  inspect(ref: string, opts: { scope?: string } = {}): unknown {
    const n = this.findNetwork(ref);
    if (opts.scope && opts.scope !== n.Scope) throw notFound(`network ${ref} not found`);
    const containers: Record<string, unknown> = {};
    for (const { c, ep } of this.endpointsOn(n.Id)) {
      const rec = this.record(c.id);
      containers[c.id] = { Name: rec ? rec.Name.slice(1) : '', EndpointID: ep.endpointId, MacAddress: ep.mac, IPv4Address: `${ep.ip}/${ep.prefixLen}`, IPv6Address: ep.ip6 ? `${ep.ip6}/${ep.prefixLen6}` : '' };
    }
    return networkInspect(n, containers);
  }

  async create(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }> {
    return this.lock.run('\0networks', () => this.createLocked(body));
  }

  private async createLocked(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }> {
    const cfg = this.d.config();
    checkCreateBody(body);
    const name = body.Name ?? '';
    if (!name) throw invalidParameter('invalid name: network name must not be empty');
    if (PREDEFINED.includes(name) || name === 'default') throw forbidden(`operation is not permitted on predefined ${name} network `);
    if (!NAME_RE.test(name)) throw invalidParameter(`invalid network name ${JSON.stringify(name)}: only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    if ([...this.nets.values()].some((n) => n.Name === name)) throw conflict(`network with name ${name} already exists`);
    const driver = body.Driver || 'bridge';
    if (driver === 'host' || driver === 'null') throw forbidden(`only one instance of "${driver}" network is allowed`);
    if (driver === 'overlay') throw forbidden('This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.');
    if (driver !== 'bridge') throw notFound(`could not find plugin ${driver} in v1 plugin registry: plugin not found`);
    if (body.Scope && body.Scope !== 'local') throw invalidParameter(`invalid scope ${JSON.stringify(body.Scope)}: only local networks are supported`);
    if (body.Ingress) throw forbidden('ingress networks are only supported in cluster (swarm) mode');
    const ipamDriver = body.IPAM?.Driver || 'default';
    if (ipamDriver !== 'default') throw notFound(`could not find plugin ${ipamDriver} in v1 plugin registry: plugin not found`);

    let options: Record<string, string> = { ...(body.Options ?? {}) };
    let ipamConfig = body.IPAM?.Config ?? [];
    let from: NetworkRecord | undefined;
    if (body.ConfigFrom?.Network) {
      from = this.findNetwork(body.ConfigFrom.Network);
      if (!from.ConfigOnly) throw forbidden(`network ${body.ConfigFrom.Network} is not a config-only network`);
      if (Object.keys(options).length || ipamConfig.length) throw forbidden('user specified configurations are not supported if the network depends on a configuration network');
      options = { ...from.Options };
      ipamConfig = from.IPAM.Config;
    } else {
      for (const [k, v] of Object.entries(cfg['default-network-opts'][driver] ?? {})) if (!Object.hasOwn(options, k)) options[k] = v;
    }
    const enableIPv6 = body.EnableIPv6 ?? boolOpt(options, OPT_ENABLE_IPV6, false);
    const enableIPv4 = body.EnableIPv4 ?? boolOpt(options, OPT_ENABLE_IPV4, true);
    if (!enableIPv4) throw invalidParameter('networks without IPv4 are not built yet (EnableIPv4=false)');
    validateIpam(ipamConfig);
    const v4 = ipamConfig.filter((c) => c.Subnet && !isV6Text(c.Subnet));
    const v6 = ipamConfig.filter((c) => c.Subnet && isV6Text(c.Subnet));
    // As dockerd's bridge driver: one subnet per family.
    if (v4.length > 1 || v6.length > 1) throw forbidden("bridge driver doesn't support multiple subnets");
    if (v6.length && !enableIPv6) throw invalidParameter(`invalid network config:\nIPv6 subnet ${v6[0]!.Subnet} given, but IPv6 is not enabled on the network (EnableIPv6)`);

    const id = newId();
    const labels = { ...(body.Labels ?? {}) };
    const base: Omit<NetworkRecord, 'x'> = {
      Name: name, Id: id, Created: nowIso(), Scope: 'local', Driver: body.ConfigOnly ? 'null' : driver, EnableIPv4: enableIPv4, EnableIPv6: enableIPv6,
      IPAM: { Driver: ipamDriver, Options: body.IPAM?.Options ?? null, Config: ipv4First(ipamConfig).map((c) => ({ ...c })) }, Internal: body.Internal === true,
      Attachable: body.Attachable === true, Ingress: false, ConfigFrom: { Network: from?.Name ?? '' }, ConfigOnly: body.ConfigOnly === true, Options: options, Labels: labels,
    };
    if (body.ConfigOnly) {
      this.saveNetwork({ ...base, x: { predefined: false } });
      this.event(this.nets.get(id)!, 'create');
      return { Id: id, Warning: '' };
    }

    const bridgeName = getOpt(options, OPT_BRIDGE_NAME) || userBridgeName(id);
    if (!validInterfaceName(bridgeName)) throw invalidParameter(`invalid bridge name ${JSON.stringify(bridgeName)}`);
    if ([...this.nets.values()].some((n) => n.x.bridge === bridgeName)) throw forbidden(`bridge name ${bridgeName} is already in use by another network`);
    const mtu = intOpt(options, OPT_MTU, 1500, 68, 65535);
    const icc = boolOpt(options, OPT_ICC, true);
    const masq = boolOpt(options, OPT_MASQ, true) && cfg.iptables;
    const hostBinding = getOpt(options, OPT_HOST_BINDING) ?? '';
    if (hostBinding && !isIPv4(hostBinding)) throw invalidParameter(`invalid host binding address ${hostBinding}`);
    const ifPrefix = getOpt(options, OPT_IFACE_PREFIX) || 'eth';
    if (!/^[a-z][a-z0-9]{0,9}$/i.test(ifPrefix)) throw invalidParameter(`invalid container interface prefix ${JSON.stringify(ifPrefix)}`);
    const ownsBridge = !linkExists(bridgeName);
    if (!ownsBridge && !isBridge(bridgeName)) throw forbidden(`device ${bridgeName} exists and is not a bridge`);

    const given = v4[0];
    const given6 = v6[0];
    let x!: NetworkRecord['x'];
    await withHostLock(async () => {
      let subnet: Cidr;
      if (given?.Subnet) {
        subnet = parseCidr(given.Subnet);
        const clash = [...this.nets.values()].find((n) => n.x.subnet && overlaps(parseCidr(n.x.subnet), subnet));
        if (clash) throw forbidden('invalid pool request: Pool overlaps with other one on this address space');
      } else {
        const pools: AddressPool[] = cfg['default-address-pools'].length ? cfg['default-address-pools'] : DEFAULT_POOLS;
        const picked = pickSubnet(pools, this.takenSubnets());
        if (!picked) throw forbidden('all predefined address pools have been fully subnetted');
        subnet = picked;
      }
      const gateway = given?.Gateway || formatIPv4(subnet.base + 1);
      const reserved = Object.values(given?.AuxiliaryAddresses ?? {});
      x = {
        predefined: false, bridge: bridgeName, ownsBridge, subnet: formatCidr(subnet), gateway,
        ...(given?.IPRange ? { range: formatCidr(parseCidr(given.IPRange)) } : {}), reserved, userSubnet: Boolean(given?.Subnet),
        mtu, icc, masquerade: masq, hostBindingIpv4: hostBinding, ifPrefix,
        ...(enableIPv6 ? this.ipv6Facts(given6) : {}),
      };
      const address6 = x.subnet6 ? `${x.gateway6}/${parseCidr6(x.subnet6).bits}` : undefined;
      await ensureBridge({ name: bridgeName, mtu, address: `${gateway}/${subnet.bits}`, ...(address6 ? { address6 } : {}), ...(ownsBridge ? { alias: linkAlias(this.tag) } : {}) });
    });
    const rec: NetworkRecord = { ...base, x };
    // The IPAM config shows what was chosen: subnets from the pools, gateways filled in.
    const filled = (entry: IpamConfigEntry | undefined, subnet: string, gateway: string) => {
      if (!entry) return [{ Subnet: subnet, Gateway: gateway }];
      if (!entry.Gateway) rec.IPAM.Config = rec.IPAM.Config.map((c) => (c.Subnet === entry.Subnet ? { ...c, Gateway: gateway } : c));
      return [];
    };
    rec.IPAM.Config = [...filled(given, x.subnet!, x.gateway!), ...rec.IPAM.Config];
    if (x.subnet6) rec.IPAM.Config.push(...filled(given6, x.subnet6, x.gateway6!));
    if (x.subnet6 && this.d.config()['ip-forward']) this.enableForwarding6();
    this.saveNetwork(rec);
    this.makeSpace(rec);
    this.bridgeSysctls(rec);
    try {
      await this.syncFirewall();
    } catch (err) {
      await this.removeNetworkDevices(rec);
      this.deleteNetworkRecord(rec);
      throw internal(`programming the firewall for network ${name}: ${(err as Error).message}`);
    }
    await this.startDns(rec);
    this.event(rec, 'create');
    return { Id: id, Warning: '' };
  }

  /** A new network's IPv6 subnet (given, or a /64 from the pools), gateway, range and reserved addresses; under the host lock. */
  private ipv6Facts(given: IpamConfigEntry | undefined): Partial<NetworkRecord['x']> {
    let subnet: Cidr6;
    if (given?.Subnet) {
      subnet = parseCidr6(given.Subnet);
      const clash = [...this.nets.values()].find((n) => n.x.subnet6 && overlaps6(parseCidr6(n.x.subnet6), subnet));
      if (clash) throw forbidden('invalid pool request: Pool overlaps with other one on this address space');
    } else {
      const picked = pickSubnet6(this.pools6(), this.takenSubnets6());
      if (!picked) throw forbidden('all predefined address pools have been fully subnetted');
      subnet = picked;
    }
    const gateway = given?.Gateway ? formatIPv6(parseIPv6(given.Gateway)) : formatIPv6(subnet.base + 1n);
    return {
      subnet6: formatCidr6(subnet), gateway6: gateway, userSubnet6: Boolean(given?.Subnet),
      ...(given?.IPRange ? { range6: formatCidr6(parseCidr6(given.IPRange)) } : {}),
      reserved6: Object.values(given?.AuxiliaryAddresses ?? {}).filter(isIPv6).map((a) => formatIPv6(parseIPv6(a))),
    };
  }

  private async removeNetworkDevices(n: NetworkRecord): Promise<void> {
    await this.dns.get(n.Id)?.stop().catch(() => undefined);
    this.dns.delete(n.Id);
    if (n.x.ownsBridge && n.x.bridge) await deleteLinks([n.x.bridge]);
  }

  async remove(ref: string): Promise<void> {
    await this.lock.run('\0networks', async () => {
      const n = this.findNetwork(ref);
      if (n.x.predefined) throw forbidden(`${n.Name} is a pre-defined network and cannot be removed`);
      const active = this.endpointsOn(n.Id);
      if (active.length) throw forbidden(`error while removing network: network ${n.Name} id ${n.Id} has active endpoints`);
      if (this.nets.size && [...this.nets.values()].some((o) => o.ConfigFrom.Network === n.Name)) throw forbidden(`configuration network "${n.Name}" is in use`);
      await this.removeNetworkDevices(n);
      this.deleteNetworkRecord(n);
      this.event(n, 'destroy');
      await this.syncFirewall().catch(this.fwWarn('sync'));
    });
  }

  async prune(filters: Map<string, string[]>): Promise<{ NetworksDeleted: string[] | null }> {
    const match = compilePruneFilters(filters);
    let deleted: string[] | null = null;
    for (const n of [...this.nets.values()]) {
      if (n.x.predefined || !match(n) || this.endpointsOn(n.Id).length || this.configuredOn(n.Id)) continue;
      try {
        await this.remove(n.Id);
        (deleted ??= []).push(n.Name);
      } catch (err) {
        this.d.log.warn(`pruning network ${n.Name}: ${(err as Error).message}`);
      }
    }
    return { NetworksDeleted: deleted };
  }

  async connect(ref: string, body: { Container?: string; EndpointConfig?: EndpointSettings | null }): Promise<void> {
    const net = this.findNetwork(ref);
    if (!this.containers) throw internal('containers are not available');
    const rec = this.containers.find(body.Container ?? '');
    await this.lock.run(rec.Id, async () => {
      const c = this.stateOf(rec);
      const mode = rec.HostConfig.NetworkMode ?? 'bridge';
      if (mode.startsWith('container:') || mode === 'host') throw invalidParameter('container sharing network namespace with another container or host cannot be connected to any other network');
      if (net.Driver === 'host') throw invalidParameter('cannot connect container to host network - container must be created in host network mode');
      if (mode === 'none' || net.Driver === 'null') throw invalidParameter('container cannot be connected to multiple networks with one of the networks in private (none) mode');
      if (net.ConfigOnly) throw invalidParameter(`cannot attach to config-only network ${net.Name}`);
      if (c.attachments.some((a) => a.networkId === net.Id)) throw forbidden(`endpoint with name ${rec.Name.slice(1)} already exists in network ${net.Name}`);
      const attachment: Attachment = { networkId: net.Id, name: net.Name, config: this.validateEndpoint(net, body.EndpointConfig ?? {}) };
      const sb = c.sandbox;
      if (!sb || !rec.State.Running) {
        c.attachments.push(attachment);
        this.persist(c);
        return;
      }
      const used = new Set(sb.endpoints.map((e) => e.ifname));
      const prefix = net.x.ifPrefix ?? 'eth';
      let i = 0;
      while (used.has(`${prefix}${i}`)) i++;
      const ep = this.allocateEndpoint(net, attachment, `${prefix}${i}`);
      const becomesGateway = !sb.gatewayNetworkId && !net.Internal;
      try {
        sb.endpoints.push(ep);
        c.attachments.push(attachment);
        if (becomesGateway) sb.gatewayNetworkId = net.Id;
        this.persist(c);
        await addInterfaces(sb.key, [this.plan(ep, net, becomesGateway)], this.hostIp);
        await this.updateHosts(rec, { add: [ep.ip, ...(ep.ip6 ? [ep.ip6] : [])] });
        this.event(net, 'connect', rec.Id);
      } catch (err) {
        sb.endpoints = sb.endpoints.filter((e) => e !== ep);
        c.attachments = c.attachments.filter((a) => a !== attachment);
        if (becomesGateway) delete sb.gatewayNetworkId;
        this.releaseEndpoint(ep);
        this.persist(c);
        await deleteLinks([ep.hostIf], this.delIp);
        throw setupError(err, rec, sb);
      }
    });
  }

  async disconnect(ref: string, body: { Container?: string; Force?: boolean }): Promise<void> {
    const net = this.findNetwork(ref);
    if (!this.containers) throw internal('containers are not available');
    let rec: ContainerRecord;
    try {
      rec = this.containers.find(body.Container ?? '');
    } catch (err) {
      if (body.Force) return; // dockerd: a forced disconnect of an unknown container is a no-op here
      throw err;
    }
    await this.lock.run(rec.Id, async () => {
      const c = this.stateOf(rec);
      const idx = c.attachments.findIndex((a) => a.networkId === net.Id);
      if (idx < 0) throw invalidParameter(`container ${rec.Id} is not connected to network ${net.Name}`);
      if (net.Driver !== 'bridge') throw invalidParameter(`container cannot be disconnected from network ${net.Name}: change its network mode instead`);
      c.attachments.splice(idx, 1);
      const sb = c.sandbox;
      const ep = sb?.endpoints.find((e) => e.networkId === net.Id);
      if (sb && ep) {
        sb.endpoints = sb.endpoints.filter((e) => e !== ep);
        this.releaseEndpoint(ep);
        await deleteLinks([ep.hostIf], this.delIp);
        await this.updateHosts(rec, { remove: [ep.ip, ...(ep.ip6 ? [ep.ip6] : [])] });
        this.event(net, 'disconnect', rec.Id);
        if (sb.gatewayNetworkId === net.Id) {
          // The default route (and published ports) move to the next best network, if any.
          const next = this.chooseGateway(sb.endpoints.map((e) => ({ net: this.nets.get(e.networkId)!, priority: c.attachments.find((a) => a.networkId === e.networkId)?.config.GwPriority ?? 0 })).filter((x) => x.net));
          const nextEp = next ? sb.endpoints.find((e) => e.networkId === next.Id) : undefined;
          if (next) sb.gatewayNetworkId = next.Id;
          else delete sb.gatewayNetworkId;
          await setDefaultRoute(sb.key, nextEp ? { gateway: nextEp.gateway, ...(nextEp.gateway6 ? { gateway6: nextEp.gateway6 } : {}), ifname: nextEp.ifname } : undefined);
          const handles = this.proxies.get(rec.Id) ?? [];
          this.proxies.delete(rec.Id);
          await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
          this.portAlloc.releaseOwner(rec.Id);
          const hadPorts = sb.ports.length > 0;
          sb.ports = [];
          if (next) await this.publishPorts(rec, c, next).catch((err) => this.d.log.warn(`republishing ports: ${(err as Error).message}`, { id: rec.Id }));
          else if (hadPorts) await this.syncFirewall().catch(this.fwWarn('sync'));
        }
      }
      this.persist(c);
    });
  }
}

/** Whether the host has IPv6 at all (wildcard port bindings are then published on :: too). */
function hostHasIPv6(): boolean {
  return existsSync('/proc/net/if_inet6') && readSysctl('net/ipv6/conf/all/disable_ipv6') !== '1';
}

function readResolvConf(): string {
  try {
    return readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return '';
  }
}

/** Field types of a create request (the JSON decoder of dockerd refuses these with a 400). */
function checkCreateBody(body: NetworkCreateBody): void {
  const raw = body as Record<string, unknown>;
  for (const k of ['Name', 'Driver', 'Scope']) if (raw[k] !== undefined && raw[k] !== null && typeof raw[k] !== 'string') throw invalidParameter(`invalid JSON: ${k} must be a string`);
  for (const k of ['Internal', 'Attachable', 'Ingress', 'ConfigOnly', 'EnableIPv4', 'EnableIPv6', 'CheckDuplicate']) {
    if (raw[k] !== undefined && raw[k] !== null && typeof raw[k] !== 'boolean') throw invalidParameter(`invalid JSON: ${k} must be a boolean`);
  }
  const stringMap = (v: unknown, what: string) => {
    if (v === undefined || v === null) return;
    if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) throw invalidParameter(`invalid JSON: ${what} must be an object of strings`);
  };
  stringMap(body.Options, 'Options');
  stringMap(body.Labels, 'Labels');
  stringMap(body.IPAM?.Options, 'IPAM.Options');
  if (body.IPAM?.Config !== undefined && body.IPAM.Config !== null && !Array.isArray(body.IPAM.Config)) throw invalidParameter('invalid JSON: IPAM.Config must be an array');
}

/** dockerd's wording for a failed sandbox set-up; the cause's class (400/403/404…) is kept. */
function setupError(err: unknown, rec: ContainerRecord, sb: Sandbox): Error {
  const msg = (err as Error).message ?? String(err);
  const ports = sb.ports.length > 0 || /port is already allocated|userland proxy/.test(msg);
  const text = ports
    ? `failed to set up container networking: driver failed programming external connectivity on endpoint ${rec.Name.slice(1)} (${sb.endpoints[0]?.endpointId ?? sb.sandboxId}): ${msg}`
    : `failed to set up container networking: ${msg}`;
  if (err instanceof EngineError) return new EngineError(err.code, text, { cause: err });
  return internal(text, err);
}

