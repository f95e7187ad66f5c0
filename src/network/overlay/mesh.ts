// The routing mesh on one node (published ports of mode ingress; IPVS is not available here): the
// node holds an address of its own on the `ingress` overlay network (claimed like an endpoint's and
// published with its bridge's MAC, so tasks on other nodes can answer it over VXLAN); in the
// node's namespace, nat PREROUTING and OUTPUT (to local addresses) DNAT each published port to the
// service's tasks on `ingress` (statistic nth: an even share of new connections per task, local or
// remote), and POSTROUTING SNATs what leaves through the ingress bridge to the node's address, so the
// task replies to this node, which undoes both translations. filter FORWARD lets it through. The
// rules themselves live in the daemon's chains (firewall.ts renders them from what is here).
import { readFile, writeFile } from 'node:fs/promises';
import type { MeshPort, OverlayEndpoint } from './contract.ts';

export interface MeshTarget {
  port: MeshPort;
  backends: string[];
}

/** Each published port with the ingress addresses of its service's tasks. Pure. */
export function meshTargets(vips: OverlayEndpoint[], endpoints: Array<{ names: string[]; ip: string }>): MeshTarget[] {
  const out: MeshTarget[] = [];
  for (const v of vips) {
    const tag = `tasks.${v.name}`.toLowerCase();
    const backends = [...new Set(endpoints.filter((e) => e.names.some((n) => n.toLowerCase() === tag)).map((e) => e.ip))].sort();
    for (const port of v.ports ?? []) out.push({ port, backends });
  }
  return out.sort((a, b) => a.port.published - b.port.published || a.port.proto.localeCompare(b.port.proto));
}

/**
 * Lets the published ports answer on 127.0.0.1 too: the OUTPUT DNAT sends such a connection out
 * through the ingress bridge with source 127.0.0.1 (SNATed to the node's ingress address in
 * POSTROUTING), which the kernel only routes with route_localnet on that interface (as dockerd does
 * on its bridges without the userland proxy). Only this interface: loopback stays martian elsewhere.
 */
export async function allowLocalnet(bridge: string): Promise<void> {
  const path = `/proc/sys/net/ipv4/conf/${bridge}/route_localnet`;
  if ((await readFile(path, 'utf8').catch(() => '')).trim() !== '1') await writeFile(path, '1'); // ENOENT or unreadable: written below
}

/** A MAC for the node's ingress address, from the address (as dockerd's 02:42:…). */
export function meshMac(ip: string): string {
  return ['02', '42', ...ip.split('.').map((o) => Number(o).toString(16).padStart(2, '0'))].join(':');
}
