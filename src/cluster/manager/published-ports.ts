// Published ports of the routing mesh (mode ingress) on the manager: a port without a PublishedPort
// gets one from 30000-32767 as dockerd, each ingress port is claimed in the store
// (`portalloc/<proto>/<port>`, by a create transaction) so two services never share one, a port
// the service already held stays across updates, and the claims go with the service. The resolved
// list is the service's Endpoint.Ports. Ports of mode host are not claimed (each task binds its own
// node's port; the scheduler keeps two of them off one node).
import { conflict, invalidParameter } from '../../errors.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import type { ClusterStore } from '../store/store.ts';

export interface PortConfig {
  Name?: string;
  Protocol: 'tcp' | 'udp' | 'sctp';
  TargetPort: number;
  PublishedPort: number;
  PublishMode: 'ingress' | 'host';
}

export const DYNAMIC_FIRST = 30000;
export const DYNAMIC_LAST = 32767;

const portKey = (proto: string, port: number) => `portalloc/${proto}/${port}`;
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The spec's ports with the defaults dockerd fills (tcp, ingress; 0 = none asked). Pure. */
export function specPorts(spec: ClusterObject): PortConfig[] {
  const ports = obj(spec.EndpointSpec).Ports;
  return (Array.isArray(ports) ? ports : []).map((p) => {
    const o = obj(p);
    const proto = o.Protocol === 'udp' || o.Protocol === 'sctp' ? o.Protocol : 'tcp';
    return {
      ...(typeof o.Name === 'string' && o.Name ? { Name: o.Name } : {}),
      Protocol: proto,
      TargetPort: Number(o.TargetPort ?? 0),
      PublishedPort: typeof o.PublishedPort === 'number' ? o.PublishedPort : 0,
      PublishMode: o.PublishMode === 'host' ? 'host' : 'ingress',
    };
  });
}

const isDynamic = (p: number) => p >= DYNAMIC_FIRST && p <= DYNAMIC_LAST;

/**
 * The ports a spec resolves to, given what the service holds (`current`) and the ports taken by
 * others (`taken`, `proto/port`). Returns the list (in the spec's order) and the ports to claim.
 * Pure: the store part is `allocatePorts`.
 */
export function resolvePorts(
  wanted: PortConfig[],
  current: PortConfig[],
  taken: Set<string>,
): { ports: PortConfig[]; claim: PortConfig[] } {
  const seen = new Set<string>();
  const held = new Set(current.filter((p) => p.PublishMode === 'ingress').map((p) => `${p.Protocol}/${p.PublishedPort}`));
  const spare = current.filter((p) => p.PublishMode === 'ingress' && isDynamic(p.PublishedPort));
  const used = new Set<string>();
  // Ports asked for by number first, so a dynamic one never takes a number the spec names.
  for (const p of wanted)
    if (p.PublishMode === 'ingress' && p.PublishedPort > 0) {
      const k = `${p.Protocol}/${p.PublishedPort}`;
      if (used.has(k)) throw invalidParameter(`rpc error: code = InvalidArgument desc = EndpointSpec: duplicate published ports provided`);
      used.add(k);
    }
  const out: PortConfig[] = [];
  const claim: PortConfig[] = [];
  for (const p of wanted) {
    if (p.PublishMode === 'host') {
      out.push(p);
      continue;
    }
    let port = p.PublishedPort;
    if (!port) {
      // Stable across updates: the port this target had before, if the spec did not name it elsewhere.
      const keep = spare.find(
        (c) => c.TargetPort === p.TargetPort && c.Protocol === p.Protocol && !used.has(`${c.Protocol}/${c.PublishedPort}`),
      );
      if (keep) port = keep.PublishedPort;
      else {
        for (let n = DYNAMIC_FIRST; n <= DYNAMIC_LAST && !port; n++) {
          const k = `${p.Protocol}/${n}`;
          if (!used.has(k) && !taken.has(k) && !held.has(k)) port = n;
        }
        if (!port)
          throw invalidParameter('rpc error: code = ResourceExhausted desc = no more dynamic ports available for the routing mesh');
      }
      used.add(`${p.Protocol}/${port}`);
    }
    const r = { ...p, PublishedPort: port };
    out.push(r);
    const k = `${p.Protocol}/${port}`;
    if (!held.has(k) && !seen.has(k)) claim.push(r);
    seen.add(k);
  }
  return { ports: out, claim };
}

interface PortClaim {
  ServiceID: string;
  ServiceName: string;
}

/**
 * Resolves and claims a service's ports; returns the resolved list, the claims made now (freed again
 * if the service write fails) and those of the service no longer used (freed once it succeeded).
 */
export async function allocatePorts(
  store: ClusterStore,
  serviceId: string,
  spec: ClusterObject,
  current: PortConfig[],
): Promise<{ ports: PortConfig[]; claimed: PortConfig[]; unused: PortConfig[] }> {
  const wanted = specPorts(spec);
  for (let attempt = 0; ; attempt++) {
    const taken = new Set(
      (await store.list<PortClaim>('portalloc/'))
        .filter((c) => c.value.ServiceID !== serviceId)
        .map((c) => c.key.slice('portalloc/'.length)),
    );
    const { ports, claim } = resolvePorts(wanted, current, taken);
    const claimed: PortConfig[] = [];
    try {
      for (const p of claim) {
        try {
          await store.create(portKey(p.Protocol, p.PublishedPort), { ServiceID: serviceId, ServiceName: String(spec.Name ?? '') });
        } catch (err) {
          if ((err as { code?: string }).code !== 'CONFLICT') throw err;
          const owner = await store.get<PortClaim>(portKey(p.Protocol, p.PublishedPort));
          if (owner?.value.ServiceID === serviceId) continue; // a claim left by a write that failed late
          throw Object.assign(conflict('taken'), { owner: owner?.value, port: p });
        }
        claimed.push(p);
      }
    } catch (err) {
      await freePorts(store, claimed).catch(() => undefined); // the store failing too: the claim's own error is the one reported
      const e = err as { owner?: PortClaim; port?: PortConfig };
      if (!e.port) throw err;
      // A dynamic port another manager took meanwhile: pick again; a named one is the user's conflict.
      const named = wanted.some(
        (w) => w.PublishMode === 'ingress' && w.Protocol === e.port!.Protocol && w.PublishedPort === e.port!.PublishedPort,
      );
      if (named || attempt >= 5)
        throw invalidParameter(
          `rpc error: code = InvalidArgument desc = port '${e.port.PublishedPort}' is already in use by service '${e.owner?.ServiceName ?? ''}' (${e.owner?.ServiceID ?? ''}) as an ingress port`,
        );
      continue;
    }
    const now = new Set(ports.filter((p) => p.PublishMode === 'ingress').map((p) => `${p.Protocol}/${p.PublishedPort}`));
    const unused = current.filter((p) => p.PublishMode === 'ingress' && !now.has(`${p.Protocol}/${p.PublishedPort}`));
    return { ports, claimed, unused };
  }
}

export async function freePorts(store: ClusterStore, ports: PortConfig[]): Promise<void> {
  for (const p of ports) if (p.PublishMode === 'ingress') await store.delete(portKey(p.Protocol, p.PublishedPort));
}
