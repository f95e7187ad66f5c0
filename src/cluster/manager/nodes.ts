// Node objects: the record a manager keeps in the store for each node, the API view (Status from the
// node's heartbeat key, ManagerStatus from the etcd membership), list filters, lookup by ID, name
// or ID prefix, and the checks of a node update or removal with swarmkit's messages.
import { invalidParameter, notFound } from '../../errors.ts';
import type { Node, NodeDescription } from '../../types/api/index.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import type { GoJson } from '../../types/go-nil.ts';
import { allLabelsMatch, checkFilterNames } from '../../util/filters.ts';
import type { NodeRole } from '../ca/ca.ts';
import { parseAddr } from '../node/addresses.ts';

export interface NodeSpec {
  Labels: Record<string, string>;
  Role: NodeRole;
  Availability: 'active' | 'pause' | 'drain';
}

export interface NodeRecord {
  ID: string;
  CreatedAt: string;
  UpdatedAt: string;
  Spec: NodeSpec;
  /** As the node sent it at join (describeNode), TLSInfo updated by its heartbeats. */
  Description: GoJson<NodeDescription> & {
    Hostname: string;
    Engine: NonNullable<GoJson<NodeDescription>['Engine']> & { EngineVersion: string; Labels: Record<string, string> };
  };
  /** The IP other nodes reach it at (Status.Addr). */
  Addr: string;
  /** host:port of its manager endpoint, for managers (ManagerStatus.Addr). */
  ManagerAddr?: string;
}

/** What the view needs besides the record. */
export interface NodeLiveness {
  /** Whether the node's heartbeat key is alive. */
  up: boolean;
  /** For managers: whether this node's etcd member leads. */
  leader: boolean;
}

/** The API's Node (swarmkit's api.Node through dockerd's convert.NodeFromGRPC). */
export type NodeView = GoJson<Node>;

export function nodeView(rec: NodeRecord, version: number, live: NodeLiveness): NodeView {
  const view: NodeView = {
    ID: rec.ID,
    Version: { Index: version },
    CreatedAt: rec.CreatedAt,
    UpdatedAt: rec.UpdatedAt,
    Spec: rec.Spec,
    Description: rec.Description,
    Status: { State: live.up ? 'ready' : 'down', Addr: rec.Addr, ...(live.up ? {} : { Message: 'heartbeat failure' }) },
  };
  if (rec.Spec.Role === 'manager' && rec.ManagerAddr) {
    view.ManagerStatus = {
      ...(live.leader ? { Leader: true } : {}),
      Reachability: live.up ? 'reachable' : 'unreachable',
      Addr: rec.ManagerAddr,
    };
  }
  return view;
}

const NODE_FILTERS = ['id', 'label', 'membership', 'name', 'node.label', 'role'] as const;

/** Applies GET /nodes filters (values of one filter are OR-ed, label filters AND-ed, as swarmkit). */
export function filterNodes(nodes: NodeRecord[], filters: Map<string, string[]>): NodeRecord[] {
  checkFilterNames(filters, NODE_FILTERS);
  for (const r of filters.get('role') ?? []) if (r !== 'manager' && r !== 'worker') throw invalidParameter(`invalid filter 'role=${r}'`);
  for (const m of filters.get('membership') ?? [])
    if (m !== 'accepted' && m !== 'pending') throw invalidParameter(`invalid filter 'membership=${m}'`);
  const any = (name: string, test: (v: string) => boolean) => {
    const values = filters.get(name);
    return !values || values.length === 0 || values.some(test);
  };
  return nodes.filter(
    (n) =>
      any('id', (v) => n.ID.startsWith(v)) &&
      any('name', (v) => n.Description.Hostname.startsWith(v)) &&
      any('role', (v) => n.Spec.Role === v) &&
      any('membership', (v) => v === 'accepted') && // a node joins accepted: there is no manual acceptance
      allLabelsMatch(n.Description.Engine?.Labels ?? {}, filters.get('label') ?? []) &&
      allLabelsMatch(n.Spec.Labels, filters.get('node.label') ?? []),
  );
}

/** Finds a node by full ID, then hostname, then unique ID prefix (swarmkit's order). */
export function findNode(nodes: NodeRecord[], ref: string): NodeRecord {
  const byId = nodes.find((n) => n.ID === ref);
  if (byId) return byId;
  const byName = nodes.filter((n) => n.Description.Hostname === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) throw invalidParameter(`node ${ref} is ambiguous (${byName.length} matches found)`);
  const byPrefix = ref === '' ? [] : nodes.filter((n) => n.ID.startsWith(ref));
  if (byPrefix.length === 1) return byPrefix[0]!;
  if (byPrefix.length > 1) throw invalidParameter(`node ${ref} is ambiguous (${byPrefix.length} matches found)`);
  throw notFound(`node ${ref} not found`);
}

/** Checks and normalises the spec of POST /nodes/{id}/update. */
export function checkNodeSpec(current: NodeSpec, body: ClusterObject): NodeSpec {
  const labels = body.Labels ?? {};
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels) || Object.values(labels).some((v) => typeof v !== 'string')) {
    throw invalidParameter('invalid Labels: must be an object of strings');
  }
  const role = body.Role ?? current.Role;
  if (role !== 'manager' && role !== 'worker')
    throw invalidParameter(`invalid role ${JSON.stringify(role)}: must be "manager" or "worker"`);
  const availability = body.Availability ?? current.Availability;
  if (availability !== 'active' && availability !== 'pause' && availability !== 'drain') {
    throw invalidParameter(`invalid availability ${JSON.stringify(availability)}: must be "active", "pause" or "drain"`);
  }
  return { Labels: labels as Record<string, string>, Role: role, Availability: availability };
}

/** swarmkit's refusals of DELETE /nodes/{id}. */
export function checkRemovable(rec: NodeRecord, up: boolean, force: boolean): void {
  if (rec.Spec.Role === 'manager') {
    throw invalidParameter(
      `rpc error: code = FailedPrecondition desc = node ${rec.ID} is a cluster manager and is a member of the raft cluster. It must be demoted to worker before removal`,
    );
  }
  if (up && !force) throw invalidParameter(`rpc error: code = FailedPrecondition desc = node ${rec.ID} is not down and can't be removed`);
}

/** A new node's record: created and updated now, its address from the advertise address. */
export function newNodeRecord(
  id: string,
  role: NodeRole,
  advertiseAddr: string,
  description: NodeRecord['Description'],
  availability = 'active',
): NodeRecord {
  const now = new Date().toISOString();
  const adv = parseAddr(advertiseAddr, 0, 'advertise address');
  return {
    ID: id,
    CreatedAt: now,
    UpdatedAt: now,
    Spec: { Labels: {}, Role: role, Availability: availability as NodeRecord['Spec']['Availability'] },
    Description: description,
    Addr: adv.host,
    // Kept for workers too: a promoted worker's endpoint and etcd ports follow from it.
    ManagerAddr: advertiseAddr,
  };
}
