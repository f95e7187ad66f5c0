// The scheduler, pure: which nodes may run a task — swarmkit's filter pipeline in its order: Ready
// and active, resources (reservations of NanoCPUs, MemoryBytes and generic resources against each
// node's Description.Resources minus what its tasks reserve), placement constraints on
// node.id/hostname/role/labels, engine.labels and node.platform, host-mode ports free, MaxReplicas —
// and which one gets it: spread preferences first (the label value with the fewest tasks of the
// service), then the fewest tasks of the service, then the fewest overall; with swarmkit's
// "no suitable node (…)" explanations.
import { invalidParameter } from '../../errors.ts';
import type { ClusterObject } from '../../types/cluster.ts';

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
  /** Description.Resources; absent = unlimited (no reservation is refused). */
  resources?: NodeResources;
}

export interface NodeResources {
  nanoCPUs: number;
  memoryBytes: number;
  /** Discrete kinds: how many; named kinds: their values (`GPU=UUID1`). */
  discrete: Record<string, number>;
  named: Record<string, string[]>;
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

/** What a task reserves (Resources.Reservations) and the host-mode ports it binds. */
export interface Demand {
  nanoCPUs: number;
  memoryBytes: number;
  generic: Record<string, number>;
  hostPorts: string[];
}

/** What the tasks on a node hold: reservations, named generic resources, host-mode ports. */
export interface NodeUse {
  nanoCPUs: number;
  memoryBytes: number;
  generic: Record<string, number>;
  named: Set<string>;
  hostPorts: Set<string>;
}

/** Live task counts per node (of the service, and overall) and what they hold. */
export interface Load {
  service: Map<string, number>;
  total: Map<string, number>;
  use?: Map<string, NodeUse>;
}

const num = (v: unknown) => (typeof v === 'number' && v > 0 ? v : 0);

/** A task template's demand. Pure. */
export function demandOf(taskSpec: ClusterObject, ports: unknown[] = []): Demand {
  const r = ((taskSpec.Resources ?? {}) as ClusterObject).Reservations as ClusterObject | undefined;
  const generic: Record<string, number> = {};
  for (const g of (Array.isArray(r?.GenericResources) ? r.GenericResources : []) as ClusterObject[]) {
    const d = g.DiscreteResourceSpec as { Kind?: string; Value?: number } | undefined;
    if (d?.Kind) generic[d.Kind] = (generic[d.Kind] ?? 0) + num(d.Value);
    const n = g.NamedResourceSpec as { Kind?: string } | undefined;
    if (n?.Kind) generic[n.Kind] = (generic[n.Kind] ?? 0) + 1;
  }
  const hostPorts = (ports as ClusterObject[])
    .filter((p) => p?.PublishMode === 'host' && num(p.PublishedPort))
    .map((p) => `${String(p.Protocol || 'tcp')}/${String(p.PublishedPort)}`);
  return { nanoCPUs: num(r?.NanoCPUs), memoryBytes: num(r?.MemoryBytes), generic, hostPorts };
}

const emptyUse = (): NodeUse => ({ nanoCPUs: 0, memoryBytes: 0, generic: {}, named: new Set(), hostPorts: new Set() });

/** Records what a task placed on `node` holds (its demand and the named resources it got). */
export function addUse(load: Load, node: string, d: Demand, named: string[] = []): void {
  load.use ??= new Map();
  const u = load.use.get(node) ?? emptyUse();
  u.nanoCPUs += d.nanoCPUs;
  u.memoryBytes += d.memoryBytes;
  for (const [k, v] of Object.entries(d.generic)) u.generic[k] = (u.generic[k] ?? 0) + v;
  for (const n of named) u.named.add(n);
  for (const p of d.hostPorts) u.hostPorts.add(p);
  load.use.set(node, u);
}

function fitsResources(n: SchedNode, d: Demand, u: NodeUse): boolean {
  const r = n.resources;
  if (!r) return true;
  if (d.nanoCPUs && d.nanoCPUs > r.nanoCPUs - u.nanoCPUs) return false;
  if (d.memoryBytes && d.memoryBytes > r.memoryBytes - u.memoryBytes) return false;
  for (const [kind, want] of Object.entries(d.generic)) {
    const have = (r.discrete[kind] ?? 0) + (r.named[kind]?.length ?? 0);
    if (want > have - (u.generic[kind] ?? 0)) return false;
  }
  return true;
}

/** The named resources (`Kind=Value`) a task gets on a node: the first free ones of each kind. */
export function assignNamed(n: SchedNode, d: Demand, u: NodeUse | undefined): string[] {
  const out: string[] = [];
  for (const [kind, want] of Object.entries(d.generic)) {
    const free = (n.resources?.named[kind] ?? []).map((v) => `${kind}=${v}`).filter((x) => !u?.named.has(x));
    out.push(...free.slice(0, want));
  }
  return out;
}

interface Filter {
  ok(n: SchedNode): boolean;
  explain(count: number): string;
}

const nodesWord = (c: number) => `${c} node${c === 1 ? '' : 's'}`;

/** swarmkit's pipeline: each node fails at its first failing filter; the explanation counts them. */
function pipeline(taskSpec: ClusterObject, d: Demand, load: Load, serviceCount: (id: string) => number): Filter[] {
  const constraints = constraintsOf(taskSpec);
  const max = maxReplicasOf(taskSpec);
  const use = (id: string) => load.use?.get(id) ?? emptyUse();
  return [
    { ok: (n) => n.up && n.availability === 'active', explain: (c) => `${nodesWord(c)} not available for new tasks` },
    { ok: (n) => fitsResources(n, d, use(n.id)), explain: (c) => `insufficient resources on ${nodesWord(c)}` },
    { ok: (n) => matches(n, constraints), explain: (c) => `scheduling constraints not satisfied on ${nodesWord(c)}` },
    { ok: (n) => !d.hostPorts.some((p) => use(n.id).hostPorts.has(p)), explain: (c) => `host-mode port already in use on ${nodesWord(c)}` },
    { ok: (n) => !max || serviceCount(n.id) < max, explain: () => 'max replicas per node limit exceed' },
  ];
}

/** The nodes that pass every filter, or swarmkit's explanation of why none does. */
export function filterNodes(
  nodes: SchedNode[],
  taskSpec: ClusterObject,
  d: Demand,
  load: Load,
): { fit: SchedNode[] } | { message: string } {
  const filters = pipeline(taskSpec, d, load, (id) => load.service.get(id) ?? 0);
  const failures = filters.map(() => 0);
  const fit = nodes.filter((n) => {
    const i = filters.findIndex((f) => !f.ok(n));
    if (i >= 0) failures[i]!++;
    return i < 0;
  });
  if (fit.length) return { fit };
  const why = filters
    .map((f, i) => ({ f, c: failures[i]!, i }))
    .filter((x) => x.c > 0)
    .sort((a, b) => b.c - a.c || a.i - b.i)
    .map((x) => x.f.explain(x.c))
    .join('; ');
  return { message: why ? `no suitable node (${why})` : 'no suitable node' };
}

/** Spread preferences (`spread=node.labels.x`): the branch of label values with the fewest tasks. */
function spread(fit: SchedNode[], taskSpec: ClusterObject, load: Load): SchedNode[] {
  const prefs = (((taskSpec.Placement ?? {}) as ClusterObject).Preferences ?? []) as ClusterObject[];
  let set = fit;
  for (const p of Array.isArray(prefs) ? prefs : []) {
    const key = String(((p?.Spread ?? {}) as ClusterObject).SpreadDescriptor ?? '');
    if (!key) continue;
    const groups = new Map<string, SchedNode[]>();
    for (const n of set) {
      const v = nodeValue(n, key) ?? ''; // nodes without the label form a branch of their own
      groups.set(v, [...(groups.get(v) ?? []), n]);
    }
    const count = (ns: SchedNode[]) => ns.reduce((a, n) => a + (load.service.get(n.id) ?? 0), 0);
    set = [...groups.entries()].sort((a, b) => count(a[1]) - count(b[1]) || a[0].localeCompare(b[0]))[0]![1];
  }
  return set;
}

/**
 * Checks a placement preference list's shape. As swarmkit, any spread descriptor is taken (one the
 * nodes do not have puts them all in one branch); the `spread=<node.labels.x>` check is the
 * docker CLI's, not the daemon's.
 */
export function parsePreferences(list: unknown): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw invalidParameter('invalid Placement.Preferences: must be a list');
}

/**
 * Picks a node for one task of a service, or says why none fits. `load` is updated so that the
 * next pick of the same round sees this one; `named` are the named generic resources it got.
 */
export function pickNode(
  nodes: SchedNode[],
  taskSpec: ClusterObject,
  load: Load,
  ports: unknown[] = [],
): { node: string; named: string[] } | { message: string } {
  const d = demandOf(taskSpec, ports);
  const r = filterNodes(nodes, taskSpec, d, load);
  if ('message' in r) return r;
  const fit = spread(r.fit, taskSpec, load).sort(
    (a, b) =>
      (load.service.get(a.id) ?? 0) - (load.service.get(b.id) ?? 0) ||
      (load.total.get(a.id) ?? 0) - (load.total.get(b.id) ?? 0) ||
      a.id.localeCompare(b.id),
  );
  const n = fit[0]!;
  const named = assignNamed(n, d, load.use?.get(n.id));
  load.service.set(n.id, (load.service.get(n.id) ?? 0) + 1);
  load.total.set(n.id, (load.total.get(n.id) ?? 0) + 1);
  addUse(load, n.id, d, named);
  return { node: n.id, named };
}
