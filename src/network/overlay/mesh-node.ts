// This node's part in the routing mesh: once the cluster has published ports of mode ingress, the
// node claims and publishes an address of its own on the `ingress` network (with its bridge's MAC),
// keeps the ingress devices up, and hands the mesh's rules (DNAT to the tasks, SNAT to its address)
// to the daemon's chains whenever they change. Targets are computed by mesh.ts.
import type { Logger } from '../../util/log.ts';
import type { FirewallSync } from '../firewall/firewall-sync.ts';
import { ipBatch, linkExists } from '../host/netlink.ts';
import type { NetworkRecord } from '../records.ts';
import type { NetworkState } from '../state.ts';
import type { OverlayControl, OverlayEndpoint, OverlayNode, SwarmNetwork } from './contract.ts';
import { allowLocalnet, meshMac, meshTargets } from './mesh.ts';
import { overlayDevices } from './plan.ts';

/** The ingress network's devices, as the overlay driver brings them up and down. */
export interface MeshDevices {
  up(rec: NetworkRecord): Promise<void>;
  down(netId: string): Promise<void>;
  isUp(netId: string): boolean;
}

export interface MeshNodeDeps {
  log: Logger;
  state: NetworkState;
  firewall: Pick<FirewallSync, 'syncOrWarn' | 'setMesh'>;
  control: () => OverlayControl | undefined;
  devices: MeshDevices;
  /** A network's remote endpoints and service VIPs, as last pushed by the cluster. */
  remote: (netId: string) => OverlayEndpoint[];
  vips: (netId: string) => OverlayEndpoint[];
}

export class MeshNode {
  /** This node's address on `ingress` (claimed and published), once the mesh is in use. */
  current: { netId: string; ip: string; endpointId: string } | undefined;
  /** The mesh rules last handed to the firewall (JSON), so an unchanged push writes nothing. */
  private written = '';

  constructor(private readonly d: MeshNodeDeps) {}

  /** With published ports of mode ingress in the cluster: this node's address, devices and rules. */
  async sync(node: OverlayNode | null, ingress: SwarmNetwork | undefined): Promise<void> {
    const vips = ingress ? this.d.vips(ingress.Id).filter((v) => v.ports?.length) : [];
    const control = this.d.control();
    if (!ingress || !node || !control) return;
    if (!vips.length && !this.current) return;
    const rec = this.d.state.network(ingress.Id);
    if (!rec) return;
    const dev = overlayDevices(ingress.Id);
    if (!this.current) {
      const ip = await control.claimAddress(ingress.Id);
      const mesh = { netId: ingress.Id, ip, endpointId: `ingress-${node.nodeId}` };
      const mac = meshMac(ip);
      try {
        await this.d.devices.up(rec);
        await ipBatch([`link set ${dev.bridge} address ${mac}`, `addr add ${ip}/${ingress.subnet.split('/')[1]} dev ${dev.bridge}`]);
        const name = `ingress-endpoint-${node.nodeId.slice(0, 12)}`;
        await control.publish({ networkId: ingress.Id, endpointId: mesh.endpointId, containerId: '', name, aliases: [], ip, mac });
      } catch (err) {
        // Tried again from the start with the next push; the devices go with their last endpoint.
        await control
          .release(ingress.Id, mesh.endpointId, ip)
          .catch((e: Error) => this.d.log.debug(`routing mesh: releasing ${ip}: ${e.message}`));
        if (!this.d.state.endpointsOn(ingress.Id).length) await this.d.devices.down(ingress.Id);
        throw err;
      }
      this.current = mesh;
      this.d.log.info('routing mesh: this node on the ingress network', { ip });
    } else if (!this.d.devices.isUp(ingress.Id) || !linkExists(dev.bridge)) {
      await this.d.devices.up(rec);
    }
    const remote = this.d.remote(ingress.Id).map((e) => ({ names: e.aliases, ip: e.ip }));
    const local = this.d.state.endpointsOn(ingress.Id).map(({ c, ep }) => ({
      names: [...(c.attachments.find((a) => a.networkId === ingress.Id)?.config.Aliases ?? [])],
      ip: ep.ip,
    }));
    await allowLocalnet(dev.bridge);
    const targets = meshTargets(vips, [...local, ...remote]).map((t) => ({ ...t.port, backends: t.backends }));
    await this.write({ bridge: dev.bridge, nodeIp: this.current.ip, targets });
  }

  /** Hands the mesh's rules to the daemon's chains when they changed (undefined: none). */
  async write(mesh: Parameters<FirewallSync['setMesh']>[0]): Promise<void> {
    const text = mesh ? JSON.stringify(mesh) : '';
    if (text === this.written) return;
    this.d.firewall.setMesh(mesh);
    this.written = text;
    await this.d.firewall.syncOrWarn();
  }
}
