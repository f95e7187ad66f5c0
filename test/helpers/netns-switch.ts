// The underlay of the multi-node cluster tests: a "switch" network namespace holding a bridge, and
// one namespace per node joined to it by a veth (`uplink` inside the node's namespace, at the node's
// address), so that traffic between the daemons really crosses veths and a bridge.

import { run } from './daemon.ts';
import { sh } from './outside-host.ts';

export interface SwitchedNodes {
  /** The switch namespace's name. */
  sw: string;
  count: number;
  /** Node i's namespace, its veth's name in the switch, and its address on a /24. */
  ns(i: number): string;
  port(i: number): string;
  addr(i: number): string;
}

export async function makeSwitchedNodes(n: SwitchedNodes): Promise<void> {
  await sh('ip', ['netns', 'add', n.sw]);
  await sh('ip', ['netns', 'exec', n.sw, 'sh', '-c', 'ip link add br0 type bridge && ip link set br0 up']);
  for (let i = 0; i < n.count; i++) {
    await sh('ip', ['netns', 'add', n.ns(i)]);
    await sh('ip', ['link', 'add', n.port(i), 'netns', n.sw, 'type', 'veth', 'peer', 'name', 'uplink', 'netns', n.ns(i)]);
    await sh('ip', ['netns', 'exec', n.sw, 'ip', 'link', 'set', n.port(i), 'master', 'br0', 'up']);
    const up = `ip link set lo up && ip addr add ${n.addr(i)}/24 dev uplink && ip link set uplink up`;
    await sh('ip', ['netns', 'exec', n.ns(i), 'sh', '-c', up]);
  }
}

/** Deletes the namespaces (their veths go with them); what is already gone is no error. */
export async function removeSwitchedNodes(n: SwitchedNodes): Promise<void> {
  for (let i = 0; i < n.count; i++) await run('ip', ['netns', 'del', n.ns(i)]);
  await run('ip', ['netns', 'del', n.sw]);
}
