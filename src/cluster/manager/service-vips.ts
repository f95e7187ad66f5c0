// Service networks on the manager: TaskTemplate.Networks targets resolved to overlay network IDs
// (as dockerd stores them), and a virtual IP per network for services of endpoint mode `vip`,
// claimed from the network's addresses like an endpoint's and published as a `vip` endpoint
// (`endpoints/<network>/vip-<service>`, named after the service) so every node's DNS answers
// `<service>` with it and each node's overlay driver balances it to the tasks (network/overlay/vips.ts).
import { notFound } from '../../errors.ts';
import type { MeshPort, OverlayEndpoint, SwarmNetwork } from '../../network/overlay/contract.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import { claimNetworkAddress, epPrefix, ipPrefix } from './network-records.ts';
import type { PortConfig } from './published-ports.ts';
import type { ClusterStore } from '../store/store.ts';
import { effectiveNetworks } from './service-spec.ts';

/** As dockerd's Endpoint.VirtualIPs: the network and the address with its prefix length. */
export interface VirtualIP {
  NetworkID: string;
  Addr: string;
}

const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The network IDs a spec attaches its tasks to. */
export function specNetworks(spec: ClusterObject): string[] {
  return effectiveNetworks(spec).map((n) => String(obj(n).Target));
}

/** The networks that get a VIP: every service network in mode vip (the default), none in dnsrr. */
export function vipNetworks(spec: ClusterObject): string[] {
  return obj(spec.EndpointSpec).Mode === 'dnsrr' ? [] : specNetworks(spec);
}

/** Published ports of mode ingress (the routing mesh), from the service's resolved ports. */
export function meshPorts(ports: PortConfig[]): MeshPort[] {
  return ports
    .filter((p) => p.PublishMode === 'ingress' && p.PublishedPort > 0)
    .map((p) => ({ proto: p.Protocol, published: p.PublishedPort, target: p.TargetPort }));
}

/** Which VIPs stay, which go and which networks need one. Pure. */
export function planVips(current: VirtualIP[], wanted: string[]): { keep: VirtualIP[]; free: VirtualIP[]; claim: string[] } {
  const want = new Set(wanted);
  const keep = current.filter((v) => want.has(v.NetworkID));
  const have = new Set(keep.map((v) => v.NetworkID));
  return { keep, free: current.filter((v) => !want.has(v.NetworkID)), claim: wanted.filter((id) => !have.has(id)) };
}

/** Targets given by name or ID prefix become network IDs; an unknown one is dockerd's 404. */
export async function resolveNetworkTargets(store: ClusterStore, spec: ClusterObject): Promise<void> {
  // Both lists, each where the client put it (Spec.Networks is the deprecated service-level one).
  const nets = [obj(spec.TaskTemplate).Networks, spec.Networks].flatMap((l) => (Array.isArray(l) ? l : []));
  if (!nets.length) return;
  const all = (await store.list<SwarmNetwork>('networks/')).map((s) => s.value);
  for (const n of nets as Array<Record<string, unknown>>) {
    const ref = String(n.Target);
    const found = all.find((x) => x.Id === ref) ?? all.find((x) => x.Name === ref) ?? all.filter((x) => x.Id.startsWith(ref)).at(0);
    if (!found) throw notFound(`network ${ref} not found`);
    if (found.Ingress) throw notFound(`network ${ref} not found: the ingress network is for published ports only`);
    n.Target = found.Id;
  }
}

const vipEndpointId = (serviceId: string) => `vip-${serviceId}`;

/** Frees VIPs: their endpoints and addresses go from the store. */
export async function freeServiceVips(store: ClusterStore, serviceId: string, vips: VirtualIP[]): Promise<void> {
  for (const v of vips) {
    await store.delete(`${epPrefix(v.NetworkID)}${vipEndpointId(serviceId)}`);
    await store.delete(ipPrefix(v.NetworkID) + v.Addr.split('/')[0]);
  }
}

/**
 * Claims and publishes the VIPs `spec` needs beyond `current`; returns the service's new list, the
 * ones claimed now (to free if the service write fails) and the ones to free once it succeeded.
 */
export async function claimServiceVips(
  store: ClusterStore,
  serviceId: string,
  spec: ClusterObject,
  current: VirtualIP[],
  resolved: PortConfig[],
): Promise<{ vips: VirtualIP[]; claimed: VirtualIP[]; unused: VirtualIP[] }> {
  const ports = meshPorts(resolved);
  let ingress: string | undefined;
  if (ports.length) {
    ingress = (await store.list<SwarmNetwork>('networks/')).find((n) => n.value.Ingress)?.value.Id;
    if (!ingress) throw notFound('network ingress not found: published ports of mode ingress need it');
  }
  const plan = planVips(current, [...vipNetworks(spec), ...(ingress ? [ingress] : [])]);
  const claimed: VirtualIP[] = [];
  try {
    for (const netId of plan.claim) {
      const net = await store.get<SwarmNetwork>(`networks/${netId}`);
      if (!net) throw notFound(`network ${netId} not found`);
      const ip = await claimNetworkAddress(store, netId, undefined);
      claimed.push({ NetworkID: netId, Addr: `${ip}/${net.value.subnet.split('/')[1]}` });
    }
    // Every VIP's endpoint (again): the ports of the ingress one follow the spec.
    for (const v of [...plan.keep, ...claimed]) {
      const ep: OverlayEndpoint = {
        networkId: v.NetworkID,
        endpointId: vipEndpointId(serviceId),
        containerId: '',
        name: String(spec.Name ?? ''),
        aliases: [],
        ip: v.Addr.split('/')[0]!,
        mac: '',
        nodeId: '',
        vtep: '',
        vip: true,
        ...(v.NetworkID === ingress ? { ports } : {}),
      };
      await store.put(`${epPrefix(v.NetworkID)}${ep.endpointId}`, ep);
    }
  } catch (err) {
    await freeServiceVips(store, serviceId, claimed).catch(() => undefined); // the store failing too: the claim's own error is the one reported
    throw err;
  }
  return { vips: [...plan.keep, ...claimed], claimed, unused: plan.free };
}
