// --network-control-plane-mtu. dockerd sizes its gossip packets (UDP) with it; here the control
// traffic is TCP (the manager endpoint, etcd's client and peer ports), so the MTU is applied the
// way TCP can honour it: a mangle OUTPUT rule clamps the MSS option of every SYN this host sends on
// those ports to MTU − 40 (IPv4) / − 60 (IPv6), so neither side of a control connection sends a
// segment larger than the MTU. The default (1500) adds no rule: TCP then follows the interfaces'
// MTU and path MTU discovery. One rule per node, tagged with its ID; removed when the node leaves
// or the daemon stops, and checked before it is added (a restart after kill -9 finds it there).
import { isIPv6 } from 'node:net';
import { runCommand } from '../../util/helper-shell.ts';
import type { Logger } from '../../util/log.ts';

export const DEFAULT_CONTROL_MTU = 1500;
/** iptables multiport takes at most 15 ports. */
const MAX_PORTS = 15;

/** The rule (after `-t mangle -A OUTPUT`), or null when the MTU asks for none. Pure. */
export function mssRule(mtu: number, ports: number[], ipv6: boolean, nodeId: string): string[] | null {
  if (!mtu || mtu === DEFAULT_CONTROL_MTU || ports.length === 0) return null;
  const mss = mtu - (ipv6 ? 60 : 40);
  const list = [...new Set(ports)].sort((a, b) => a - b).slice(0, MAX_PORTS);
  return [
    '-p',
    'tcp',
    '--tcp-flags',
    'SYN,RST',
    'SYN',
    '-m',
    'multiport',
    '--ports',
    list.join(','),
    '-m',
    'comment',
    '--comment',
    `engine-cluster-mtu:${nodeId}`,
    '-j',
    'TCPMSS',
    '--set-mss',
    String(mss),
  ];
}

/** A manager endpoint port and the etcd ports after it (client +2, peer +3). */
export const controlPorts = (endpointPort: number): number[] => [endpointPort, endpointPort + 2, endpointPort + 3];

export class ControlMtu {
  private applied: { cmd: string; rule: string[] } | null = null;

  constructor(
    private readonly mtu: number,
    private readonly log: Logger,
  ) {}

  /** Adds the rule for this node's advertise host and the control ports it uses. Never throws. */
  async apply(nodeId: string, advertiseHost: string, ports: number[]): Promise<void> {
    const rule = mssRule(this.mtu, ports, isIPv6(advertiseHost), nodeId);
    if (!rule) return;
    const cmd = isIPv6(advertiseHost) ? 'ip6tables' : 'iptables';
    try {
      const exists = await runCommand(cmd, ['-w', '-t', 'mangle', '-C', 'OUTPUT', ...rule]).then(
        () => true,
        () => false,
      );
      if (!exists) await runCommand(cmd, ['-w', '-t', 'mangle', '-A', 'OUTPUT', ...rule]);
      this.applied = { cmd, rule };
      this.log.info('control-plane MTU applied to the cluster ports', { mtu: this.mtu, ports: rule[8] });
    } catch (err) {
      this.log.warn('cannot apply --network-control-plane-mtu (iptables mangle TCPMSS)', { error: (err as Error).message });
    }
  }

  /** Removes the rule (every copy of it). Never throws. */
  async remove(): Promise<void> {
    const a = this.applied;
    this.applied = null;
    if (!a) return;
    for (let i = 0; i < 10; i++) {
      const gone = await runCommand(a.cmd, ['-w', '-t', 'mangle', '-D', 'OUTPUT', ...a.rule]).then(
        () => false,
        () => true,
      );
      if (gone) return;
    }
  }
}
