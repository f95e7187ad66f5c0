// Writing an orchestrator round's plan: actions on one object in order, objects in parallel; task
// creates and updates alone on their object in transactions of up to BATCH writes (one Raft
// proposal each), a batch that lost a race written again one by one; every write fenced by the
// orchestrator's lock and each revision written reported (the next round's cache must have seen it).
import type { Logger } from '../../util/log.ts';
import type { ClusterStore, Fence, Stored } from '../store/store.ts';
import { inParallel } from './in-parallel.ts';
import type { Action } from './orchestrator.ts';
import { serviceKey, type ServiceRecord } from './service-spec.ts';
import { taskKey, type TaskRecord } from './tasks.ts';

/** Writes of one round under way at once. */
const WRITE_WIDTH = 32;
/** Task writes per transaction (etcd allows 128 operations), and such transactions at once. */
const BATCH = 100;
const BATCH_WIDTH = 4;

export interface PlanWrites {
  store: ClusterStore;
  /** The orchestrator's lock: a write succeeds only while it is held. */
  fence: Fence | undefined;
  /** A write of tasks or services committed at `rev`. */
  written: (which: 'tasks' | 'services', rev: number) => void;
  log: Logger;
}

/** Writes the plan's actions (lost writes are logged: the next round plans them again). */
export async function writePlan(
  actions: Action[],
  services: Stored<ServiceRecord>[],
  tasks: Stored<TaskRecord>[],
  w: PlanWrites,
): Promise<void> {
  // Copies: apply() moves their value and version along with its writes; the cache's stay the store's.
  const svc = new Map(services.map((s) => [s.value.ID, { ...s }]));
  const tsk = new Map(tasks.map((t) => [t.value.ID, { ...t }]));
  // Actions on one object stay in order (a task's desire then its deletion); objects go in parallel.
  const byObject = new Map<string, Action[]>();
  for (const a of actions) {
    const k = a.op === 'create' ? a.task.ID : a.op === 'updateStatus' || a.op === 'rollback' ? `s:${a.service}` : a.id;
    byObject.set(k, [...(byObject.get(k) ?? []), a]);
  }
  // Creates and task updates alone on their object go in transactions of BATCH writes (one Raft
  // proposal each); a batch that fails (some task changed meanwhile) is written one by one below.
  const lists = [...byObject.values()];
  const single = lists.filter((l) => l.length === 1 && (l[0]!.op === 'create' || l[0]!.op === 'desire' || l[0]!.op === 'assign'));
  const chunks: Action[][] = [];
  for (let i = 0; i < single.length; i += BATCH) chunks.push(single.slice(i, i + BATCH).map((l) => l[0]!));
  const retry: Action[][] = lists.filter((l) => !single.includes(l));
  await inParallel(chunks, BATCH_WIDTH, async (chunk) => {
    const now = new Date().toISOString();
    const writes = chunk.flatMap((a) => {
      if (a.op === 'create') return [{ key: taskKey(a.task.ID), value: a.task as unknown }];
      const t = tsk.get((a as { id: string }).id);
      return t ? [{ key: taskKey(t.value.ID), value: taskAfter(a, t.value, now) as unknown, version: t.version }] : [];
    });
    try {
      const rev = await w.store.batch(writes, w.fence);
      w.written('tasks', rev);
      for (const x of writes) {
        const t = tsk.get((x.value as TaskRecord).ID);
        if (t) [t.value, t.version] = [x.value as TaskRecord, rev];
      }
    } catch (err) {
      w.log.debug('orchestrator batch lost; writing one by one', { writes: writes.length, error: (err as Error).message });
      retry.push(...chunk.map((a) => [a]));
    }
  });
  await inParallel(retry, WRITE_WIDTH, async (list) => {
    for (const a of list) {
      try {
        const rev = await apply(a, svc, tsk, w);
        const which = a.op === 'updateStatus' || a.op === 'rollback' ? 'services' : 'tasks';
        if (rev) w.written(which, rev);
      } catch (err) {
        w.log.debug('orchestrator write lost', { op: a.op, error: (err as Error).message });
      }
    }
  });
}

/** Writes one action; returns the store revision written (0: nothing, or a delete). */
async function apply(
  a: Action,
  svc: Map<string, Stored<ServiceRecord>>,
  tsk: Map<string, Stored<TaskRecord>>,
  w: PlanWrites,
): Promise<number> {
  const { store, fence } = w;
  const now = new Date().toISOString();
  const task = (id: string) => tsk.get(id);
  switch (a.op) {
    case 'create':
      return store.create(taskKey(a.task.ID), a.task, fence);
    case 'delete':
      await store.delete(taskKey(a.id), undefined, fence);
      return 0;
    case 'desire':
    case 'assign': {
      const t = task(a.id);
      if (!t) return 0;
      t.version = await store.update(taskKey(a.id), (t.value = taskAfter(a, t.value, now)), t.version, fence);
      return t.version;
    }
    case 'updateStatus':
    case 'rollback': {
      const s = svc.get(a.service);
      if (!s) return 0;
      const next: ServiceRecord = { ...s.value, UpdateStatus: a.status, UpdatedAt: now };
      if (a.op === 'rollback' && s.value.PreviousSpec) {
        next.Spec = s.value.PreviousSpec;
        next.PreviousSpec = s.value.Spec;
        next.SpecVersion = s.value.SpecVersion + 1;
      }
      s.version = await store.update(serviceKey(a.service), (s.value = next), s.version, fence);
      if (a.op === 'rollback') w.log.info('service update rolled back', { service: a.service });
      return s.version;
    }
  }
}

/** A task after a desire or assign action. */
function taskAfter(a: Action, t: TaskRecord, now: string): TaskRecord {
  if (a.op === 'desire') return { ...t, DesiredState: a.state, UpdatedAt: now };
  if (a.op !== 'assign') return t;
  const next: TaskRecord = { ...t, Status: a.status, UpdatedAt: now };
  if (a.node) next.NodeID = a.node;
  if (a.named) next.AssignedGenericResources = a.named;
  return next;
}
