// The overlay driver on one node: the cluster's swarm networks shown in the node's network state
// (in memory only: the replicated store is their home), and for each network with a local endpoint
// a Linux bridge holding the gateway address (the embedded DNS listens there) plus a vxlan port
// (VNI of the network, the cluster's data-path port, learning off, proxy ARP), whose forwarding
// database and neighbour entries name every remote endpoint. Local endpoints get cluster-unique
// addresses through OverlayControl and are published there; their devices go with the last one.
import { forbidden, unavailable } from '../../errors.ts';
import { runCommand } from '../../util/helper-shell.ts';
import type { Logger } from '../../util/log.ts';
import type { NetworkDns } from '../dns/dns-glue.ts';
import type { FirewallSync } from '../firewall/firewall-sync.ts';
import { ipBatch, linkExists } from '../host/netlink.ts';
import { linkAlias } from '../naming.ts';
import type { ActiveEndpoint, Attachment, NetworkRecord } from '../records.ts';
import type { NetworkState } from '../state.ts';
import type { OverlayControl, OverlayEndpoint, OverlayHost, OverlayNode, SwarmNetwork } from './contract.ts';
import { allowLocalnet, meshMac, meshTargets } from './mesh.ts';
import { VipRules, vipRestore, vipTargets } from './vips.ts';
import { OVERLAY_MTU, overlayDevices, planPeers, type PeerEntry } from './plan.ts';

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
  /** Peer entries programmed on each network's vxlan device (networks whose devices are up). */
  private readonly peers = new Map<string, PeerEntry[]>();
  private readonly tasks = new Set<string>();
  /** Service VIPs by network (vip endpoints: no device, no node). */
  private vips = new Map<string, OverlayEndpoint[]>();
  private readonly vipRules = new VipRules();
  /** The routing mesh: this node's address on `ingress` (claimed and published) and its rules. */
  private mesh: { netId: string; ip: string; endpointId: string } | undefined;
  /** The mesh rules last handed to the firewall (JSON), so an unchanged push writes nothing. */
  private meshWritten = '';
  private queue: Promise<unknown> = Promise.resolve();
  /** Closed at shutdown: a late push from the cluster (it stops after networking) brings no device up. */
  private closed = false;

  constructor(private readonly d: OverlayDeps) {}

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
      if (!node) this.mesh = undefined;
      const next = new Map((node ? networks : []).map((n) => [n.Id, n]));
      const changed = next.size !== this.nets.size || [...next.keys()].some((id) => !this.nets.has(id));
      for (const id of [...this.nets.keys()]) {
        if (next.has(id)) continue;
        const rec = this.d.state.network(id);
        await this.downDevices(id);
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
      if (!node) await this.writeMesh(undefined);
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
      for (const id of this.peers.keys()) await this.syncPeers(id);
      await this.syncVips();
      await this.syncMesh().catch((err: Error) => this.d.log.warn(`routing mesh: ${err.message}`));
    });
  }

  attachTask(networkRef: string, containerId: string): void {
    this.tasks.add(`${this.d.state.findNetwork(networkRef).Id}|${containerId}`);
  }

  localEndpoints(): string[] {
    const mine = [...this.nets.keys()].flatMap((id) => this.d.state.endpointsOn(id).map((x) => x.ep.endpointId));
    return this.mesh ? [...mine, this.mesh.endpointId] : mine;
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
    if (this.mesh?.netId === ep.networkId) return; // the routing mesh keeps the ingress devices
    await this.serial(() => this.downDevices(ep.networkId));
  }

  isOverlay(net: NetworkRecord | undefined): boolean {
    return net?.Driver === 'overlay' && this.nets.has(net.Id);
  }

  /** Shutdown: every overlay device of this node goes (they are made again with the next endpoint). */
  async close(): Promise<void> {
    this.closed = true;
    await this.serial(async () => {
      await this.writeMesh(undefined);
      for (const id of [...this.peers.keys()]) await this.downDevices(id);
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

  // ---- routing mesh ------------------------------------------------------------------------------

  /** With published ports of mode ingress in the cluster: this node's address, devices and rules. */
  private async syncMesh(): Promise<void> {
    const ingress = [...this.nets.values()].find((n) => n.Ingress);
    const vips = ingress ? (this.vips.get(ingress.Id) ?? []).filter((v) => v.ports?.length) : [];
    const control = this.d.control();
    if (!ingress || !this.node || !control) return;
    if (!vips.length && !this.mesh) return;
    const rec = this.d.state.network(ingress.Id);
    if (!rec) return;
    const dev = overlayDevices(ingress.Id);
    if (!this.mesh) {
      const ip = await control.claimAddress(ingress.Id);
      const mesh = { netId: ingress.Id, ip, endpointId: `ingress-${this.node.nodeId}` };
      const mac = meshMac(ip);
      try {
        await this.upDevices(rec);
        await ipBatch([`link set ${dev.bridge} address ${mac}`, `addr add ${ip}/${ingress.subnet.split('/')[1]} dev ${dev.bridge}`]);
        const name = `ingress-endpoint-${this.node.nodeId.slice(0, 12)}`;
        await control.publish({ networkId: ingress.Id, endpointId: mesh.endpointId, containerId: '', name, aliases: [], ip, mac });
      } catch (err) {
        // Tried again from the start with the next push; the devices go with their last endpoint.
        await control.release(ingress.Id, mesh.endpointId, ip).catch(() => undefined); // never published: nothing to undo
        if (!this.d.state.endpointsOn(ingress.Id).length) await this.downDevices(ingress.Id);
        throw err;
      }
      this.mesh = mesh;
      this.d.log.info('routing mesh: this node on the ingress network', { ip });
    } else if (!this.peers.has(ingress.Id) || !linkExists(dev.bridge)) {
      await this.upDevices(rec);
    }
    const remote = (this.remote.get(ingress.Id) ?? []).map((e) => ({ names: e.aliases, ip: e.ip }));
    const local = this.d.state.endpointsOn(ingress.Id).map(({ c, ep }) => ({
      names: [...(c.attachments.find((a) => a.networkId === ingress.Id)?.config.Aliases ?? [])],
      ip: ep.ip,
    }));
    await allowLocalnet(dev.bridge);
    const targets = meshTargets(vips, [...local, ...remote]).map((t) => ({ ...t.port, backends: t.backends }));
    await this.writeMesh({ bridge: dev.bridge, nodeIp: this.mesh.ip, targets });
  }

  /** Hands the mesh's rules to the daemon's chains when they changed. */
  private async writeMesh(mesh: Parameters<FirewallSync['setMesh']>[0]): Promise<void> {
    const text = mesh ? JSON.stringify(mesh) : '';
    if (text === this.meshWritten) return;
    this.d.firewall.setMesh(mesh);
    this.meshWritten = text;
    await this.d.firewall.syncOrWarn();
  }

  // ---- devices -------------------------------------------------------------------------------------

  private async upDevices(net: NetworkRecord): Promise<void> {
    const n = this.nets.get(net.Id);
    if (!n || !this.node || this.closed) return;
    const dev = overlayDevices(n.Id);
    if (!this.peers.has(n.Id) || !linkExists(dev.vxlan)) {
      const bits = n.subnet.split('/')[1];
      const alias = linkAlias(this.d.tag);
      const lines = linkExists(dev.bridge)
        ? []
        : [
            `link add ${dev.bridge} mtu ${OVERLAY_MTU} type bridge`,
            `link set ${dev.bridge} alias ${alias}`,
            `addr add ${n.gateway}/${bits} dev ${dev.bridge}`,
          ];
      if (!linkExists(dev.vxlan))
        lines.push(
          `link add ${dev.vxlan} mtu ${OVERLAY_MTU} type vxlan id ${n.vni} dstport ${this.node.port} local ${this.node.vtep} nolearning proxy`,
          `link set ${dev.vxlan} alias ${alias}`,
          `link set ${dev.vxlan} master ${dev.bridge}`,
        );
      lines.push(`link set ${dev.vxlan} up`, `link set ${dev.bridge} up`);
      await ipBatch(lines);
      this.peers.set(n.Id, []);
      this.d.log.info('overlay devices up', { network: n.Name, vni: n.vni, vtep: this.node.vtep });
    }
    await this.d.dns.start(net);
    await this.syncPeers(n.Id);
  }

  private async downDevices(netId: string): Promise<void> {
    if (!this.peers.has(netId)) return;
    this.peers.delete(netId);
    await this.d.dns.stop(netId);
    const dev = overlayDevices(netId);
    const lines = [dev.vxlan, dev.bridge].filter(linkExists).map((l) => `link del ${l}`);
    await ipBatch(lines).catch((err: Error) => this.d.log.warn(`removing overlay devices: ${err.message}`));
  }

  /** The vxlan device's fdb and neighbour entries follow the remote endpoints. */
  private async syncPeers(netId: string): Promise<void> {
    const have = this.peers.get(netId);
    if (!have) return;
    const want = (this.remote.get(netId) ?? []).map((e) => ({ ip: e.ip, mac: e.mac, vtep: e.vtep }));
    const plan = planPeers(overlayDevices(netId).vxlan, have, want);
    if (!plan.bridge.length) return;
    try {
      // Deletions of entries the kernel already dropped fail alone: -force goes on past them.
      await runCommand('bridge', ['-force', '-batch', '-'], { input: plan.bridge.join('\n') + '\n' }).catch((e: Error) =>
        this.d.log.debug(`bridge fdb: ${e.message}`),
      );
      await runCommand('ip', ['-force', '-batch', '-'], { input: plan.ip.join('\n') + '\n' }).catch((e: Error) =>
        this.d.log.debug(`ip neigh: ${e.message}`),
      );
      this.peers.set(netId, want);
    } catch (err) {
      this.d.log.warn(`programming overlay peers: ${(err as Error).message}`);
    }
  }
}
