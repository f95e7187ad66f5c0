// The overlay driver on one node: the cluster's swarm networks shown in the node's network state
// (in memory only: the replicated store is their home), and for each network with a local endpoint
// its devices (devices.ts: a bridge plus a vxlan port whose forwarding entries name every remote
// endpoint). Local endpoints get cluster-unique addresses through OverlayControl and are published
// there; their devices go with the last one. Service VIPs are DNATed in the local containers'
// namespaces (vips.ts); this node's part in the routing mesh is mesh-node.ts's.
import { forbidden, unavailable } from '../../errors.ts';
import type { Logger } from '../../util/log.ts';
import type { NetworkDns } from '../dns/dns-glue.ts';
import type { FirewallSync } from '../firewall/firewall-sync.ts';
import type { ActiveEndpoint, Attachment, NetworkRecord } from '../records.ts';
import type { NetworkState } from '../state.ts';
import type { OverlayControl, OverlayEndpoint, OverlayHost, OverlayNode, SwarmNetwork } from './contract.ts';
import { OverlayDevices } from './devices.ts';
import { MeshNode } from './mesh-node.ts';
import { VipRules, vipRestore, vipTargets } from './vips.ts';
import { OVERLAY_MTU, overlayDevices } from './plan.ts';

export interface OverlayDeps {
  log: Logger;
  state: NetworkState;
  dns: NetworkDns;
  /**
   * The daemon's chains: each swarm network's bridge gets the forwarding rules of a bridge network
   * (the FORWARD policy is DROP on a host whose forwarding the daemon turned on), and the routing
   * mesh its DNAT, SNAT and accepts.
   */
  firewall: Pick<FirewallSync, 'syncOrWarn' | 'setMesh'>;
  /** The cluster's side; undefined while cluster mode is not loaded. */
  control: () => OverlayControl | undefined;
  /** The daemon's tag: its links carry its alias, so a crash's leftovers are found at start-up. */
  tag: string;
}

/** The network record a swarm network shows on this node. */
export function swarmRecord(n: SwarmNetwork): NetworkRecord {
  const dev = overlayDevices(n.Id);
  return {
    Name: n.Name,
    Id: n.Id,
    Created: n.Created,
    Scope: 'swarm',
    Driver: 'overlay',
    EnableIPv4: true,
    EnableIPv6: false,
    IPAM: { Driver: 'default', Options: n.ipamOptions, Config: [{ Subnet: n.subnet, Gateway: n.gateway }] },
    Internal: n.Internal,
    Attachable: n.Attachable,
    Ingress: n.Ingress,
    ConfigFrom: { Network: '' },
    ConfigOnly: false,
    Options: { 'com.docker.network.driver.overlay.vxlanid_list': String(n.vni), ...n.Options },
    Labels: { ...n.Labels },
    x: {
      predefined: false,
      bridge: dev.bridge,
      ownsBridge: true,
      subnet: n.subnet,
      gateway: n.gateway,
      reserved: [],
      userSubnet: true,
      mtu: OVERLAY_MTU,
      icc: true,
      masquerade: true,
      ifPrefix: 'eth',
    },
  };
}

export class OverlayNetworks implements OverlayHost {
  private node: OverlayNode | null = null;
  private readonly nets = new Map<string, SwarmNetwork>();
  /** Remote endpoints by network. */
  private remote = new Map<string, OverlayEndpoint[]>();
  private readonly tasks = new Set<string>();
  /** Service VIPs by network (vip endpoints: no device, no node). */
  private vips = new Map<string, OverlayEndpoint[]>();
  private readonly vipRules = new VipRules();
  private readonly devices: OverlayDevices;
  /** The routing mesh: this node's address on `ingress` (claimed and published) and its rules. */
  private readonly mesh: MeshNode;
  private queue: Promise<unknown> = Promise.resolve();
  /** Closed at shutdown: a late push from the cluster (it stops after networking) brings no device up. */
  private closed = false;

  constructor(private readonly d: OverlayDeps) {
    const remote = (netId: string) => this.remote.get(netId) ?? [];
    this.devices = new OverlayDevices({ log: d.log, dns: d.dns, tag: d.tag, remote });
    const devices = {
      up: (rec: NetworkRecord) => this.upDevices(rec),
      down: (id: string) => this.devices.down(id),
      isUp: (id: string) => this.devices.isUp(id),
    };
    const vips = (netId: string) => this.vips.get(netId) ?? [];
    this.mesh = new MeshNode({ log: d.log, state: d.state, firewall: d.firewall, control: d.control, devices, remote, vips });
  }

  /** Device changes one at a time (pushes from the store and local endpoints interleave). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined); // the failure goes to this call's caller, not the next one
    return run;
  }

  // ---- OverlayHost ---------------------------------------------------------------------------------

  setNetworks(node: OverlayNode | null, networks: SwarmNetwork[], opts: { events?: boolean } = {}): Promise<void> {
    return this.serial(async () => {
      this.node = node;
      if (!node) this.mesh.current = undefined;
      const next = new Map((node ? networks : []).map((n) => [n.Id, n]));
      const changed = next.size !== this.nets.size || [...next.keys()].some((id) => !this.nets.has(id));
      for (const id of [...this.nets.keys()]) {
        if (next.has(id)) continue;
        const rec = this.d.state.network(id);
        await this.devices.down(id);
        if (rec) this.d.state.dropSwarmNetwork(rec);
        if (rec && opts.events) this.d.state.event(rec, 'remove', undefined, 'swarm');
        this.nets.delete(id);
      }
      for (const n of next.values()) {
        if (!this.nets.has(n.Id)) {
          const rec = swarmRecord(n);
          this.d.state.putSwarmNetwork(rec);
          this.d.state.addresses.add(rec);
          if (opts.events) this.d.state.event(rec, 'create', undefined, 'swarm');
        }
        this.nets.set(n.Id, n);
      }
      // The networks' forwarding rules come and go with them (and the mesh's with the node).
      if (!node) await this.mesh.write(undefined);
      if (changed) await this.d.firewall.syncOrWarn();
    });
  }

  setEndpoints(endpoints: OverlayEndpoint[]): Promise<void> {
    return this.serial(async () => {
      if (this.closed) return;
      const self = this.node?.nodeId;
      const by = new Map<string, OverlayEndpoint[]>();
      const vips = new Map<string, OverlayEndpoint[]>();
      for (const e of endpoints) {
        const into = e.vip ? vips : by;
        if (e.vip || e.nodeId !== self) into.set(e.networkId, [...(into.get(e.networkId) ?? []), e]);
      }
      this.remote = by;
      this.vips = vips;
      for (const id of this.devices.upNetworks()) await this.devices.syncPeers(id);
      await this.syncVips();
      await this.mesh
        .sync(
          this.node,
          [...this.nets.values()].find((n) => n.Ingress),
        )
        .catch((err: Error) => this.d.log.warn(`routing mesh: ${err.message}`));
    });
  }

  attachTask(networkRef: string, containerId: string): void {
    this.tasks.add(`${this.d.state.findNetwork(networkRef).Id}|${containerId}`);
  }

  localEndpoints(): string[] {
    const mine = [...this.nets.keys()].flatMap((id) => this.d.state.endpointsOn(id).map((x) => x.ep.endpointId));
    return this.mesh.current ? [...mine, this.mesh.current.endpointId] : mine;
  }

  // ---- the sandboxes' side -----------------------------------------------------------------------

  /** Names and addresses of the network's remote endpoints (the embedded DNS answers them too). */
  remoteNames(netId: string): Array<{ names: string[]; ip: string; containerId: string }> {
    const eps = [...(this.remote.get(netId) ?? []), ...(this.vips.get(netId) ?? [])];
    return eps.map((e) => ({
      names: [e.name, ...e.aliases, e.containerId.slice(0, 12)].filter(Boolean),
      ip: e.ip,
      containerId: e.containerId,
    }));
  }

  /**
   * Before a local endpoint: the container may join (attachable, or a task), the devices are up,
   * and a cluster-unique address is claimed; the attachment returned asks for that address.
   */
  async prepare(net: NetworkRecord, a: Attachment, containerId: string): Promise<Attachment> {
    const control = this.d.control();
    if (!this.node || !control || !this.nets.has(net.Id))
      throw unavailable(`network ${net.Name} is not available: this node is not an active cluster manager`);
    if (!net.Attachable && !this.tasks.has(`${net.Id}|${containerId}`))
      throw forbidden(
        `Could not attach to network ${net.Name}: rpc error: code = PermissionDenied desc = network ${net.Name} not manually attachable`,
      );
    await this.serial(() => this.upDevices(net));
    const ip = await control.claimAddress(net.Id, a.config.IPAMConfig?.IPv4Address);
    return { ...a, config: { ...a.config, IPAMConfig: { ...(a.config.IPAMConfig ?? {}), IPv4Address: ip } } };
  }

  /** After the endpoint's interface exists: published to the cluster. */
  async published(ep: ActiveEndpoint, containerId: string, name: string, aliases: string[]): Promise<void> {
    await this.d
      .control()
      ?.publish({ networkId: ep.networkId, endpointId: ep.endpointId, containerId, name, aliases, ip: ep.ip, mac: ep.mac });
    await this.serial(() => this.syncVips());
  }

  /** A local endpoint went (its address already released locally): unpublished; devices go with the last. */
  async released(ep: ActiveEndpoint, containerId: string): Promise<void> {
    this.tasks.delete(`${ep.networkId}|${containerId}`);
    await this.d
      .control()
      ?.release(ep.networkId, ep.endpointId, ep.ip)
      .catch((err: Error) => this.d.log.warn(`unpublishing overlay endpoint ${ep.ip}: ${err.message}`));
    await this.serial(() => this.syncVips());
    if (this.d.state.endpointsOn(ep.networkId).some((x) => x.ep.endpointId !== ep.endpointId)) return;
    if (this.mesh.current?.netId === ep.networkId) return; // the routing mesh keeps the ingress devices
    await this.serial(() => this.devices.down(ep.networkId));
  }

  isOverlay(net: NetworkRecord | undefined): boolean {
    return net?.Driver === 'overlay' && this.nets.has(net.Id);
  }

  /** Shutdown: every overlay device of this node goes (they are made again with the next endpoint). */
  async close(): Promise<void> {
    this.closed = true;
    await this.serial(async () => {
      await this.mesh.write(undefined);
      for (const id of this.devices.upNetworks()) await this.devices.down(id);
    });
  }

  // ---- service VIPs ------------------------------------------------------------------------------

  /** Every endpoint of an overlay network with its DNS names (local ones from their attachments). */
  private namedEndpoints(netId: string): Array<{ names: string[]; ip: string }> {
    const local = this.d.state.endpointsOn(netId).map(({ c, ep }) => ({
      names: [...(c.attachments.find((a) => a.networkId === netId)?.config.Aliases ?? [])],
      ip: ep.ip,
    }));
    return [...local, ...(this.remote.get(netId) ?? []).map((e) => ({ names: e.aliases, ip: e.ip }))];
  }

  /** Each local container on overlay networks gets the DNAT rules of its networks' VIPs. */
  private async syncVips(): Promise<void> {
    const seen = new Set<string>();
    for (const c of this.d.state.containers()) {
      const nets = (c.sandbox?.endpoints ?? []).map((e) => e.networkId).filter((id) => this.nets.has(id));
      if (!c.sandbox || !nets.length) continue;
      seen.add(c.id);
      const targets = nets.flatMap((id) => vipTargets(this.vips.get(id) ?? [], this.namedEndpoints(id)));
      await this.vipRules
        .apply(c.id, c.sandbox.key, vipRestore(targets))
        .catch((err: Error) => this.d.log.warn(`service VIP rules: ${err.message}`, { id: c.id }));
    }
    this.vipRules.keepOnly(seen);
  }

  // ---- devices -------------------------------------------------------------------------------------

  private async upDevices(net: NetworkRecord): Promise<void> {
    const n = this.nets.get(net.Id);
    if (!n || !this.node || this.closed) return;
    await this.devices.up(net, n, this.node);
  }
}
