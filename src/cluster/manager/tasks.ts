// Task objects: the record a manager keeps in the store (`tasks/<id>`), the task state machine in
// swarmkit's order, the API view, GET /tasks filters and lookup. Pure.
import { invalidParameter, notFound } from '../../errors.ts';
import type { Task } from '../../types/api/index.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import type { GoJson } from '../../types/go-nil.ts';
import { allLabelsMatch, checkFilterNames } from '../../util/filters.ts';
import { withoutPullOptions } from './pull-options.ts';

/** swarmkit's task states, in order: a task only ever moves forward. */
/** A task's store key. */
export const taskKey = (id: string) => `tasks/${id}`;

export const TASK_STATES = [
  'new',
  'pending',
  'assigned',
  'accepted',
  'preparing',
  'ready',
  'starting',
  'running',
  'complete',
  'shutdown',
  'failed',
  'rejected',
  'remove',
  'orphaned',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

export const stateRank = (s: TaskState): number => TASK_STATES.indexOf(s);
/** complete, shutdown, failed, rejected, remove, orphaned: the task's container no longer runs. */
export const isTerminal = (s: TaskState): boolean => stateRank(s) > stateRank('running');

export interface ContainerStatus {
  ContainerID?: string;
  PID?: number;
  ExitCode?: number;
}

export interface TaskStatus {
  Timestamp: string;
  State: TaskState;
  Message: string;
  Err?: string;
  ContainerStatus?: ContainerStatus;
  PortStatus?: ClusterObject;
}

export interface TaskRecord {
  ID: string;
  CreatedAt: string;
  UpdatedAt: string;
  Labels: Record<string, string>;
  /** The service's TaskTemplate when the task was made. */
  Spec: ClusterObject;
  ServiceID: string;
  /** The service's name, for the container name and labels. */
  ServiceName: string;
  /** The service's labels when the task was made (templates' {{.Service.Labels}}). */
  ServiceLabels?: Record<string, string>;
  /** SpecVersion of the service the task was made from. */
  SpecVersion: number;
  /** Replicated services and replicated jobs; global tasks have none (their slot is the node). */
  Slot?: number;
  NodeID?: string;
  Status: TaskStatus;
  DesiredState: TaskState;
  /** How many restarts led to this task in its slot (restart policy's MaxAttempts). */
  Restarts: number;
  JobIteration?: number;
  /** The service's published ports of mode=host, bound on the task's node. */
  Ports?: unknown[];
  /** The service's endpoint mode when not `vip`: with `dnsrr` the task's name holds `<service>`. */
  EndpointMode?: string;
  /** Named generic resources the scheduler gave the task (`Kind=Value`). */
  AssignedGenericResources?: string[];
  /** When the restarts of this slot within RestartPolicy.Window happened (ms since the epoch). */
  RestartTimes?: number[];
}

/** The task's named generic resources (`Kind=Value`). */
export const namedOf = (t: Pick<TaskRecord, 'AssignedGenericResources'>): string[] => t.AssignedGenericResources ?? [];

/** AssignedGenericResources as dockerd shows them: named ones, and the discrete amounts reserved. */
export function assignedView(t: TaskRecord): ClusterObject[] {
  const r = ((t.Spec.Resources ?? {}) as ClusterObject).Reservations as ClusterObject | undefined;
  const out: ClusterObject[] = namedOf(t).map((x) => {
    const i = x.indexOf('=');
    return { NamedResourceSpec: { Kind: x.slice(0, i), Value: x.slice(i + 1) } };
  });
  const namedKinds = new Set(namedOf(t).map((x) => x.slice(0, x.indexOf('='))));
  for (const g of (Array.isArray(r?.GenericResources) ? r.GenericResources : []) as ClusterObject[]) {
    const d = g.DiscreteResourceSpec as { Kind?: string; Value?: number } | undefined;
    if (d?.Kind && !namedKinds.has(d.Kind)) out.push({ DiscreteResourceSpec: { Kind: d.Kind, Value: d.Value ?? 0 } });
  }
  return out;
}

/** A task's name as dockerd shows it: `<service>.<slot>` or `<service>.<node id>` for global tasks. */
export function taskName(t: Pick<TaskRecord, 'ServiceName' | 'Slot' | 'NodeID'>): string {
  return `${t.ServiceName}.${t.Slot ?? t.NodeID ?? ''}`;
}

/** The container's name, as dockerd: `<service>.<slot or node id>.<task id>`. */
export function containerName(t: Pick<TaskRecord, 'ServiceName' | 'Slot' | 'NodeID' | 'ID'>): string {
  return `${taskName(t)}.${t.ID}`;
}

/** The API's Task; its Spec is the service's TaskTemplate as stored (checked at create, not retyped). */
export type TaskView = Omit<GoJson<Task>, 'Spec'> & { Spec?: ClusterObject };

export function taskView(t: TaskRecord, version: number): TaskView {
  const view: TaskView = {
    ID: t.ID,
    Version: { Index: version },
    CreatedAt: t.CreatedAt,
    UpdatedAt: t.UpdatedAt,
    Labels: t.Labels,
    Spec: withoutPullOptions(t.Spec),
    ServiceID: t.ServiceID,
  };
  if (t.Slot !== undefined) view.Slot = t.Slot;
  if (t.NodeID) view.NodeID = t.NodeID;
  view.Status = { ...t.Status, PortStatus: t.Status.PortStatus ?? {} };
  view.DesiredState = t.DesiredState;
  if (t.JobIteration !== undefined) view.JobIteration = { Index: t.JobIteration };
  const assigned = assignedView(t);
  if (assigned.length) view.AssignedGenericResources = assigned;
  return view;
}

// `_up-to-date` is the docker CLI's (service create/update progress): tasks of the current spec.
const TASK_FILTERS = ['desired-state', 'id', 'label', 'name', 'node', 'service', 'runtime', '_up-to-date'] as const;

/** How the filter's names of services and nodes resolve to IDs (dockerd resolves them too). */
export interface TaskFilterContext {
  serviceIds(ref: string): string[];
  nodeIds(ref: string): string[];
  /** Whether the task was made from its service's current spec. */
  upToDate(t: TaskRecord): boolean;
  /** The labels of the task's service: swarmkit's `label` filter matches them (ServiceAnnotations). */
  serviceLabels?(t: TaskRecord): Record<string, string>;
}

export function filterTasks(all: TaskRecord[], filters: Map<string, string[]>, ctx: TaskFilterContext): TaskRecord[] {
  checkFilterNames(filters, TASK_FILTERS);
  for (const d of filters.get('desired-state') ?? [])
    if (!['running', 'shutdown', 'accepted'].includes(d)) throw invalidParameter(`Invalid desired-state filter: '${d}'`);
  const services = filters.get('service')?.flatMap((s) => ctx.serviceIds(s));
  const nodes = filters.get('node')?.flatMap((n) => ctx.nodeIds(n));
  const any = (name: string, test: (v: string) => boolean) => {
    const values = filters.get(name);
    return !values || values.length === 0 || values.some(test);
  };
  return all.filter(
    (t) =>
      any('id', (v) => t.ID.startsWith(v)) &&
      any('name', (v) => taskName(t).startsWith(v)) &&
      any('desired-state', (v) => t.DesiredState === v || (v === 'accepted' && t.DesiredState === 'accepted')) &&
      (!services || services.includes(t.ServiceID)) &&
      any('_up-to-date', (v) => (v === 'true' || v === '1') === ctx.upToDate(t)) &&
      any('runtime', (v) => v === 'container') &&
      (!nodes || (t.NodeID !== undefined && nodes.includes(t.NodeID))) &&
      allLabelsMatch(ctx.serviceLabels?.(t) ?? t.Labels, filters.get('label') ?? []),
  );
}

/** Full ID, then unique ID prefix. */
export function findTask<T extends { ID: string }>(all: T[], ref: string): T {
  const byId = all.find((t) => t.ID === ref);
  if (byId) return byId;
  const byPrefix = ref === '' ? [] : all.filter((t) => t.ID.startsWith(ref));
  if (byPrefix.length === 1) return byPrefix[0]!;
  if (byPrefix.length > 1) throw invalidParameter(`task ${ref} is ambiguous (${byPrefix.length} matches found)`);
  throw notFound(`task ${ref} not found`);
}
