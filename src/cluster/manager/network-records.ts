// Overlay network records and their allocations in the replicated store: a create request's checks,
// the name, VNI and subnet (from the cluster's DefaultAddrPool and SubnetSize) each claimed by an
// etcd create transaction (a key that must not exist, so two managers never hand out the same one),
// addresses on a network, and a removal once the network's endpoints are gone.
import { conflict, forbidden, invalidParameter, notFound, notImplemented } from '../../errors.ts';
import type { OverlayEndpoint, SwarmNetwork } from '../../network/overlay/contract.ts';
import { freeAddresses, inSubnet, parseVniList, pickOverlaySubnet, pickVni } from '../../network/overlay/plan.ts';
import { formatCidr, formatIPv4, isIPv4, overlaps, parseCidr } from '../../network/ipam/ip4.ts';
import type { NetworkCreateBody } from '../../types/networks.ts';
import type { Logger } from '../../util/log.ts';
import type { ClusterRecord } from '../ca/swarm-object.ts';
import { newId } from '../ids.ts';
import type { ClusterStore } from '../store/store.ts';

const VNI_OPTION = 'com.docker.network.driver.overlay.vxlanid_list';
const netKey = (id: string) => `networks/${id}`;
const nameKey = (name: string) => `netalloc/name/${encodeURIComponent(name)}`;
const vniKey = (vni: number) => `netalloc/vni/${vni}`;
const subnetKey = (cidr: string) => `netalloc/subnet/${cidr.replace('/', '_')}`;
export const ipPrefix = (netId: string) => `netalloc/ip/${netId}/`;
export const epPrefix = (netId: string) => `endpoints/${netId}/`;
/** How long a network removal waits for the endpoints of tasks that are leaving (waitForLeavingTasks). */
const LEAVING_WAIT_MS = 30_000;

/** A create request's overlay-specific checks (the common ones ran in the network layer). */
export function checkOverlayBody(body: NetworkCreateBody): void {
  const name = body.Name ?? '';
  if (!name.trim()) throw invalidParameter('invalid name: network name must not be empty');
  if (body.Scope && body.Scope !== 'swarm')
    throw invalidParameter(`invalid scope ${JSON.stringify(body.Scope)} for an overlay network: it is "swarm"`);
  if (Object.keys(body.Options ?? {}).some((k) => k === 'encrypted' || k.endsWith('.encrypted')))
    throw notImplemented('encrypted overlay networks (IPsec between nodes) are not built in this engine');
  if (body.EnableIPv6) throw notImplemented('IPv6 on overlay networks is not built in this engine');
  if (body.ConfigOnly || body.ConfigFrom?.Network) throw notImplemented('config-only overlay networks are not built in this engine');
  if (body.IPAM?.Driver && body.IPAM.Driver !== 'default')
    throw notFound(`could not find plugin ${body.IPAM.Driver} in v1 plugin registry: plugin not found`);
  const v4 = (body.IPAM?.Config ?? []).filter((c) => !c.Subnet || !c.Subnet.includes(':'));
  if (v4.length > 1) throw notImplemented('overlay networks with more than one subnet are not built in this engine');
  const c = v4[0];
  if (c?.Subnet && !/^[0-9.]+\/\d+$/.test(c.Subnet)) throw invalidParameter(`invalid subnet ${c.Subnet}`);
  if (c?.Subnet) parseCidr(c.Subnet);
  if (c?.Gateway && (!isIPv4(c.Gateway) || !c.Subnet || !inSubnet(c.Subnet, c.Gateway)))
    throw invalidParameter(`invalid gateway ${c.Gateway}: it must be an IPv4 address of the subnet`);
  if (body.Options?.[VNI_OPTION]) {
    try {
      parseVniList(body.Options[VNI_OPTION]);
    } catch (err) {
      throw invalidParameter((err as Error).message);
    }
  }
}

export interface NetworkRecordsDeps {
  store: ClusterStore;
  log: Logger;
  cluster: () => Promise<ClusterRecord>;
}

export class NetworkRecords {
  constructor(private readonly d: NetworkRecordsDeps) {}

  async create(body: NetworkCreateBody): Promise<{ Id: string }> {
    checkOverlayBody(body);
    const name = body.Name!;
    const id = newId();
    const undo: string[] = [];
    const claim = async (key: string) => {
      await this.d.store.create(key, { networkId: id });
      undo.push(key);
    };
    try {
      await claim(nameKey(name)).catch((err) => {
        throw err instanceof Error && /already exists/.test(err.message) ? conflict(`network with name ${name} already exists`) : err;
      });
      if (body.Ingress && (await this.d.store.list<SwarmNetwork>('networks/')).some((s) => s.value.Ingress))
        throw forbidden('an ingress network already exists');
      const vni = await this.claimVni(body, claim);
      const cfg = (body.IPAM?.Config ?? [])[0];
      const subnet = await this.claimSubnet(cfg?.Subnet, claim);
      const gateway = cfg?.Gateway || formatIPv4((parseCidr(subnet).base + 1) >>> 0);
      const options = { ...(body.Options ?? {}) };
      delete options[VNI_OPTION];
      const rec: SwarmNetwork = {
        Id: id,
        Name: name,
        Created: new Date().toISOString(),
        Labels: { ...(body.Labels ?? {}) },
        Options: options,
        Attachable: body.Attachable === true,
        Internal: body.Internal === true,
        Ingress: body.Ingress === true,
        subnet,
        gateway,
        ipamOptions: body.IPAM?.Options ?? null,
        vni,
      };
      await this.d.store.create(netKey(id), rec);
      this.d.log.info('overlay network created', { network: name, id, vni, subnet });
      return { Id: id };
    } catch (err) {
      // Best effort: a claim left behind only reserves a name, VNI or subnet until the next create
      // of the same finds it unowned; the create's own error is what the client needs.
      for (const k of undo) await this.d.store.delete(k).catch(() => undefined); // a store that fails now: the create's own error is reported
      throw err;
    }
  }

  private async claimVni(body: NetworkCreateBody, claim: (key: string) => Promise<void>): Promise<number> {
    const given = body.Options?.[VNI_OPTION];
    if (given) {
      const vni = parseVniList(given);
      await claim(vniKey(vni)).catch(() => {
        throw forbidden(`VXLAN ID ${vni} is already in use`);
      });
      return vni;
    }
    for (let attempt = 0; attempt < 10; attempt++) {
      const taken = (await this.d.store.list('netalloc/vni/')).map((s) => Number(s.key.slice('netalloc/vni/'.length)));
      const vni = pickVni(taken);
      if (vni === undefined) throw forbidden('no VXLAN ID is left');
      try {
        await claim(vniKey(vni));
        return vni;
      } catch {
        // another manager took it meanwhile: look again
      }
    }
    throw conflict('could not claim a VXLAN ID: too many concurrent network creations');
  }

  private async claimSubnet(given: string | undefined, claim: (key: string) => Promise<void>): Promise<string> {
    const c = await this.d.cluster();
    for (let attempt = 0; attempt < 10; attempt++) {
      const taken = (await this.d.store.list('netalloc/subnet/')).map((s) => s.key.slice('netalloc/subnet/'.length).replace('_', '/'));
      let subnet: string;
      if (given) {
        subnet = formatCidr(parseCidr(given));
        if (taken.some((t) => overlaps(parseCidr(t), parseCidr(subnet))))
          throw forbidden(`invalid pool request: Pool overlaps with other one on this address space`);
      } else {
        const picked = pickOverlaySubnet(c.DefaultAddrPool, c.SubnetSize, taken);
        if (!picked)
          throw forbidden('could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network');
        subnet = picked;
      }
      try {
        await claim(subnetKey(subnet));
        return subnet;
      } catch (err) {
        if (given) throw forbidden(`invalid pool request: Pool overlaps with other one on this address space`);
        this.d.log.debug('subnet taken meanwhile', { error: (err as Error).message });
      }
    }
    throw conflict('could not claim a subnet: too many concurrent network creations');
  }

  async remove(networkId: string): Promise<void> {
    const n = await this.d.store.get<SwarmNetwork>(netKey(networkId));
    if (!n) throw notFound(`network ${networkId} not found`);
    await this.waitForLeavingTasks(networkId);
    if ((await this.d.store.list(epPrefix(networkId))).length)
      throw forbidden(`error while removing network: network ${n.value.Name} id ${networkId} has active endpoints`);
    await this.d.store.delete(netKey(networkId));
    await this.d.store.deletePrefix(ipPrefix(networkId));
    for (const k of [nameKey(n.value.Name), vniKey(n.value.vni), subnetKey(n.value.subnet)]) await this.d.store.delete(k);
    this.d.log.info('overlay network removed', { network: n.value.Name, id: networkId });
  }

  /**
   * Endpoints of task containers whose task is gone or no longer meant to run (a service just
   * removed, as `docker stack rm` does right before removing the stack's networks) leave as their
   * nodes stop the containers: the removal waits for them (up to LEAVING_WAIT_MS). swarmkit
   * refuses only while a task is meant to run; here the network must be free on every node first.
   */
  private async waitForLeavingTasks(networkId: string): Promise<void> {
    const deadline = Date.now() + LEAVING_WAIT_MS;
    for (;;) {
      const eps = (await this.d.store.list<OverlayEndpoint>(epPrefix(networkId))).map((s) => s.value);
      if (!eps.length || Date.now() > deadline) return;
      for (const ep of eps) {
        const taskId = /\.([0-9a-z]{25})$/.exec(ep.name)?.[1];
        if (ep.vip || !taskId) return; // a service's VIP or a plain container: refused at once
        const t = await this.d.store.get<{ DesiredState?: string }>(`tasks/${taskId}`);
        if (t && t.value.DesiredState === 'running') return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** A cluster-unique IPv4 address on the network (the wanted one if free), claimed in the store. */
export async function claimNetworkAddress(store: ClusterStore, networkId: string, want?: string): Promise<string> {
  const n = await store.get<SwarmNetwork>(netKey(networkId));
  if (!n) throw notFound(`network ${networkId} not found`);
  if (want) {
    if (!isIPv4(want) || !inSubnet(n.value.subnet, want) || want === n.value.gateway)
      throw invalidParameter(`invalid address ${want}: not a host address of the network's subnet ${n.value.subnet}`);
    await store.create(ipPrefix(networkId) + want, { at: new Date().toISOString() }).catch(() => {
      throw forbidden(`Address already in use`);
    });
    return want;
  }
  // Candidates in order: a claim that loses a race moves on to the next free address.
  for (let round = 0; round < 5; round++) {
    const taken = (await store.list(ipPrefix(networkId))).map((s) => s.key.slice(ipPrefix(networkId).length));
    const candidates = freeAddresses(n.value.subnet, n.value.gateway, taken, 256);
    if (!candidates.length) throw forbidden(`no available IPv4 addresses on network ${n.value.Name}`);
    for (const ip of candidates) {
      try {
        await store.create(ipPrefix(networkId) + ip, { at: new Date().toISOString() });
        return ip;
      } catch (err) {
        if (!(err instanceof Error && /already exists/.test(err.message))) throw err;
      }
    }
  }
  throw conflict('could not claim an address: too many concurrent endpoints');
}
