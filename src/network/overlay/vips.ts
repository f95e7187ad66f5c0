// Service VIPs on one node (IPVS is not available in these kernels): in the network namespace of
// every local container on an overlay network, nat OUTPUT jumps to a chain ENGINE-VIP that DNATs
// each VIP of its networks to the service's tasks, one new connection in turn per task (statistic
// --mode nth). The DNAT is on the client's side on purpose: the reply comes back to the namespace
// that translated, so conntrack undoes it whatever node the task runs on (a DNAT on the overlay
// bridge would see the task answer the client directly, around the translation).
import { runCommand } from '../../util/helper-shell.ts';
import type { OverlayEndpoint } from './contract.ts';

export const VIP_CHAIN = 'ENGINE-VIP';

export interface VipTarget {
  vip: string;
  /** Task addresses, sorted (the rule order is stable while the tasks are). */
  backends: string[];
}

/** Each VIP with the addresses of the endpoints named `tasks.<service>` on its network. Pure. */
export function vipTargets(vips: OverlayEndpoint[], endpoints: Array<{ names: string[]; ip: string }>): VipTarget[] {
  return vips
    .map((v) => {
      const tag = `tasks.${v.name}`.toLowerCase();
      const backends = endpoints.filter((e) => e.names.some((n) => n.toLowerCase() === tag)).map((e) => e.ip);
      return { vip: v.ip, backends: [...new Set(backends)].sort() };
    })
    .sort((a, b) => (a.vip < b.vip ? -1 : a.vip > b.vip ? 1 : 0));
}

/**
 * The iptables-restore input (used with --noflush) that replaces the chain's rules: of k tasks,
 * rule i takes every (k-i)th new connection it sees, the last takes the rest — an even share each.
 * A VIP without tasks gets no rule (its connections find no host, as dockerd's do).
 */
export function vipRestore(targets: VipTarget[]): string {
  const lines = ['*nat', `:${VIP_CHAIN} - [0:0]`];
  for (const t of targets) {
    const k = t.backends.length;
    t.backends.forEach((ip, i) => {
      const nth = i < k - 1 ? ` -m statistic --mode nth --every ${k - i} --packet 0` : '';
      lines.push(`-A ${VIP_CHAIN} -d ${t.vip}/32 -p all${nth} -j DNAT --to-destination ${ip}`);
    });
  }
  lines.push('COMMIT', '');
  return lines.join('\n');
}

/** Applies rule sets to containers' namespaces, skipping those unchanged since the last time. */
export class VipRules {
  private readonly applied = new Map<string, string>();

  async apply(containerId: string, netns: string, text: string): Promise<void> {
    if (this.applied.get(containerId) === text) return;
    const ns = `--net=${netns}`;
    if (!this.applied.has(containerId)) {
      await runCommand('nsenter', [ns, 'iptables', '-w', '-t', 'nat', '-N', VIP_CHAIN]).catch(() => undefined); // iptables -N fails when the chain exists already (an earlier apply); -C below checks the jump
      await runCommand('nsenter', [ns, 'iptables', '-w', '-t', 'nat', '-C', 'OUTPUT', '-j', VIP_CHAIN]).catch(() =>
        runCommand('nsenter', [ns, 'iptables', '-w', '-t', 'nat', '-A', 'OUTPUT', '-j', VIP_CHAIN]),
      );
    }
    await runCommand('nsenter', [ns, 'iptables-restore', '-w', '--noflush'], { input: text });
    this.applied.set(containerId, text);
  }

  /** Containers no longer on an overlay network: forgotten (their namespace goes with them). */
  keepOnly(ids: Set<string>): void {
    for (const id of [...this.applied.keys()]) if (!ids.has(id)) this.applied.delete(id);
  }
}
