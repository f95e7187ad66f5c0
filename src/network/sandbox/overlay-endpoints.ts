// A sandbox's endpoints on overlay networks of cluster mode: before the interface, the devices
// are brought up and a cluster-unique address claimed; once it exists, the endpoint is published
// to the cluster; after it went, unpublished (the devices go with the network's last endpoint).
// Without cluster mode's overlay driver every call is a no-op.
import type { NetContainer } from '../container-contract.ts';
import type { OverlayNetworks } from '../overlay/driver.ts';
import type { ActiveEndpoint, Attachment, ContainerNet, NetworkRecord } from '../records.ts';
import type { NetworkState } from '../state.ts';

export class OverlayEndpoints {
  constructor(
    private readonly state: NetworkState,
    private readonly overlay: OverlayNetworks | undefined,
  ) {}

  /** Whether the network is one of cluster mode's overlay networks. */
  is(net: NetworkRecord | undefined): boolean {
    return this.overlay?.isOverlay(net) === true;
  }

  /** The attachment to allocate on an overlay network (is(net)): devices up, cluster-unique address claimed. */
  prepare(net: NetworkRecord, a: Attachment, containerId: string): Promise<Attachment> {
    return this.overlay!.prepare(net, a, containerId);
  }

  /** Overlay endpoints are announced to the cluster once their interfaces exist. */
  async publish(rec: NetContainer, c: ContainerNet, eps: ActiveEndpoint[]): Promise<void> {
    for (const ep of eps) {
      if (!this.is(this.state.network(ep.networkId))) continue;
      const aliases = c.attachments.find((a) => a.networkId === ep.networkId)?.config.Aliases ?? [];
      await this.overlay!.published(ep, rec.Id, rec.Name.slice(1), aliases);
    }
  }

  /** An endpoint on an overlay network (is(net)) went: unpublished. */
  released(ep: ActiveEndpoint, containerId: string): Promise<void> {
    return this.overlay!.released(ep, containerId);
  }
}
