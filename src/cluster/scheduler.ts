// The scheduler, pure: which nodes may run a task (Ready, active, placement constraints on
// node.id/hostname/role/labels, engine.labels, node.platform) and which one gets it (the fewest
// tasks of the same service, then the fewest tasks overall, as swarmkit spreads), with swarmkit's
// "no suitable node" messages.
import { invalidParameter } from '../errors.ts';
import type { ClusterObject } from '../types/cluster.ts';

/** What the scheduler knows of a node. */
export interface SchedNode {
  id: string;
  hostname: string;
  role: 'manager' | 'worker';
  availability: 'active' | 'pause' | 'drain';
  up: boolean;
  labels: Record<string, string>;
  engineLabels: Record<string, string>;
  os: string;
  arch: string;
}

export interface Constraint {
  key: string;
  equal: boolean;
  value: string;
}

/** Parses `key==value` / `key!=value` (swarmkit's grammar); 400 on anything else. */
export function parseConstraints(list: unknown): Constraint[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw invalidParameter('invalid Placement.Constraints: must be a list of strings');
  return list.map((c) => {
    const m = typeof c === 'string' ? /^\s*([\w.-]+)\s*(==|!=)\s*(.*?)\s*$/.exec(c) : null;
    if (!m) throw invalidParameter(`rpc error: code = InvalidArgument desc = invalid constraint ${JSON.stringify(c)}`);
    const key = m[1]!;
    if (!/^(node\.(id|hostname|role|platform\.os|platform\.arch|labels\..+)|engine\.labels\..+)$/.test(key))
      throw invalidParameter(`rpc error: code = InvalidArgument desc = constraint expression "${c}" has an unknown key ${key}`);
    return { key, equal: m[2] === '==', value: m[3]! };
  });
}

function nodeValue(n: SchedNode, key: string): string | undefined {
  if (key === 'node.id') return n.id;
  if (key === 'node.hostname') return n.hostname;
  if (key === 'node.role') return n.role;
  if (key === 'node.platform.os') return n.os;
  if (key === 'node.platform.arch') return n.arch;
  if (key.startsWith('node.labels.')) return n.labels[key.slice('node.labels.'.length)];
  if (key.startsWith('engine.labels.')) return n.engineLabels[key.slice('engine.labels.'.length)];
  return undefined;
}

export function matches(n: SchedNode, constraints: Constraint[]): boolean {
  return constraints.every((c) => {
    const v = nodeValue(n, c.key);
    // swarmkit: ids and hostnames compare case-insensitively; a missing label never equals.
    const eq =
      v !== undefined && (c.key === 'node.hostname' || c.key === 'node.role' ? v.toLowerCase() === c.value.toLowerCase() : v === c.value);
    return c.equal ? eq : !eq;
  });
}

export function constraintsOf(taskSpec: ClusterObject): Constraint[] {
  const placement = (taskSpec.Placement ?? {}) as ClusterObject;
  return parseConstraints(placement.Constraints);
}

export function maxReplicasOf(taskSpec: ClusterObject): number {
  const v = ((taskSpec.Placement ?? {}) as ClusterObject).MaxReplicas;
  return typeof v === 'number' && v > 0 ? v : 0;
}

/** Nodes a task may run on now. */
export function eligible(nodes: SchedNode[], constraints: Constraint[]): SchedNode[] {
  return nodes.filter((n) => n.up && n.availability === 'active' && matches(n, constraints));
}

/** Live task counts per node: of the service, and overall. */
export interface Load {
  service: Map<string, number>;
  total: Map<string, number>;
}

/**
 * Picks a node for one task of a service, or says why none fits. `load` is updated so that the
 * next pick of the same round sees this one.
 */
export function pickNode(nodes: SchedNode[], taskSpec: ClusterObject, load: Load): { node: string } | { message: string } {
  const constraints = constraintsOf(taskSpec);
  const max = maxReplicasOf(taskSpec);
  const ready = nodes.filter((n) => n.up && n.availability === 'active');
  let fit = eligible(nodes, constraints);
  if (max) fit = fit.filter((n) => (load.service.get(n.id) ?? 0) < max);
  if (!fit.length) {
    const why = !ready.length
      ? `${nodes.length} node${nodes.length === 1 ? '' : 's'} not available for new tasks`
      : max && eligible(nodes, constraints).length
        ? `max replicas per node limit exceed`
        : `scheduling constraints not satisfied on ${ready.length} node${ready.length === 1 ? '' : 's'}`;
    return { message: `no suitable node (${why})` };
  }
  fit.sort(
    (a, b) =>
      (load.service.get(a.id) ?? 0) - (load.service.get(b.id) ?? 0) ||
      (load.total.get(a.id) ?? 0) - (load.total.get(b.id) ?? 0) ||
      a.id.localeCompare(b.id),
  );
  const id = fit[0]!.id;
  load.service.set(id, (load.service.get(id) ?? 0) + 1);
  load.total.set(id, (load.total.get(id) ?? 0) + 1);
  return { node: id };
}
