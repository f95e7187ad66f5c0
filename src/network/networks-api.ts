// The /networks API backend: list, inspect, create (a local network's bridge, subnets, firewall
// and DNS by local-networks.ts; an overlay network in the replicated store), remove, prune, connect
// and disconnect (checked here, carried out on the sandbox by sandboxes.ts). Network creation and
// removal are serialised.
import type { DaemonConfig } from '../config/daemon-config.ts';
import { conflict, forbidden, invalidParameter, notFound, unavailable } from '../errors.ts';
import type { NetworkConnectBody, NetworkCreateBody, NetworkDisconnectBody } from '../types/networks.ts';
import type { NetworkContainer, NetworkCreateResponse } from '../types/api/index.ts';
import type { Logger } from '../util/log.ts';
import { KeyedMutex } from '../util/mutex.ts';
import { validateEndpoint } from './attachments.ts';
import type { ContainerLookup, NetContainer } from './container-contract.ts';
import type { NetworkDns } from './dns/dns-glue.ts';
import { compileListFilters, compilePruneFilters } from './filters.ts';
import type { FirewallSync } from './firewall/firewall-sync.ts';
import { LocalNetworks } from './local-networks.ts';
import type { Attachment, NetworkRecord } from './records.ts';
import type { OverlayControl } from './overlay/contract.ts';
import type { SandboxService } from './sandbox/sandboxes.ts';
import type { NetworkState } from './state.ts';
import { networkInspect, type NetworkInspectView } from './views.ts';

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
  /** Local networks' records and devices. */
  private readonly local: LocalNetworks;

  constructor(private readonly d: NetworksApiDeps) {
    this.local = new LocalNetworks({ log: d.log, state: d.state, firewall: d.firewall, dns: d.dns, tag: d.tag, ulaSeed: d.ulaSeed });
  }

  list(filters: Map<string, string[]>): NetworkInspectView[] {
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

  async create(body: NetworkCreateBody): Promise<NetworkCreateResponse> {
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
      await this.local.removeDevices(n);
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
      return undefined; // not found: the container went (its endpoint is being released); shown without a name, as dockerd does
    }
  }

  private async createLocked(body: NetworkCreateBody): Promise<NetworkCreateResponse> {
    const cfg = this.d.config();
    // On a cluster manager dockerd would create it; outside a cluster parseCreateRequest says why not.
    if (body.Driver === 'overlay' && this.d.clusterManager?.()) return this.createOverlay(body);
    if (body.Driver === 'overlay' && this.d.overlay?.()) throw unavailable(WORKER_TEXT);
    return this.local.create(body, cfg);
  }

  /** An overlay network: made in the replicated store; shown here once the store's change arrives. */
  private async createOverlay(body: NetworkCreateBody): Promise<NetworkCreateResponse> {
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
}
