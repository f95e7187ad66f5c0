// An overlay network's devices on this node: a Linux bridge holding the gateway address (the
// embedded DNS listens there) plus a vxlan port (VNI of the network, the cluster's data-path port,
// learning off, proxy ARP) whose forwarding database and neighbour entries follow the network's
// remote endpoints. Made on the first local endpoint (or the routing mesh), removed after the last.
import { runCommand } from '../../util/helper-shell.ts';
import type { Logger } from '../../util/log.ts';
import type { NetworkDns } from '../dns/dns-glue.ts';
import { ipBatch, linkExists } from '../host/netlink.ts';
import { linkAlias } from '../naming.ts';
import type { NetworkRecord } from '../records.ts';
import type { OverlayEndpoint, OverlayNode, SwarmNetwork } from './contract.ts';
import { OVERLAY_MTU, overlayDevices, planPeers, type PeerEntry } from './plan.ts';

export interface OverlayDevicesDeps {
  log: Logger;
  dns: NetworkDns;
  /** The daemon's tag: its links carry its alias, so a crash's leftovers are found at start-up. */
  tag: string;
  /** The remote endpoints of a network (their VTEPs, addresses and MACs). */
  remote: (netId: string) => OverlayEndpoint[];
}

export class OverlayDevices {
  /** Peer entries programmed on each network's vxlan device (networks whose devices are up). */
  private readonly peers = new Map<string, PeerEntry[]>();

  constructor(private readonly d: OverlayDevicesDeps) {}

  /** Whether the network's devices were brought up (and not taken down since). */
  isUp(netId: string): boolean {
    return this.peers.has(netId);
  }

  /** The networks whose devices are up. */
  upNetworks(): string[] {
    return [...this.peers.keys()];
  }

  /** Brings the network's bridge and vxlan port up (again, if one went), its DNS and its peers. */
  async up(net: NetworkRecord, n: SwarmNetwork, node: OverlayNode): Promise<void> {
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
          `link add ${dev.vxlan} mtu ${OVERLAY_MTU} type vxlan id ${n.vni} dstport ${node.port} local ${node.vtep} nolearning proxy`,
          `link set ${dev.vxlan} alias ${alias}`,
          `link set ${dev.vxlan} master ${dev.bridge}`,
        );
      lines.push(`link set ${dev.vxlan} up`, `link set ${dev.bridge} up`);
      await ipBatch(lines);
      this.peers.set(n.Id, []);
      this.d.log.info('overlay devices up', { network: n.Name, vni: n.vni, vtep: node.vtep });
    }
    await this.d.dns.start(net);
    await this.syncPeers(n.Id);
  }

  async down(netId: string): Promise<void> {
    if (!this.peers.has(netId)) return;
    this.peers.delete(netId);
    await this.d.dns.stop(netId);
    const dev = overlayDevices(netId);
    const lines = [dev.vxlan, dev.bridge].filter(linkExists).map((l) => `link del ${l}`);
    await ipBatch(lines).catch((err: Error) => this.d.log.warn(`removing overlay devices: ${err.message}`));
  }

  /** The vxlan device's fdb and neighbour entries follow the remote endpoints. */
  async syncPeers(netId: string): Promise<void> {
    const have = this.peers.get(netId);
    if (!have) return;
    const want = this.d.remote(netId).map((e) => ({ ip: e.ip, mac: e.mac, vtep: e.vtep }));
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
