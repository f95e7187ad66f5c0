// Service objects: the record a manager keeps in the store (`services/<id>`), the checks of a spec
// sent to create or update (swarmkit's messages), dockerd's defaults for `insertDefaults`, the API
// view, GET /services filters and lookup by ID, name or ID prefix. Pure.
import type { PortConfig } from './published-ports.ts';
import { conflict, invalidParameter, notFound, notImplemented } from '../../errors.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import { allLabelsMatch, checkFilterNames } from '../../util/filters.ts';
import { fileRefs } from './secret-spec.ts';
import { withoutPullOptions } from './pull-options.ts';
import { checkPrivileges } from '../agent/privileges.ts';
import { isTerminal, type TaskRecord } from './tasks.ts';

export type ServiceMode = 'replicated' | 'global' | 'replicated-job' | 'global-job';

export interface UpdateStatus {
  State: 'updating' | 'paused' | 'completed' | 'rollback_started' | 'rollback_paused' | 'rollback_completed';
  StartedAt?: string;
  CompletedAt?: string;
  Message: string;
}

export interface ServiceRecord {
  ID: string;
  CreatedAt: string;
  UpdatedAt: string;
  Spec: ClusterObject;
  PreviousSpec?: ClusterObject;
  /** Bumped on every spec change: tasks made from an older spec are outdated (rolling update). */
  SpecVersion: number;
  UpdateStatus?: UpdateStatus;
  /** For jobs: bumped by every update, as swarmkit's JobIteration. */
  JobIteration?: number;
  /** Endpoint.VirtualIPs (service-vips.ts). */
  VirtualIPs?: Array<{ NetworkID: string; Addr: string }>;
  /** Endpoint.Ports: the spec's ports with the PublishedPort of each (published-ports.ts). */
  Ports?: PortConfig[];
}

/** A service's store key. */
export const serviceKey = (id: string) => `services/${id}`;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Record<string, unknown> => (isObj(v) ? v : {});

const NAME_RE = /^[a-zA-Z0-9](?:[a-zA-Z0-9-_.]*[a-zA-Z0-9])?$/;

export function modeOf(spec: ClusterObject): ServiceMode {
  const m = obj(spec.Mode);
  if (m.Global !== undefined) return 'global';
  if (m.ReplicatedJob !== undefined) return 'replicated-job';
  if (m.GlobalJob !== undefined) return 'global-job';
  return 'replicated';
}

/** Replicas of a replicated service; MaxConcurrent/TotalCompletions of a replicated job. */
export function replicasOf(spec: ClusterObject): number {
  const m = obj(spec.Mode);
  if (isObj(m.Replicated)) return typeof m.Replicated.Replicas === 'number' ? m.Replicated.Replicas : 1;
  if (isObj(m.ReplicatedJob)) return typeof m.ReplicatedJob.TotalCompletions === 'number' ? m.ReplicatedJob.TotalCompletions : 1;
  if (m.Global !== undefined || m.GlobalJob !== undefined) return 0;
  return 1;
}

/** Checks a spec sent to create or update; returns it with the mode made explicit. */
export function checkServiceSpec(body: ClusterObject): ClusterObject {
  const spec = structuredClone(body);
  const name = spec.Name;
  if (name !== undefined && typeof name !== 'string') throw invalidParameter('invalid Name: must be a string');
  if (typeof name === 'string' && name !== '' && (name.length > 63 || !NAME_RE.test(name)))
    throw invalidParameter(`rpc error: code = InvalidArgument desc = name must be valid as a DNS name component`);
  const tt = spec.TaskTemplate;
  if (!isObj(tt)) throw invalidParameter('rpc error: code = InvalidArgument desc = TaskSpec: missing runtime');
  if (tt.PluginSpec !== undefined || tt.NetworkAttachmentSpec !== undefined)
    throw notImplemented('only container tasks (TaskTemplate.ContainerSpec) are built in this engine');
  const cs = tt.ContainerSpec;
  if (!isObj(cs)) throw invalidParameter('rpc error: code = InvalidArgument desc = TaskSpec: missing runtime');
  if (typeof cs.Image !== 'string' || cs.Image === '')
    throw invalidParameter('rpc error: code = InvalidArgument desc = ContainerSpec: image reference must be provided');
  for (const k of ['Secrets', 'Configs'] as const) {
    if (cs[k] !== undefined && cs[k] !== null && !Array.isArray(cs[k]))
      throw invalidParameter(`invalid ContainerSpec.${k}: must be an array`);
  }
  checkPrivileges(cs);
  // The references' shape (their existence is checked against the store by the caller).
  fileRefs('secrets', tt);
  fileRefs('configs', tt);
  checkNetworks(spec, tt);
  const ports = obj(spec.EndpointSpec).Ports;
  if (Array.isArray(ports)) {
    // Mode ingress: the routing mesh (network/overlay/mesh.ts), a missing PublishedPort picked by the
    // manager (published-ports.ts); mode host: bound by each task on its node (container-body.ts).
    for (const p of ports) {
      const port = obj(p);
      const bad = (what: string) => invalidParameter(`rpc error: code = InvalidArgument desc = EndpointSpec: ${what}`);
      if (port.Protocol !== undefined && !['tcp', 'udp', 'sctp'].includes(String(port.Protocol)))
        throw bad(`invalid protocol ${JSON.stringify(port.Protocol)}`);
      if (port.PublishMode !== undefined && !['ingress', 'host', ''].includes(String(port.PublishMode)))
        throw bad(`invalid publish mode ${JSON.stringify(port.PublishMode)}`);
      const tp = port.TargetPort;
      if (!(typeof tp === 'number' && Number.isInteger(tp) && tp > 0 && tp <= 65535))
        throw bad(`invalid target port ${JSON.stringify(tp)}`);
      const pp = port.PublishedPort;
      if (pp !== undefined && !(typeof pp === 'number' && Number.isInteger(pp) && pp >= 0 && pp <= 65535))
        throw bad(`invalid published port ${JSON.stringify(pp)}`);
    }
  }
  normalizeEndpoint(spec);
  // Go decodes JSON keys case-insensitively, and some clients rely on it (docker-py sends
  // {"replicated": {"Replicas": 2}}): the mode's keys are put in their canonical case.
  if (isObj(spec.Mode)) {
    const canon: Record<string, string> = {
      replicated: 'Replicated',
      global: 'Global',
      replicatedjob: 'ReplicatedJob',
      globaljob: 'GlobalJob',
    };
    const mode: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(spec.Mode)) mode[canon[k.toLowerCase()] ?? k] = v;
    spec.Mode = mode;
  }
  const modes = Object.keys(obj(spec.Mode)).filter((k) => obj(spec.Mode)[k] !== undefined && obj(spec.Mode)[k] !== null);
  if (modes.length > 1) throw invalidParameter('rpc error: code = InvalidArgument desc = only one service mode may be set');
  if (modes.length === 0) spec.Mode = { Replicated: { Replicas: 1 } };
  const m = obj(spec.Mode);
  if (isObj(m.Replicated) && m.Replicated.Replicas === undefined) m.Replicated.Replicas = 1;
  const r = replicasOf(spec);
  if (!Number.isInteger(r) || r < 0)
    throw invalidParameter('rpc error: code = InvalidArgument desc = Replicas must be a non-negative integer');
  const rp = obj(tt.RestartPolicy);
  if (rp.Condition !== undefined && !['none', 'on-failure', 'any'].includes(rp.Condition as string))
    throw invalidParameter(`invalid RestartPolicy.Condition ${JSON.stringify(rp.Condition)}`);
  for (const k of ['UpdateConfig', 'RollbackConfig'] as const) {
    const u = obj(spec[k]);
    if (u.FailureAction !== undefined && !['pause', 'continue', 'rollback', ''].includes(u.FailureAction as string))
      throw invalidParameter(`invalid ${k}.FailureAction ${JSON.stringify(u.FailureAction)}`);
    if (u.Order !== undefined && !['stop-first', 'start-first', ''].includes(u.Order as string))
      throw invalidParameter(`invalid ${k}.Order ${JSON.stringify(u.Order)}`);
  }
  return swarmkitShape(spec);
}

const SPEC_ORDER = ['Name', 'Labels', 'TaskTemplate', 'Mode', 'UpdateConfig', 'RollbackConfig', 'Networks', 'EndpointSpec'];
const TASK_ORDER = [
  'ContainerSpec',
  'PluginSpec',
  'NetworkAttachmentSpec',
  'Resources',
  'RestartPolicy',
  'Placement',
  'Networks',
  'LogDriver',
  'ForceUpdate',
  'Runtime',
];

/** `o`'s keys in `order` first (Go's field order), the rest after. */
function ordered(o: Record<string, unknown>, order: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of order) if (k in o) out[k] = o[k];
  for (const k of Object.keys(o)) if (!(k in out)) out[k] = o[k];
  return out;
}

/**
 * The spec as it reads back from swarmkit through dockerd (no insertDefaults): Labels at least {},
 * ContainerSpec.Isolation `default`, TaskTemplate.ForceUpdate 0 and Runtime `container` (enums and
 * fields Go always writes), keys in Go's order.
 */
function swarmkitShape(spec: ClusterObject): ClusterObject {
  if (!isObj(spec.Labels)) spec.Labels = {};
  const tt = obj(spec.TaskTemplate);
  const cs = obj(tt.ContainerSpec);
  if (cs.Isolation === undefined || cs.Isolation === null || cs.Isolation === '') cs.Isolation = 'default';
  if (tt.ForceUpdate === undefined || tt.ForceUpdate === null) tt.ForceUpdate = 0;
  if (tt.Runtime === undefined || tt.Runtime === null || tt.Runtime === '') tt.Runtime = 'container';
  spec.TaskTemplate = ordered(tt, TASK_ORDER);
  return ordered(spec, SPEC_ORDER) as ClusterObject;
}

/** A name not used by another service (swarmkit's words; 409 as dockerd answers). */
export function checkNameFree(all: ServiceRecord[], name: string, selfId?: string): void {
  if (all.some((s) => s.Spec.Name === name && s.ID !== selfId))
    throw conflict(`rpc error: code = AlreadyExists desc = name conflicts with an existing object: service ${name} already exists`);
}

const SEC = 1_000_000_000;

export interface RestartPolicy {
  Condition: 'none' | 'on-failure' | 'any';
  Delay: number;
  MaxAttempts: number;
  Window: number;
}
export interface UpdatePolicy {
  Parallelism: number;
  Delay: number;
  FailureAction: 'pause' | 'continue' | 'rollback';
  Monitor: number;
  MaxFailureRatio: number;
  Order: 'stop-first' | 'start-first';
}

export function restartPolicy(spec: ClusterObject): RestartPolicy {
  const rp = obj(obj(spec.TaskTemplate).RestartPolicy);
  const jobs = modeOf(spec).endsWith('-job');
  return {
    Condition: (rp.Condition as RestartPolicy['Condition']) || (jobs ? 'on-failure' : 'any'),
    Delay: typeof rp.Delay === 'number' ? rp.Delay : 5 * SEC,
    MaxAttempts: typeof rp.MaxAttempts === 'number' ? rp.MaxAttempts : 0,
    Window: typeof rp.Window === 'number' ? rp.Window : 0,
  };
}

export function updatePolicy(spec: ClusterObject, rollback = false): UpdatePolicy {
  const u = obj(spec[rollback ? 'RollbackConfig' : 'UpdateConfig']);
  return {
    Parallelism: typeof u.Parallelism === 'number' ? u.Parallelism : 1,
    Delay: typeof u.Delay === 'number' ? u.Delay : 0,
    FailureAction: (u.FailureAction as UpdatePolicy['FailureAction']) || 'pause',
    Monitor: typeof u.Monitor === 'number' && u.Monitor > 0 ? u.Monitor : 5 * SEC,
    MaxFailureRatio: typeof u.MaxFailureRatio === 'number' ? u.MaxFailureRatio : 0,
    Order: (u.Order as UpdatePolicy['Order']) || 'stop-first',
  };
}

/** dockerd's `insertDefaults`: the spec with every default the engine applies made explicit. */
export function withServiceDefaults(spec: ClusterObject): ClusterObject {
  const s = structuredClone(spec);
  const tt = (s.TaskTemplate = obj(s.TaskTemplate));
  const cs = (tt.ContainerSpec = obj(tt.ContainerSpec));
  if (cs.StopGracePeriod === undefined) cs.StopGracePeriod = 10 * SEC;
  if (cs.DNSConfig === undefined) cs.DNSConfig = {};
  if (cs.Isolation === undefined) cs.Isolation = 'default';
  tt.Resources = { Limits: {}, Reservations: {}, ...obj(tt.Resources) };
  tt.RestartPolicy = { ...restartPolicy(s) };
  tt.Placement = obj(tt.Placement);
  if (tt.ForceUpdate === undefined) tt.ForceUpdate = 0;
  if (tt.Runtime === undefined) tt.Runtime = 'container';
  const mode = modeOf(s);
  if (mode === 'replicated' || mode === 'global') {
    s.UpdateConfig = { ...updatePolicy(s) };
    s.RollbackConfig = { ...updatePolicy(s, true) };
  }
  s.EndpointSpec = { Mode: 'vip', ...obj(s.EndpointSpec) };
  return s;
}

/**
 * The EndpointSpec as it reads back through swarmkit's enums: a missing Mode is `vip`, a port's
 * missing Protocol `tcp` and PublishMode `ingress` (Go's field order; zero fields left out). A
 * spec without EndpointSpec keeps none, as dockerd's.
 */
function normalizeEndpoint(spec: ClusterObject): void {
  if (!isObj(spec.EndpointSpec)) return;
  const ep = spec.EndpointSpec;
  if (ep.Mode !== undefined && ep.Mode !== null && !['', 'vip', 'dnsrr'].includes(String(ep.Mode)))
    throw invalidParameter(`invalid resolution mode: ${JSON.stringify(ep.Mode)}`);
  const ports = Array.isArray(ep.Ports)
    ? ep.Ports.map((p) => {
        const port = obj(p);
        return {
          ...(port.Name ? { Name: port.Name } : {}),
          Protocol: port.Protocol || 'tcp',
          ...(port.TargetPort ? { TargetPort: port.TargetPort } : {}),
          ...(port.PublishedPort ? { PublishedPort: port.PublishedPort } : {}),
          PublishMode: port.PublishMode || 'ingress',
        };
      })
    : [];
  spec.EndpointSpec = { Mode: ep.Mode || 'vip', ...(ports.length ? { Ports: ports } : {}) };
}

/**
 * Whether an update changes what the tasks run (a new SpecVersion: a rolling update). Compared with
 * the defaults made explicit and keys in one order: a client that sends back the spec it read with
 * `insertDefaults` (docker-py's scale does) changes nothing, so no task is replaced.
 */
export function tasksChanged(next: ClusterObject, cur: ClusterObject): boolean {
  const a = withServiceDefaults(next);
  const b = withServiceDefaults(cur);
  return canonical(a.TaskTemplate) !== canonical(b.TaskTemplate) || canonical(a.EndpointSpec) !== canonical(b.EndpointSpec);
}

/** JSON with every object's keys sorted. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    isObj(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, x[k]]),
        )
      : x,
  );
}

export interface ServiceCounts {
  running: number;
  desired: number;
  completed: number;
}

/** A service's task counts for `service ls` (ServiceStatus): running, desired, completed (jobs). */
export function serviceCounts(s: ServiceRecord, tasks: TaskRecord[]): ServiceCounts {
  const mine = tasks.filter((t) => t.ServiceID === s.ID);
  const live = mine.filter((t) => t.DesiredState === 'running');
  const mode = modeOf(s.Spec);
  return {
    running: live.filter((t) => t.Status.State === 'running').length,
    desired:
      mode === 'replicated' || mode === 'replicated-job' ? replicasOf(s.Spec) : live.filter((t) => !isTerminal(t.Status.State)).length,
    completed: mine.filter((t) => t.Status.State === 'complete' && (t.JobIteration ?? 0) === (s.JobIteration ?? 0)).length,
  };
}

/** `service update --rollback`: the previous spec back, as a new spec version (swarmkit's words when there is none). */
export function rolledBack(cur: ServiceRecord, now: string): ServiceRecord {
  if (!cur.PreviousSpec)
    throw invalidParameter(`rpc error: code = FailedPrecondition desc = service ${cur.ID} does not have a previous spec`);
  return {
    ...cur,
    Spec: cur.PreviousSpec,
    PreviousSpec: cur.Spec,
    UpdatedAt: now,
    SpecVersion: cur.SpecVersion + 1,
    UpdateStatus: { State: 'rollback_started', StartedAt: now, Message: 'manually requested rollback' },
  };
}

export function serviceView(
  rec: ServiceRecord,
  version: number,
  opts: { insertDefaults?: boolean; counts?: ServiceCounts },
): ClusterObject {
  const spec = opts.insertDefaults ? withServiceDefaults(rec.Spec) : rec.Spec;
  const ep = obj(rec.Spec.EndpointSpec);
  const view: ClusterObject = {
    ID: rec.ID,
    Version: { Index: version },
    CreatedAt: rec.CreatedAt,
    UpdatedAt: rec.UpdatedAt,
    Spec: withoutPullOptions(spec),
  };
  if (rec.PreviousSpec)
    view.PreviousSpec = withoutPullOptions(opts.insertDefaults ? withServiceDefaults(rec.PreviousSpec) : rec.PreviousSpec);
  // No EndpointSpec: swarmkit's Endpoint has no spec either (its mode is still vip's).
  view.Endpoint = {
    Spec: isObj(rec.Spec.EndpointSpec)
      ? { Mode: (ep.Mode as string) || 'vip', ...(Array.isArray(ep.Ports) && ep.Ports.length ? { Ports: ep.Ports } : {}) }
      : {},
    ...(rec.Ports?.length ? { Ports: rec.Ports } : Array.isArray(ep.Ports) && ep.Ports.length ? { Ports: ep.Ports } : {}),
    ...(rec.VirtualIPs?.length ? { VirtualIPs: rec.VirtualIPs } : {}),
  };
  if (rec.UpdateStatus) view.UpdateStatus = rec.UpdateStatus;
  if (opts.counts)
    view.ServiceStatus = {
      RunningTasks: opts.counts.running,
      DesiredTasks: opts.counts.desired,
      CompletedTasks: opts.counts.completed,
    };
  if (modeOf(rec.Spec).endsWith('-job')) view.JobStatus = { JobIteration: { Index: rec.JobIteration ?? 0 }, LastExecution: rec.UpdatedAt };
  return view;
}

const SERVICE_FILTERS = ['id', 'label', 'mode', 'name'] as const;

export function filterServices(all: ServiceRecord[], filters: Map<string, string[]>): ServiceRecord[] {
  checkFilterNames(filters, SERVICE_FILTERS);
  for (const m of filters.get('mode') ?? [])
    if (!['replicated', 'global', 'replicated-job', 'global-job'].includes(m)) throw invalidParameter(`invalid filter 'mode=${m}'`);
  const any = (name: string, test: (v: string) => boolean) => {
    const values = filters.get(name);
    return !values || values.length === 0 || values.some(test);
  };
  return all.filter(
    (s) =>
      any('id', (v) => s.ID.startsWith(v)) &&
      any('name', (v) => String(s.Spec.Name ?? '').startsWith(v)) &&
      any('mode', (v) => modeOf(s.Spec) === v) &&
      allLabelsMatch(obj(s.Spec.Labels) as Record<string, string>, filters.get('label') ?? []),
  );
}

/** Full ID, then name, then unique ID prefix (swarmkit's order). */
export function findService<T extends { ID: string; Spec: ClusterObject }>(all: T[], ref: string): T {
  const byId = all.find((s) => s.ID === ref);
  if (byId) return byId;
  const byName = all.find((s) => s.Spec.Name === ref);
  if (byName) return byName;
  const byPrefix = ref === '' ? [] : all.filter((s) => s.ID.startsWith(ref));
  if (byPrefix.length === 1) return byPrefix[0]!;
  if (byPrefix.length > 1) throw invalidParameter(`service ${ref} is ambiguous (${byPrefix.length} matches found)`);
  throw notFound(`service ${ref} not found`);
}

/**
 * The networks a service's tasks join: TaskTemplate.Networks, or the deprecated Spec.Networks when
 * the template has none (as swarmkit). Both stay in the spec where the client put them.
 */
export function effectiveNetworks(spec: ClusterObject): unknown[] {
  const tt = obj(spec.TaskTemplate).Networks;
  if (Array.isArray(tt) && tt.length) return tt;
  return Array.isArray(spec.Networks) ? spec.Networks : [];
}

/** The spec a new task runs: the TaskTemplate, with the service-level networks when it has none. */
export function taskTemplateOf(spec: ClusterObject): ClusterObject {
  const tt = obj(spec.TaskTemplate) as ClusterObject;
  const own = tt.Networks;
  if ((Array.isArray(own) && own.length) || !Array.isArray(spec.Networks) || !spec.Networks.length) return tt;
  return { ...tt, Networks: spec.Networks };
}

/** TaskTemplate.Networks and Spec.Networks: each a Target (overlay network name or ID) with Aliases. */
function checkNetworks(spec: Record<string, unknown>, tt: Record<string, unknown>): void {
  if (tt.Networks !== undefined && tt.Networks !== null && !Array.isArray(tt.Networks))
    throw invalidParameter('invalid TaskTemplate.Networks: must be a list');
  if (spec.Networks !== undefined && spec.Networks !== null && !Array.isArray(spec.Networks))
    throw invalidParameter('invalid Networks: must be a list');
  for (const list of [tt.Networks, spec.Networks]) {
    const seen = new Set<string>();
    for (const n of Array.isArray(list) ? list : []) {
      const target = obj(n).Target;
      if (typeof target !== 'string' || !target)
        throw invalidParameter('rpc error: code = InvalidArgument desc = network target must be set');
      if (seen.has(target))
        throw invalidParameter(`rpc error: code = InvalidArgument desc = service cannot have duplicate network attachments: ${target}`);
      seen.add(target);
      const aliases = obj(n).Aliases;
      if (aliases !== undefined && aliases !== null && (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string')))
        throw invalidParameter('invalid Networks.Aliases: must be a list of strings');
    }
  }
  if (obj(spec.EndpointSpec).Mode === 'dnsrr' && !effectiveNetworks(spec).length)
    throw invalidParameter('rpc error: code = InvalidArgument desc = endpoint mode dnsrr needs the service on a network');
}
