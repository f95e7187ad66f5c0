// The routing mesh on one node (published ports of mode ingress; IPVS is not available here): the
// node holds an address of its own on the `ingress` overlay network (claimed like an endpoint's and
// published with its bridge's MAC, so tasks on other nodes can answer it over VXLAN); in the
// node's namespace, nat PREROUTING and OUTPUT (to local addresses) DNAT each published port to the
// service's tasks on `ingress` (statistic nth: an even share of new connections per task, local or
// remote), and POSTROUTING SNATs what leaves through the ingress bridge to the node's address, so the
// task replies to this node, which undoes both translations. filter FORWARD lets it through.
import { readFile, writeFile } from 'node:fs/promises';
import { runCommand } from '../../util/helper-shell.ts';
import type { MeshPort, OverlayEndpoint } from './contract.ts';

export const MESH_CHAIN = 'ENGINE-MESH';
export const MESH_POST = 'ENGINE-MESH-POST';
export const MESH_FWD = 'ENGINE-MESH-FWD';

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

/** The iptables-restore input (--noflush) for the node's namespace: both tables' chains replaced. */
export function meshRestore(targets: MeshTarget[], bridge: string, nodeIp: string): string {
  const nat = ['*nat', `:${MESH_CHAIN} - [0:0]`, `:${MESH_POST} - [0:0]`];
  for (const { port, backends } of targets) {
    const k = backends.length;
    backends.forEach((ip, i) => {
      const nth = i < k - 1 ? ` -m statistic --mode nth --every ${k - i} --packet 0` : '';
      nat.push(`-A ${MESH_CHAIN} -p ${port.proto} --dport ${port.published}${nth} -j DNAT --to-destination ${ip}:${port.target}`);
    });
  }
  if (targets.length) nat.push(`-A ${MESH_POST} -o ${bridge} -m conntrack --ctstate DNAT -j SNAT --to-source ${nodeIp}`);
  const filter = ['*filter', `:${MESH_FWD} - [0:0]`];
  if (targets.length)
    filter.push(
      `-A ${MESH_FWD} -o ${bridge} -m conntrack --ctstate DNAT -j ACCEPT`,
      `-A ${MESH_FWD} -i ${bridge} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    );
  return [...nat, 'COMMIT', ...filter, 'COMMIT', ''].join('\n');
}

/**
 * Lets the published ports answer on 127.0.0.1 too: the OUTPUT DNAT sends such a connection out
 * through the ingress bridge with source 127.0.0.1 (SNATed to the node's ingress address in
 * POSTROUTING), which the kernel only routes with route_localnet on that interface (as dockerd does
 * on its bridges without the userland proxy). Only this interface: loopback stays martian elsewhere.
 */
export async function allowLocalnet(bridge: string): Promise<void> {
  const path = `/proc/sys/net/ipv4/conf/${bridge}/route_localnet`;
  if ((await readFile(path, 'utf8').catch(() => '')).trim() !== '1') await writeFile(path, '1');
}

/** A MAC for the node's ingress address, from the address (as dockerd's 02:42:…). */
export function meshMac(ip: string): string {
  return ['02', '42', ...ip.split('.').map((o) => Number(o).toString(16).padStart(2, '0'))].join(':');
}

const JUMPS: Array<[table: string, chain: string, rule: string[]]> = [
  ['nat', 'PREROUTING', ['-m', 'addrtype', '--dst-type', 'LOCAL', '-j', MESH_CHAIN]],
  ['nat', 'OUTPUT', ['-m', 'addrtype', '--dst-type', 'LOCAL', '-j', MESH_CHAIN]],
  ['nat', 'POSTROUTING', ['-j', MESH_POST]],
  ['filter', 'FORWARD', ['-j', MESH_FWD]],
];

/** Writes the rules into the node's own namespace (the chains made and jumped to the first time). */
export class MeshRules {
  private applied: string | undefined;

  async apply(text: string): Promise<void> {
    if (this.applied === text) return;
    if (this.applied === undefined) {
      for (const [table, chain, rule] of JUMPS) {
        await runCommand('iptables', ['-w', '-t', table, '-N', rule.at(-1)!]).catch(() => undefined); // exists already
        await runCommand('iptables', ['-w', '-t', table, '-C', chain, ...rule]).catch(() =>
          runCommand('iptables', ['-w', '-t', table, '-I', chain, ...rule]),
        );
      }
    }
    await runCommand('iptables-restore', ['-w', '--noflush'], { input: text });
    this.applied = text;
  }

  /** The node left the cluster or shuts down: jumps and chains go. */
  async clear(): Promise<void> {
    if (this.applied === undefined) return;
    this.applied = undefined;
    for (const [table, chain, rule] of JUMPS) {
      await runCommand('iptables', ['-w', '-t', table, '-D', chain, ...rule]).catch(() => undefined); // already gone
      await runCommand('iptables', ['-w', '-t', table, '-F', rule.at(-1)!]).catch(() => undefined);
      await runCommand('iptables', ['-w', '-t', table, '-X', rule.at(-1)!]).catch(() => undefined);
    }
  }
}
