// The /networks API backend: list, inspect, create (the bridge, its subnets chosen under the
// host-wide lock, firewall and DNS), remove, prune, connect and disconnect (checked here, carried
// out on the sandbox by sandboxes.ts). Network creation and removal are serialised.
import type { DaemonConfig } from '../config/daemon-config.ts';
import { conflict, forbidden, internal, invalidParameter, notFound, unavailable } from '../errors.ts';
import type { IpamConfigEntry, NetworkConnectBody, NetworkCreateBody, NetworkDisconnectBody } from '../types/networks.ts';
import type { Logger } from '../util/log.ts';
import { KeyedMutex } from '../util/mutex.ts';
import { nowIso } from '../util/time.ts';
import { validateEndpoint } from './attachments.ts';
import { bridgeSysctls } from './host/bridges.ts';
import type { ContainerLookup, NetContainer } from './container-contract.ts';
import type { NetworkDns } from './dns/dns-glue.ts';
import { compileListFilters, compilePruneFilters } from './filters.ts';
import type { FirewallSync } from './firewall/firewall-sync.ts';
import { withHostLock } from './ipam/host-lock.ts';
import { formatCidr, formatIPv4, parseCidr, type Cidr } from './ipam/ip4.ts';
import { parseCidr6 } from './ipam/ip6.ts';
import { ipv4First } from './ipam/ipam-config.ts';
import { DEFAULT_POOLS, hostRoutes, hostRoutes6, pickSubnet, type AddressPool } from './ipam/ipam.ts';
import { bridgeOptions, parseCreateRequest, type CreateRequest } from './create-request.ts';
import { deleteLinks, ensureBridge, isBridge, linkExists } from './host/netlink.ts';
import { linkAlias, newId } from './naming.ts';
import type { Attachment, NetworkFacts, NetworkRecord } from './records.ts';
import type { OverlayControl } from './overlay/contract.ts';
import type { SandboxService } from './sandbox/sandboxes.ts';
import type { NetworkState } from './state.ts';
import { checkFreeSubnet, newIPv6Facts, pools6, takenSubnets } from './ipam/subnets.ts';
import { networkInspect, type NetworkInspectView } from './views.ts';
import type { NetworkContainer } from '../types/api/index.ts';

export interface NetworksApiDeps {
  config: () => DaemonConfig;
  log: Logger;
  state: NetworkState;
  firewall: FirewallSync;
  dns: NetworkDns;
  sandboxes: SandboxService;
  containers: ContainerLookup;
  tag: string;
  /** Seed of the daemon's ULA /48 (its ID). */
  ulaSeed: string;
  /** Whether this node is an active cluster manager (cluster/ answers; absent: never). */
  clusterManager?: () => boolean;
  /** Cluster mode's side of overlay networks (undefined while it is not loaded). */
  overlay?: () => OverlayControl | undefined;
}

const WORKER_TEXT =
  "This node is not a swarm manager. Worker nodes can't be used to view or modify cluster state. Please run this command on a manager node or promote the current node to a manager.";

/** The lock key of network creation and removal (never a container ID). */
const NETWORKS = '\0networks';

export class NetworksApi {
  private readonly lock = new KeyedMutex();

  constructor(private readonly d: NetworksApiDeps) {}

  list(filters: Map<string, string[]>): unknown[] {
    const inUse = (n: NetworkRecord) => this.d.state.endpointsOn(n.Id).length > 0 || this.d.state.configuredOn(n.Id);
    const match = compileListFilters(filters, { inUse });
    // As dockerd: managers list every swarm network, other nodes those their containers use.
    const manager = this.d.clusterManager?.() === true;
    return this.d.state
      .networks()
      .filter((n) => n.Scope !== 'swarm' || manager || this.d.state.endpointsOn(n.Id).length > 0)
      .filter(match)
      .sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0))
      .map((n) => networkInspect(n, {}));
  }

  inspect(ref: string, opts: { scope?: string } = {}): NetworkInspectView {
    const n = this.d.state.findNetwork(ref);
    if (opts.scope && opts.scope !== n.Scope) throw notFound(`network ${ref} not found`);
    const containers: Record<string, NetworkContainer> = {};
    for (const { c, ep } of this.d.state.endpointsOn(n.Id)) {
      const rec = this.findContainer(c.id);
      containers[c.id] = {
        Name: rec ? rec.Name.slice(1) : '',
        EndpointID: ep.endpointId,
        MacAddress: ep.mac,
        IPv4Address: `${ep.ip}/${ep.prefixLen}`,
        IPv6Address: ep.ip6 ? `${ep.ip6}/${ep.prefixLen6}` : '',
      };
    }
    return networkInspect(n, containers);
  }

  async create(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }> {
    return this.lock.run(NETWORKS, () => this.createLocked(body));
  }

  async remove(ref: string): Promise<void> {
    const swarm = this.d.state.findNetwork(ref);
    if (swarm.Scope === 'swarm' && !swarm.x.predefined) {
      // The replicated store decides, with every node's endpoints (this node's included): it
      // refuses while any is left, after waiting for those of tasks that are leaving (a service
      // just removed, as `docker stack rm` does) — outside the lock, which their removal takes.
      const control = this.d.overlay?.();
      if (!control || !this.d.clusterManager?.()) throw unavailable(WORKER_TEXT);
      if (this.d.state.networks().some((o) => o.ConfigFrom.Network === swarm.Name))
        throw forbidden(`configuration network "${swarm.Name}" is in use`);
      await control.remove(swarm.Id);
      await this.until(() => !this.d.state.network(swarm.Id));
      return;
    }
    await this.lock.run(NETWORKS, async () => {
      const n = this.d.state.findNetwork(ref);
      if (n.x.predefined) throw forbidden(`${n.Name} is a pre-defined network and cannot be removed`);
      if (this.d.state.endpointsOn(n.Id).length)
        throw forbidden(`error while removing network: network ${n.Name} id ${n.Id} has active endpoints`);
      if (this.d.state.networks().some((o) => o.ConfigFrom.Network === n.Name))
        throw forbidden(`configuration network "${n.Name}" is in use`);
      await this.removeDevices(n);
      this.d.state.deleteNetwork(n);
      this.d.state.event(n, 'destroy');
      await this.d.firewall.syncOrWarn();
    });
  }

  async prune(filters: Map<string, string[]>): Promise<{ NetworksDeleted: string[] | null }> {
    const match = compilePruneFilters(filters);
    let deleted: string[] | null = null;
    for (const n of this.d.state.networks()) {
      if (n.x.predefined || n.Scope === 'swarm' || !match(n) || this.d.state.endpointsOn(n.Id).length || this.d.state.configuredOn(n.Id))
        continue;
      try {
        await this.remove(n.Id);
        (deleted ??= []).push(n.Name);
      } catch (err) {
        this.d.log.warn(`pruning network ${n.Name}: ${(err as Error).message}`);
      }
    }
    return { NetworksDeleted: deleted };
  }

  async connect(ref: string, body: NetworkConnectBody): Promise<void> {
    const net = this.d.state.findNetwork(ref);
    const rec = this.d.containers.find(body.Container ?? '');
    await this.d.sandboxes.withContainer(rec.Id, async () => {
      const c = this.d.sandboxes.containerNet(rec);
      const mode = rec.HostConfig.NetworkMode ?? 'bridge';
      if (mode.startsWith('container:') || mode === 'host')
        throw invalidParameter(
          'container sharing network namespace with another container or host cannot be connected to any other network',
        );
      if (net.Driver === 'host')
        throw invalidParameter('cannot connect container to host network - container must be created in host network mode');
      if (mode === 'none' || net.Driver === 'null')
        throw invalidParameter('container cannot be connected to multiple networks with one of the networks in private (none) mode');
      if (net.ConfigOnly) throw invalidParameter(`cannot attach to config-only network ${net.Name}`);
      if (c.attachments.some((a) => a.networkId === net.Id))
        throw forbidden(`endpoint with name ${rec.Name.slice(1)} already exists in network ${net.Name}`);
      const attachment: Attachment = { networkId: net.Id, name: net.Name, config: validateEndpoint(net, body.EndpointConfig ?? {}) };
      if (!c.sandbox || !rec.State.Running) {
        // Not running: the network is joined at the next start.
        c.attachments.push(attachment);
        this.d.state.persist(c);
        return;
      }
      await this.d.sandboxes.addEndpoint(rec, c, net, attachment);
    });
  }

  async disconnect(ref: string, body: NetworkDisconnectBody): Promise<void> {
    const net = this.d.state.findNetwork(ref);
    let rec: NetContainer;
    try {
      rec = this.d.containers.find(body.Container ?? '');
    } catch (err) {
      if (body.Force) return; // dockerd: a forced disconnect of an unknown container is a no-op here
      throw err;
    }
    await this.d.sandboxes.withContainer(rec.Id, async () => {
      const c = this.d.sandboxes.containerNet(rec);
      const idx = c.attachments.findIndex((a) => a.networkId === net.Id);
      if (idx < 0) throw invalidParameter(`container ${rec.Id} is not connected to network ${net.Name}`);
      if (net.Driver !== 'bridge' && net.Driver !== 'overlay')
        throw invalidParameter(`container cannot be disconnected from network ${net.Name}: change its network mode instead`);
      c.attachments.splice(idx, 1);
      await this.d.sandboxes.removeEndpoint(rec, c, net);
      this.d.state.persist(c);
    });
  }

  /** A container for inspect's names; undefined when it is gone (its endpoint is being released). */
  private findContainer(id: string): NetContainer | undefined {
    try {
      return this.d.containers.find(id);
    } catch {
      return undefined; // shown without a name, as dockerd shows an endpoint whose container went
    }
  }

  private async createLocked(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }> {
    const cfg = this.d.config();
    // On a cluster manager dockerd would create it; outside a cluster parseCreateRequest says why not.
    if (body.Driver === 'overlay' && this.d.clusterManager?.()) return this.createOverlay(body);
    if (body.Driver === 'overlay' && this.d.overlay?.()) throw unavailable(WORKER_TEXT);
    const req = parseCreateRequest(body, this.d.state, cfg);
    const id = newId();
    const base: Omit<NetworkRecord, 'x'> = {
      Name: req.name,
      Id: id,
      Created: nowIso(),
      Scope: 'local',
      Driver: body.ConfigOnly ? 'null' : req.driver,
      EnableIPv4: req.enableIPv4,
      EnableIPv6: req.enableIPv6,
      IPAM: { Driver: req.ipamDriver, Options: body.IPAM?.Options ?? null, Config: ipv4First(req.ipamConfig).map((c) => ({ ...c })) },
      Internal: body.Internal === true,
      Attachable: body.Attachable === true,
      Ingress: false,
      ConfigFrom: { Network: req.from?.Name ?? '' },
      ConfigOnly: body.ConfigOnly === true,
      Options: req.options,
      Labels: { ...(body.Labels ?? {}) },
    };
    if (body.ConfigOnly) {
      const rec: NetworkRecord = { ...base, x: { predefined: false } };
      this.d.state.saveNetwork(rec);
      this.d.state.event(rec, 'create');
      return { Id: id, Warning: '' };
    }
    const rec: NetworkRecord = { ...base, x: await this.makeBridge(req, id, cfg) };
    // The IPAM config shows what was chosen: subnets from the pools, gateways filled in.
    const x = rec.x;
    const filled = (entry: IpamConfigEntry | undefined, subnet: string, gateway: string) => {
      if (!entry) return [{ Subnet: subnet, Gateway: gateway }];
      if (!entry.Gateway) rec.IPAM.Config = rec.IPAM.Config.map((c) => (c.Subnet === entry.Subnet ? { ...c, Gateway: gateway } : c));
      return [];
    };
    rec.IPAM.Config = [...filled(req.v4, x.subnet!, x.gateway!), ...rec.IPAM.Config];
    if (x.subnet6) rec.IPAM.Config.push(...filled(req.v6, x.subnet6, x.gateway6!));
    if (x.subnet6 && cfg['ip-forward']) this.d.firewall.enableForwarding6();
    this.d.state.saveNetwork(rec);
    this.d.state.addresses.add(rec);
    bridgeSysctls(rec, cfg, this.d.log);
    try {
      await this.d.firewall.sync();
    } catch (err) {
      await this.removeDevices(rec);
      this.d.state.deleteNetwork(rec);
      throw internal(`programming the firewall for network ${req.name}: ${(err as Error).message}`);
    }
    await this.d.dns.start(rec);
    this.d.state.event(rec, 'create');
    return { Id: id, Warning: '' };
  }

  /** An overlay network: made in the replicated store; shown here once the store's change arrives. */
  private async createOverlay(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }> {
    const control = this.d.overlay?.();
    if (!control) throw unavailable(WORKER_TEXT);
    if (body.Name && this.d.state.networks().some((n) => n.Name === body.Name))
      throw conflict(`network with name ${body.Name} already exists`);
    const { Id } = await control.create(body);
    await this.until(() => Boolean(this.d.state.network(Id)));
    return { Id, Warning: '' };
  }

  /** Waits (up to 10 s) for a change of the replicated store to reach this node's state. */
  private async until(done: () => boolean): Promise<void> {
    for (const deadline = Date.now() + 10_000; !done() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
  }

  /** The new network's bridge, with its subnets chosen (given or from the pools) under the host-wide lock. */
  private async makeBridge(req: CreateRequest, id: string, cfg: DaemonConfig): Promise<NetworkFacts> {
    const opts = bridgeOptions(req.options, id, this.d.state, cfg);
    const ownsBridge = !linkExists(opts.bridgeName);
    if (!ownsBridge && !isBridge(opts.bridgeName)) throw forbidden(`device ${opts.bridgeName} exists and is not a bridge`);
    const given = req.v4;
    return withHostLock(async () => {
      const nets = this.d.state.networks();
      let subnet: Cidr;
      if (given?.Subnet) {
        subnet = parseCidr(given.Subnet);
        checkFreeSubnet(nets, subnet);
      } else {
        const pools: AddressPool[] = cfg['default-address-pools'].length ? cfg['default-address-pools'] : DEFAULT_POOLS;
        const picked = pickSubnet(pools, takenSubnets(nets, hostRoutes()));
        if (!picked) throw forbidden('all predefined address pools have been fully subnetted');
        subnet = picked;
      }
      const gateway = given?.Gateway || formatIPv4(subnet.base + 1);
      const x: NetworkFacts = {
        predefined: false,
        bridge: opts.bridgeName,
        ownsBridge,
        subnet: formatCidr(subnet),
        gateway,
        ...(given?.IPRange ? { range: formatCidr(parseCidr(given.IPRange)) } : {}),
        reserved: Object.values(given?.AuxiliaryAddresses ?? {}),
        userSubnet: Boolean(given?.Subnet),
        mtu: opts.mtu,
        icc: opts.icc,
        masquerade: opts.masquerade,
        hostBindingIpv4: opts.hostBindingIpv4,
        ifPrefix: opts.ifPrefix,
        ...(req.enableIPv6 ? newIPv6Facts(nets, pools6(cfg['default-address-pools'], this.d.ulaSeed), hostRoutes6(), req.v6) : {}),
      };
      const address6 = x.subnet6 ? `${x.gateway6}/${parseCidr6(x.subnet6).bits}` : undefined;
      await ensureBridge({
        name: opts.bridgeName,
        mtu: opts.mtu,
        address: `${gateway}/${subnet.bits}`,
        ...(address6 ? { address6 } : {}),
        ...(ownsBridge ? { alias: linkAlias(this.d.tag) } : {}),
      });
      return x;
    });
  }

  private async removeDevices(n: NetworkRecord): Promise<void> {
    await this.d.dns.stop(n.Id);
    if (n.x.ownsBridge && n.x.bridge) await deleteLinks([n.x.bridge]);
  }
}
