// The orchestrator, pure: from the services, tasks and nodes in the store it plans the writes that
// bring the tasks to what the services ask — a task per slot (replicated: slots 1..Replicas;
// global: one per eligible node; jobs: until complete), restart policy (condition, delay, max
// attempts, counted within Window when set), nodes that went down or were drained, rolling updates
// (parallelism, delay, order, failure action past MaxFailureRatio within Monitor, rollback) and the
// task history limit. Placement and resources are the scheduler's (scheduler.ts). The manager's loop (orchestrator-loop.ts)
// applies the plan; this file decides only.
import type { ClusterObject } from '../../types/cluster.ts';
import { addUse, assignNamed, constraintsOf, demandOf, eligible, filterNodes, pickNode, type Load, type SchedNode } from './scheduler.ts';
import { modeOf, replicasOf, restartPolicy, taskTemplateOf, updatePolicy, type ServiceRecord, type UpdateStatus } from './service-spec.ts';
import { isTerminal, namedOf, stateRank, type TaskRecord, type TaskState, type TaskStatus } from './tasks.ts';

export type Action =
  | { op: 'create'; task: TaskRecord }
  | { op: 'desire'; id: string; state: TaskState }
  | { op: 'assign'; id: string; node: string | undefined; status: TaskStatus; named?: string[] }
  | { op: 'delete'; id: string }
  | { op: 'updateStatus'; service: string; status: UpdateStatus }
  | { op: 'rollback'; service: string; status: UpdateStatus };

export interface World {
  services: ServiceRecord[];
  tasks: TaskRecord[];
  nodes: SchedNode[];
  historyLimit: number;
  now: number;
  newId: () => string;
}

const ms = (ns: number) => ns / 1e6;
const at = (iso: string | undefined) => (iso ? Date.parse(iso) : 0);

function status(now: number, state: TaskState, message: string, err?: string): TaskStatus {
  return { Timestamp: new Date(now).toISOString(), State: state, Message: message, ...(err ? { Err: err } : {}) };
}

/** The plan of one round. Deterministic for a given world (IDs come from `newId`). */
export function plan(w: World): Action[] {
  const out: Action[] = [];
  const nodes = new Map(w.nodes.map((n) => [n.id, n]));
  const services = new Map(w.services.map((s) => [s.ID, s]));
  const nodeOk = (id: string | undefined) => id === undefined || nodes.get(id)?.up === true;
  // Tasks of removed services go (their containers are removed by each node's agent).
  for (const t of w.tasks) if (!services.has(t.ServiceID)) out.push({ op: 'delete', id: t.ID });
  // Stopped tasks of a node removed from the cluster can never report: they go (the live ones are
  // replaced below first, then go the same way next round).
  for (const t of w.tasks)
    if (services.has(t.ServiceID) && t.NodeID && !nodes.has(t.NodeID) && t.DesiredState !== 'running') out.push({ op: 'delete', id: t.ID });

  const load: Load = { service: new Map(), total: new Map(), use: new Map() };
  const byService = new Map<string, TaskRecord[]>();
  for (const t of w.tasks) {
    const list = byService.get(t.ServiceID);
    if (list) list.push(t);
    else byService.set(t.ServiceID, [t]);
    if (t.NodeID && !isTerminal(t.Status.State) && t.DesiredState === 'running')
      load.total.set(t.NodeID, (load.total.get(t.NodeID) ?? 0) + 1);
    // Reservations and host ports are held until the task's container is gone (desired or not).
    if (t.NodeID && !isTerminal(t.Status.State) && stateRank(t.Status.State) >= stateRank('assigned'))
      addUse(load, t.NodeID, demandOf(t.Spec, t.Ports), namedOf(t));
  }

  for (const s of w.services) {
    const mine = byService.get(s.ID) ?? [];
    load.service = new Map();
    for (const t of mine)
      if (t.NodeID && !isTerminal(t.Status.State) && t.DesiredState === 'running')
        load.service.set(t.NodeID, (load.service.get(t.NodeID) ?? 0) + 1);
    planService(w, s, mine, nodes, nodeOk, load, out);
  }
  return out;
}

function planService(
  w: World,
  s: ServiceRecord,
  mine: TaskRecord[],
  nodes: Map<string, SchedNode>,
  nodeOk: (id: string | undefined) => boolean,
  load: Load,
  out: Action[],
): void {
  const mode = modeOf(s.Spec);
  const job = mode.endsWith('-job');
  const global = mode === 'global' || mode === 'global-job';
  const template = taskTemplateOf(s.Spec);
  const restart = restartPolicy(s.Spec);
  const iteration = s.JobIteration ?? 0;
  const ports = (s.Ports ?? ((s.Spec.EndpointSpec ?? {}) as ClusterObject).Ports) as unknown[] | undefined;
  const dnsrr = ((s.Spec.EndpointSpec ?? {}) as ClusterObject).Mode === 'dnsrr';
  const current = job ? mine.filter((t) => (t.JobIteration ?? 0) === iteration) : mine;
  // Tasks of an earlier job iteration stop.
  for (const t of mine)
    if (job && (t.JobIteration ?? 0) !== iteration && t.DesiredState === 'running') out.push({ op: 'desire', id: t.ID, state: 'shutdown' });

  const targets = global ? eligible([...nodes.values()], constraintsOf(template)).map((n) => n.id) : [];
  const slotKeys: string[] = global ? targets : Array.from({ length: replicasOf(s.Spec) }, (_, i) => String(i + 1));
  const keyOf = (t: TaskRecord) => (global ? (t.NodeID ?? '') : String(t.Slot ?? 0));
  const bySlot = new Map<string, TaskRecord[]>();
  for (const t of current) {
    const k = keyOf(t);
    const list = bySlot.get(k);
    if (list) list.push(t);
    else bySlot.set(k, [t]);
  }
  const wanted = new Set(slotKeys);
  const labels = s.Spec.Labels;
  const serviceLabels =
    labels && typeof labels === 'object' && Object.keys(labels).length ? { ...(labels as Record<string, string>) } : undefined;
  const newTask = (key: string, restarts: number, restartTimes?: number[]): TaskRecord => {
    const id = w.newId();
    const now = new Date(w.now).toISOString();
    const t: TaskRecord = {
      ID: id,
      CreatedAt: now,
      UpdatedAt: now,
      Labels: {},
      Spec: template,
      ServiceID: s.ID,
      ServiceName: String(s.Spec.Name ?? s.ID),
      ...(serviceLabels ? { ServiceLabels: serviceLabels } : {}),
      SpecVersion: s.SpecVersion,
      Status: status(w.now, 'new', 'created'),
      DesiredState: 'running',
      Restarts: restarts,
      ...(job ? { JobIteration: iteration } : {}),
      ...(ports ? { Ports: ports } : {}),
      ...(dnsrr ? { EndpointMode: 'dnsrr' } : {}),
      ...(restartTimes?.length ? { RestartTimes: restartTimes } : {}),
    };
    if (global) {
      // The node is the slot; the task waits (pending, not run by the node) until it fits there.
      t.NodeID = key;
      const fit = placeOn(key, t);
      t.Status = fit === true ? status(w.now, 'assigned', 'scheduler assigned task to node') : fit;
    } else {
      t.Slot = Number(key);
      const pick = pickNode([...nodes.values()], template, load, t.Ports);
      if ('node' in pick) {
        t.NodeID = pick.node;
        if (pick.named.length) t.AssignedGenericResources = pick.named;
        t.Status = status(w.now, 'assigned', 'scheduler assigned task to node');
      } else t.Status = status(w.now, 'pending', 'pending task scheduling', pick.message);
    }
    out.push({ op: 'create', task: t });
    created++;
    bySlot.set(key, [...(bySlot.get(key) ?? []), t]); // the history limit counts it
    return t;
  };
  /** A global task on its node: true (and its use recorded) if it fits there, else its pending status. */
  const placeOn = (id: string, t: TaskRecord): true | TaskStatus => {
    const n = nodes.get(id);
    const d = demandOf(template, t.Ports);
    const r = n ? filterNodes([n], template, d, load) : { message: 'no suitable node' };
    if ('message' in r) return status(w.now, 'pending', 'pending task scheduling', r.message);
    const named = assignNamed(n!, d, load.use?.get(id));
    if (named.length) t.AssignedGenericResources = named;
    else delete t.AssignedGenericResources;
    load.service.set(id, (load.service.get(id) ?? 0) + 1);
    addUse(load, id, d, named);
    return true;
  };
  const liveSlots = new Map<string, TaskRecord[]>();
  // A replicated job runs at most MaxConcurrent tasks at a time (the CLI's --max-concurrent).
  const rj = ((s.Spec.Mode ?? {}) as ClusterObject).ReplicatedJob as ClusterObject | undefined;
  const maxConcurrent = typeof rj?.MaxConcurrent === 'number' ? rj.MaxConcurrent : 0;
  let created = 0;
  const activeJobTasks = () => created + current.filter((t) => t.DesiredState === 'running' && !isTerminal(t.Status.State)).length;
  const updating = s.UpdateStatus && (s.UpdateStatus.State === 'updating' || s.UpdateStatus.State === 'rollback_started');
  const started = at(s.UpdateStatus?.StartedAt);

  for (const [key, tasks] of bySlot) {
    const live = tasks.filter((t) => t.DesiredState === 'running');
    if (!wanted.has(key)) {
      for (const t of live) out.push({ op: 'desire', id: t.ID, state: 'shutdown' });
      continue;
    }
    const keep: TaskRecord[] = [];
    for (const t of live) {
      const node = t.NodeID ? nodes.get(t.NodeID) : undefined;
      if (t.NodeID && (!node || !node.up || node.availability === 'drain')) {
        // Moved off a node that is down, gone or drained: replaced at once.
        out.push({ op: 'desire', id: t.ID, state: 'shutdown' });
        continue;
      }
      if (global && t.NodeID && (t.Status.State === 'pending' || t.Status.State === 'new')) {
        const probe = { ...t };
        const fit = placeOn(t.NodeID, probe);
        if (fit === true)
          out.push({
            op: 'assign',
            id: t.ID,
            node: t.NodeID,
            status: status(w.now, 'assigned', 'scheduler assigned task to node'),
            ...(probe.AssignedGenericResources ? { named: probe.AssignedGenericResources } : {}),
          });
        else if (t.Status.Err !== fit.Err) out.push({ op: 'assign', id: t.ID, node: t.NodeID, status: fit });
      }
      if (!t.NodeID && !isTerminal(t.Status.State)) {
        const pick = pickNode([...nodes.values()], template, load, t.Ports);
        if ('node' in pick)
          out.push({
            op: 'assign',
            id: t.ID,
            node: pick.node,
            status: status(w.now, 'assigned', 'scheduler assigned task to node'),
            ...(pick.named.length ? { named: pick.named } : {}),
          });
        else if (t.Status.Err !== pick.message)
          out.push({ op: 'assign', id: t.ID, node: undefined, status: status(w.now, 'pending', 'pending task scheduling', pick.message) });
      }
      keep.push(t);
    }
    liveSlots.set(key, keep);
  }

  // Start-first updates leave two live tasks in a slot: the old goes once the new one runs.
  for (const [, live] of liveSlots) {
    if (live.length < 2) continue;
    const newest = live.reduce((a, b) =>
      b.SpecVersion > a.SpecVersion || (b.SpecVersion === a.SpecVersion && b.CreatedAt > a.CreatedAt) ? b : a,
    );
    if (newest.Status.State === 'running') for (const t of live) if (t !== newest) out.push({ op: 'desire', id: t.ID, state: 'shutdown' });
  }

  for (const key of slotKeys) {
    const tasks = bySlot.get(key) ?? [];
    const live = liveSlots.get(key) ?? [];
    if (live.length) {
      const t = live[live.length - 1]!;
      if (live.length === 1 && isTerminal(t.Status.State)) {
        const failed = t.Status.State === 'failed' || t.Status.State === 'rejected';
        const wants =
          restart.Condition === 'any' ? !(job && t.Status.State === 'complete') : restart.Condition === 'on-failure' ? failed : false;
        // With a Window, only the restarts within it count (swarmkit's lookback), else all of the slot's.
        const window = ms(restart.Window);
        const recent = window ? (t.RestartTimes ?? []).filter((x) => x > w.now - window) : [];
        const attemptsLeft = restart.MaxAttempts === 0 || (window ? recent.length < restart.MaxAttempts : t.Restarts < restart.MaxAttempts);
        if (!wants || !attemptsLeft) {
          if (job && t.DesiredState !== 'complete' && t.Status.State === 'complete')
            out.push({ op: 'desire', id: t.ID, state: 'complete' });
          continue; // settled: the slot keeps its last task
        }
        if (w.now < at(t.Status.Timestamp) + ms(restart.Delay)) continue;
        out.push({ op: 'desire', id: t.ID, state: 'shutdown' });
        if (!global || nodeOk(key)) newTask(key, t.Restarts + 1, window ? [...recent, w.now] : undefined);
      }
      continue;
    }
    if (job && tasks.some((t) => t.Status.State === 'complete')) continue;
    // Stop-first: wait until the task being stopped on a live node has stopped.
    const stopping = tasks.some((t) => t.DesiredState !== 'running' && !isTerminal(t.Status.State) && t.NodeID && nodeOk(t.NodeID));
    if (stopping) continue;
    if (job && maxConcurrent && activeJobTasks() >= maxConcurrent) continue;
    newTask(key, 0);
  }

  if (!job) planUpdate(w, s, mine, liveSlots, wanted, started, !!updating, newTask, out);
  planHistory(w, bySlot, out);
}

function planUpdate(
  w: World,
  s: ServiceRecord,
  mine: TaskRecord[],
  liveSlots: Map<string, TaskRecord[]>,
  wanted: Set<string>,
  started: number,
  updating: boolean,
  newTask: (key: string, restarts: number, restartTimes?: number[]) => TaskRecord,
  out: Action[],
): void {
  const state = s.UpdateStatus?.State;
  if (state === 'paused' || state === 'rollback_paused') return;
  const rollingBack = state === 'rollback_started';
  const policy = updatePolicy(s.Spec, rollingBack);
  const live = [...liveSlots.entries()].filter(([k]) => wanted.has(k));
  const fresh = live.flatMap(([, ts]) => ts).filter((t) => t.SpecVersion === s.SpecVersion && at(t.CreatedAt) >= started);
  if (updating) {
    // Slots whose task of this update failed within Monitor (plus time to start): past MaxFailureRatio
    // of the service's slots, the FailureAction (swarmkit: failures / slots updated > ratio).
    const failures = mine.filter(
      (t) =>
        t.SpecVersion === s.SpecVersion &&
        at(t.CreatedAt) >= started &&
        (t.Status.State === 'failed' || t.Status.State === 'rejected') &&
        at(t.Status.Timestamp) <= at(t.CreatedAt) + ms(policy.Monitor) + 60_000,
    );
    // Per slot: the restarts of a slot's failed new task are not more updates failing.
    const failedSlots = new Set(failures.map((t) => t.Slot ?? t.NodeID)).size;
    const failed = failedSlots / Math.max(wanted.size, 1) > policy.MaxFailureRatio ? failures.at(-1) : undefined;
    if (failed && policy.FailureAction !== 'continue') {
      const msg = `update paused due to failure or early termination of task ${failed.ID}`;
      if (policy.FailureAction === 'rollback' && !rollingBack && s.PreviousSpec) {
        out.push({
          op: 'rollback',
          service: s.ID,
          status: {
            State: 'rollback_started',
            StartedAt: new Date(w.now).toISOString(),
            Message: `update rolled back due to failure or early termination of task ${failed.ID}`,
          },
        });
      } else {
        out.push({
          op: 'updateStatus',
          service: s.ID,
          status: { ...s.UpdateStatus!, State: rollingBack ? 'rollback_paused' : 'paused', Message: msg },
        });
      }
      return;
    }
  }
  const outdated = live.filter(([, ts]) => ts.length === 1 && ts[0]!.SpecVersion < s.SpecVersion).map(([k, ts]) => [k, ts[0]!] as const);
  if (!outdated.length) {
    const converged = [...wanted].every((k) => {
      const ts = liveSlots.get(k) ?? [];
      return ts.length === 1 && ts[0]!.SpecVersion === s.SpecVersion && ts[0]!.Status.State === 'running';
    });
    if (updating && converged)
      out.push({
        op: 'updateStatus',
        service: s.ID,
        status: {
          State: rollingBack ? 'rollback_completed' : 'completed',
          StartedAt: s.UpdateStatus!.StartedAt!,
          CompletedAt: new Date(w.now).toISOString(),
          Message: rollingBack ? 'rollback completed' : 'update completed',
        },
      });
    return;
  }
  // A batch is in flight until each of its new tasks has run for the update delay.
  // (A new task that failed is done with, as in swarmkit: it counts against MaxFailureRatio above.)
  const done = (t: TaskRecord) => t.Status.State === 'failed' || t.Status.State === 'rejected';
  const inFlight = fresh.filter(
    (t) => !done(t) && (t.Status.State !== 'running' || w.now < at(t.Status.Timestamp) + ms(policy.Delay)),
  ).length;
  const stopping = live.filter(([, ts]) => ts.length === 0).length;
  const budget = (policy.Parallelism === 0 ? Infinity : policy.Parallelism) - inFlight - stopping;
  for (const [key, old] of outdated.sort((a, b) => Number(a[0]) - Number(b[0])).slice(0, Math.max(0, budget))) {
    if (policy.Order === 'start-first') newTask(key, 0);
    else out.push({ op: 'desire', id: old.ID, state: 'shutdown' });
  }
}

/** Keeps at most `historyLimit` tasks per slot: the oldest stopped ones go. */
function planHistory(w: World, bySlot: Map<string, TaskRecord[]>, out: Action[]): void {
  const limit = Math.max(w.historyLimit, 1);
  for (const tasks of bySlot.values()) {
    if (tasks.length <= limit) continue;
    const old = tasks
      .filter((t) => t.DesiredState !== 'running' && t.DesiredState !== 'complete' && isTerminal(t.Status.State))
      .sort((a, b) => a.CreatedAt.localeCompare(b.CreatedAt));
    for (const t of old.slice(0, tasks.length - limit)) out.push({ op: 'delete', id: t.ID });
  }
}
