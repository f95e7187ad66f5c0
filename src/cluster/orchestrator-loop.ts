// The orchestrator's loop on a manager: every round (a short interval, and at once after a service
// change) the manager whose etcd member leads reads services, tasks and nodes, asks
// orchestrator.ts for a plan and writes it, each write a compare-and-swap on the version it read
// (a write that lost a race is simply planned again next round).
import type { ClusterObject } from '../types/cluster.ts';
import type { Logger } from '../util/log.ts';
import { newId } from './ids.ts';
import type { NodeRecord } from './nodes.ts';
import { plan, type Action } from './orchestrator.ts';
import type { NodeResources, SchedNode } from './scheduler.ts';
import type { ServiceRecord } from './service-spec.ts';
import { serviceKey, taskKey, type ServicesApi } from './services-api.ts';
import type { ClusterStore, Stored } from './store.ts';
import type { TaskRecord } from './tasks.ts';

export interface LoopSource {
  store: ClusterStore;
  api: ServicesApi;
  /** Whether this manager's etcd member leads (only the leader orchestrates). */
  leads(): Promise<boolean>;
  nodes(): Promise<Array<{ rec: NodeRecord; up: boolean }>>;
  historyLimit(): Promise<number>;
}

const ROUND_MS = 500;

export class OrchestratorLoop {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly src: LoopSource,
    private readonly log: Logger,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.round().finally(tick), ROUND_MS);
      this.timer.unref();
    };
    tick();
  }

  /** Runs a round now (after a service change), or right after the one under way. */
  kick(): void {
    if (this.busy) this.again = true;
    else void this.round();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async round(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      do {
        this.again = false;
        if (!(await this.src.leads())) return;
        await this.once();
      } while (this.again && !this.stopped);
    } catch (err) {
      this.log.debug('orchestrator round failed', { error: (err as Error).message });
    } finally {
      this.busy = false;
    }
  }

  private async once(): Promise<void> {
    const [services, tasks, nodes, historyLimit] = await Promise.all([
      this.src.api.services(),
      this.src.api.tasks(),
      this.src.nodes(),
      this.src.historyLimit(),
    ]);
    const actions = plan({
      services: services.map((s) => s.value),
      tasks: tasks.map((t) => t.value),
      nodes: nodes.map(({ rec, up }) => schedNode(rec, up)),
      historyLimit,
      now: Date.now(),
      newId,
    });
    if (!actions.length) return;
    const svc = new Map(services.map((s) => [s.value.ID, s]));
    const tsk = new Map(tasks.map((t) => [t.value.ID, t]));
    for (const a of actions) {
      try {
        await this.apply(a, svc, tsk);
      } catch (err) {
        this.log.debug('orchestrator write lost', { op: a.op, error: (err as Error).message });
      }
    }
  }

  private async apply(a: Action, svc: Map<string, Stored<ServiceRecord>>, tsk: Map<string, Stored<TaskRecord>>): Promise<void> {
    const store = this.src.store;
    const now = new Date().toISOString();
    const task = (id: string) => tsk.get(id);
    switch (a.op) {
      case 'create':
        await store.create(taskKey(a.task.ID), a.task);
        return;
      case 'delete':
        await store.delete(taskKey(a.id));
        return;
      case 'desire': {
        const t = task(a.id);
        if (!t) return;
        t.version = await store.update(taskKey(a.id), (t.value = { ...t.value, DesiredState: a.state, UpdatedAt: now }), t.version);
        return;
      }
      case 'assign': {
        const t = task(a.id);
        if (!t) return;
        const next: TaskRecord = { ...t.value, Status: a.status, UpdatedAt: now };
        if (a.node) next.NodeID = a.node;
        if (a.named) next.AssignedGenericResources = a.named;
        t.version = await store.update(taskKey(a.id), (t.value = next), t.version);
        return;
      }
      case 'updateStatus':
      case 'rollback': {
        const s = svc.get(a.service);
        if (!s) return;
        const next: ServiceRecord = { ...s.value, UpdateStatus: a.status, UpdatedAt: now };
        if (a.op === 'rollback' && s.value.PreviousSpec) {
          next.Spec = s.value.PreviousSpec;
          next.PreviousSpec = s.value.Spec;
          next.SpecVersion = s.value.SpecVersion + 1;
        }
        s.version = await store.update(serviceKey(a.service), (s.value = next), s.version);
        if (a.op === 'rollback') this.log.info('service update rolled back', { service: a.service });
        return;
      }
    }
  }
}

export function schedNode(rec: NodeRecord, up: boolean): SchedNode {
  const platform = (rec.Description.Platform ?? {}) as ClusterObject;
  return {
    id: rec.ID,
    hostname: rec.Description.Hostname ?? '',
    role: rec.Spec.Role,
    availability: rec.Spec.Availability,
    up,
    labels: rec.Spec.Labels ?? {},
    engineLabels: rec.Description.Engine?.Labels ?? {},
    os: String(platform.OS ?? 'linux'),
    arch: String(platform.Architecture ?? ''),
    resources: nodeResources(rec.Description.Resources as ClusterObject | undefined),
  };
}

/** Description.Resources as the scheduler counts them (--node-generic-resource: discrete or named). */
export function nodeResources(r: ClusterObject | undefined): NodeResources {
  const out: NodeResources = { nanoCPUs: Number(r?.NanoCPUs ?? 0), memoryBytes: Number(r?.MemoryBytes ?? 0), discrete: {}, named: {} };
  for (const g of (Array.isArray(r?.GenericResources) ? r.GenericResources : []) as ClusterObject[]) {
    const d = g.DiscreteResourceSpec as { Kind: string; Value: number } | undefined;
    if (d) out.discrete[d.Kind] = (out.discrete[d.Kind] ?? 0) + d.Value;
    const n = g.NamedResourceSpec as { Kind: string; Value: string } | undefined;
    if (n) out.named[n.Kind] = [...(out.named[n.Kind] ?? []), n.Value];
  }
  return out;
}
