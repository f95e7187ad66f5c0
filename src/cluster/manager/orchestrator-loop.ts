// The orchestrator's loop on a manager: a round runs at once after a change of services, tasks,
// nodes or node liveness (the watch-fed cluster-cache.ts; several changes during a round make one
// more round), and every second for what only time changes (restart delays, update delays and
// monitors). In a round the manager holding the orchestrator's lock (taken by the manager whose etcd
// member leads; every write of a round is fenced by it, so two managers never orchestrate at once)
// plans from the cache (orchestrator.ts) and writes the plan (plan-writes.ts: several writes at
// once, each a compare-and-swap on the version it read; a write that lost a race is simply planned
// again); the next round first waits until the cache has seen those writes, so it never plans the
// same task twice. Without the cache (its watch could not start) a round lists the store.
import type { ClusterObject } from '../../types/cluster.ts';
import type { Logger } from '../../util/log.ts';
import { newId } from '../ids.ts';
import type { NodeRecord } from './nodes.ts';
import { plan } from './orchestrator.ts';
import type { NodeResources, SchedNode } from './scheduler.ts';
import type { ServicesApi } from './services-api.ts';
import { writePlan } from './plan-writes.ts';
import type { ClusterStore, Fence } from '../store/store.ts';

/** The store key of the orchestrator's lock (store.ts holdLock): one manager orchestrates at a time. */
export const ORCHESTRATOR_LOCK = 'orchestrator';
/** How long a manager that stopped answering keeps the lock (its lease) before another takes it. */
export const LOCK_TTL_S = 10;

export interface LoopSource {
  store: ClusterStore;
  api: ServicesApi;
  /**
   * The orchestrator's lock while this manager holds it (its mod revision, which fences every write
   * of the rounds), null while another manager does. The manager whose etcd member leads takes it
   * when it is free; a holder keeps it while it lives (a leadership change moves nothing).
   */
  lock(): Promise<number | null>;
  nodes(): Promise<Array<{ rec: NodeRecord; up: boolean }>>;
  historyLimit(): Promise<number>;
}

/** Rounds for what only time changes; changes themselves start a round at once. */
const ROUND_MS = 1000;
/**
 * A pause before a round that changes during the last one asked for: a burst of changes (agents
 * reporting hundreds of tasks) makes one round, not one per change, as each round plans every task.
 */
const AGAIN_MS = 100;

export class OrchestratorLoop {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private again = false;
  private stopped = false;
  /** The latest revisions this loop wrote, which the next round's cache must have seen. */
  private wrote = { tasks: 0, services: 0 };
  private limit: { value: number; at: number } | undefined;
  /** The lock this loop holds (its writes carry it). */
  private fence: Fence | undefined;
  /** When the last round ended and how long it took (the next waits at least twice that). */
  private lastEnd = 0;
  private lastCost = 0;
  private pending: NodeJS.Timeout | null = null;

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

  /**
   * Runs a round now (after a change), or right after the one under way — but never sooner than
   * `gap()` after the last one ended, so that under a stream of changes planning takes at most
   * about a third of the manager's time (each round plans every task).
   */
  kick(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    const wait = this.lastEnd + this.gap() - Date.now();
    if (wait <= 0) void this.round();
    else
      this.pending ??= setTimeout(() => {
        this.pending = null;
        void this.round();
      }, wait);
  }

  private gap(): number {
    return Math.max(AGAIN_MS, 2 * this.lastCost);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pending) clearTimeout(this.pending);
  }

  private async round(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      do {
        if (this.again) await new Promise((r) => setTimeout(r, this.gap()));
        this.again = false;
        if (!(await this.holds())) return;
        const t0 = performance.now();
        try {
          await this.once();
        } finally {
          this.lastCost = performance.now() - t0;
        }
      } while (this.again && !this.stopped);
    } catch (err) {
      this.log.debug('orchestrator round failed', { error: (err as Error).message });
    } finally {
      this.busy = false;
      this.lastEnd = Date.now();
    }
  }

  /**
   * Whether this manager orchestrates. A lock just taken: the cache must first have seen every task
   * and service as the store has them (what the previous holder wrote may still be on its way
   * through this manager's watch: planning without it would create those tasks again).
   */
  private async holds(): Promise<boolean> {
    const version = await this.src.lock();
    if (version === null) {
      if (this.fence) this.log.info('orchestrator lock held by another manager: not orchestrating');
      this.fence = undefined;
      return false;
    }
    if (this.fence?.version !== version) {
      const [tasks, services] = await Promise.all([this.src.store.lastRevision('tasks/'), this.src.store.lastRevision('services/')]);
      this.wrote = { tasks, services };
      this.fence = { key: ORCHESTRATOR_LOCK, version };
      this.log.info('orchestrator lock taken: this manager orchestrates', { revision: version });
    }
    return true;
  }

  /** The cluster's task history limit, read again at most every few seconds. */
  private async historyLimit(): Promise<number> {
    if (!this.limit || Date.now() - this.limit.at > 5000) this.limit = { value: await this.src.historyLimit(), at: Date.now() };
    return this.limit.value;
  }

  private async once(): Promise<void> {
    const cache = this.src.api.cache.ready ? this.src.api.cache : undefined;
    // Never plan from a copy that has not seen this loop's last writes (it would create again what
    // those created): a watch that lags this much makes the round wait for the next one.
    if (
      cache &&
      (await Promise.all([cache.waitFor('tasks', this.wrote.tasks), cache.waitFor('services', this.wrote.services)])).includes(false)
    ) {
      this.log.debug('orchestrator round skipped: the cache is behind its writes');
      this.again = true;
      return;
    }
    const [services, tasks, nodes, historyLimit] = cache
      ? [cache.serviceList(), cache.taskList(), cache.nodeList(), await this.historyLimit()]
      : await Promise.all([this.src.api.services(), this.src.api.tasks(), this.src.nodes(), this.historyLimit()]);
    const actions = plan({
      services: services.map((s) => s.value),
      tasks: tasks.map((t) => t.value),
      nodes: nodes.map(({ rec, up }) => schedNode(rec, up)),
      historyLimit,
      now: Date.now(),
      newId,
    });
    if (!actions.length) return;
    await writePlan(actions, services, tasks, {
      store: this.src.store,
      fence: this.fence,
      written: (which, rev) => (this.wrote[which] = Math.max(this.wrote[which], rev)),
      log: this.log,
    });
  }
}

export function schedNode(rec: NodeRecord, up: boolean): SchedNode {
  const platform = rec.Description.Platform ?? {};
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
