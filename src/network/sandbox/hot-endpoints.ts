// Hot connect and disconnect of a running container (under its lock, held by the caller): a new
// interface in the running sandbox, undone if any step fails; an interface removed, the default
// route and the published ports moving to the next best network when it carried them. The
// container's /etc/hosts follows both, as dockerd's does.
import type { Logger } from '../../util/log.ts';
import type { NetContainer } from '../container-contract.ts';
import type { FirewallSync } from '../firewall/firewall-sync.ts';
import { addInterfaces, deleteLinks, setDefaultRoute, type HostIp } from '../host/netlink.ts';
import type { PortPublisher } from '../ports/port-publisher.ts';
import type { Attachment, ContainerNet, NetworkRecord } from '../records.ts';
import type { NetworkState } from '../state.ts';
import { ownHostsLine, updateHostsEntries } from './etc-files.ts';
import { chooseGateway, setupError, vethPlan } from './endpoint-plan.ts';
import type { OverlayEndpoints } from './overlay-endpoints.ts';

export interface HotEndpointsDeps {
  log: Logger;
  state: NetworkState;
  ports: PortPublisher;
  firewall: FirewallSync;
  overlay: OverlayEndpoints;
  /** The long-lived `ip` processes of the sandbox service: one attaches veths, one deletes them. */
  attachIp: HostIp;
  deleteIp: HostIp;
  /** Whether veths get hairpin mode (no userland proxy). */
  hairpin: () => boolean;
}

export class HotEndpoints {
  constructor(private readonly d: HotEndpointsDeps) {}

  /** A hot connect (under the container's lock): a new interface in the running sandbox; undone if it fails. */
  async addEndpoint(rec: NetContainer, c: ContainerNet, net: NetworkRecord, attachment: Attachment): Promise<void> {
    const sb = c.sandbox!;
    const used = new Set(sb.endpoints.map((e) => e.ifname));
    const prefix = net.x.ifPrefix ?? 'eth';
    let i = 0;
    while (used.has(`${prefix}${i}`)) i++;
    const att = this.d.overlay.is(net) ? await this.d.overlay.prepare(net, attachment, rec.Id) : attachment;
    const ep = this.d.state.addresses.allocate(net, att, `${prefix}${i}`);
    const becomesGateway = !sb.gatewayNetworkId && !net.Internal;
    try {
      sb.endpoints.push(ep);
      c.attachments.push(attachment);
      if (becomesGateway) sb.gatewayNetworkId = net.Id;
      this.d.state.persist(c);
      await addInterfaces(sb.key, [vethPlan(ep, net, becomesGateway, this.d.hairpin())], this.d.attachIp);
      await this.d.overlay.publish(rec, c, [ep]);
      await this.updateHosts(rec, { add: [ep.ip, ...(ep.ip6 ? [ep.ip6] : [])] });
      this.d.state.event(net, 'connect', rec.Id);
    } catch (err) {
      sb.endpoints = sb.endpoints.filter((e) => e !== ep);
      c.attachments = c.attachments.filter((a) => a !== attachment);
      if (becomesGateway) delete sb.gatewayNetworkId;
      this.d.state.addresses.release(ep);
      this.d.state.persist(c);
      if (this.d.overlay.is(net)) await this.d.overlay.released(ep, rec.Id);
      await deleteLinks([ep.hostIf], this.d.deleteIp);
      throw setupError(err, rec, sb);
    }
  }

  /**
   * A hot disconnect (under the container's lock; the attachment is already gone from `c`): the
   * interface goes; when it carried the default route, the route and the published ports move to
   * the next best network, if any.
   */
  async removeEndpoint(rec: NetContainer, c: ContainerNet, net: NetworkRecord): Promise<void> {
    const sb = c.sandbox;
    const ep = sb?.endpoints.find((e) => e.networkId === net.Id);
    if (!sb || !ep) return;
    sb.endpoints = sb.endpoints.filter((e) => e !== ep);
    this.d.state.addresses.release(ep);
    await deleteLinks([ep.hostIf], this.d.deleteIp);
    if (this.d.overlay.is(net)) await this.d.overlay.released(ep, rec.Id);
    await this.updateHosts(rec, { remove: [ep.ip, ...(ep.ip6 ? [ep.ip6] : [])] });
    this.d.state.event(net, 'disconnect', rec.Id);
    if (sb.gatewayNetworkId !== net.Id) return;
    const priority = (netId: string) => c.attachments.find((a) => a.networkId === netId)?.config.GwPriority ?? 0;
    const next = chooseGateway(
      sb.endpoints.map((e) => ({ net: this.d.state.network(e.networkId)!, priority: priority(e.networkId) })).filter((x) => x.net),
    );
    const nextEp = next ? sb.endpoints.find((e) => e.networkId === next.Id) : undefined;
    if (next) sb.gatewayNetworkId = next.Id;
    else delete sb.gatewayNetworkId;
    await setDefaultRoute(
      sb.key,
      nextEp ? { gateway: nextEp.gateway, ...(nextEp.gateway6 ? { gateway6: nextEp.gateway6 } : {}), ifname: nextEp.ifname } : undefined,
    );
    await this.d.ports.close(rec.Id);
    this.d.ports.release(rec.Id);
    const hadPorts = sb.ports.length > 0;
    sb.ports = [];
    if (next)
      await this.d.ports
        .publish(rec, c, next)
        .catch((err) => this.d.log.warn(`republishing ports: ${(err as Error).message}`, { id: rec.Id }));
    else if (hadPorts) await this.d.firewall.syncOrWarn();
  }

  /** A running container's /etc/hosts follows hot connects and disconnects (as dockerd's). */
  private async updateHosts(rec: NetContainer, change: { add?: string[]; remove?: string[] }): Promise<void> {
    if (!rec.HostsPath) return;
    const line = (ip: string) => ownHostsLine(ip, rec.Config.Hostname ?? rec.Id.slice(0, 12), rec.Config.Domainname ?? '');
    await updateHostsEntries(rec.HostsPath, { add: (change.add ?? []).map(line), removeIps: change.remove ?? [] }).catch((err) =>
      this.d.log.warn(`updating /etc/hosts: ${(err as Error).message}`, { id: rec.Id }),
    );
  }
}
