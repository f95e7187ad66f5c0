// A manager's watch-fed copy of what orchestration reads all the time: services, tasks (indexed by
// node), nodes and heartbeats. Each prefix is read once at a revision and then followed by an etcd
// watch from the next revision, so the copy is the store as of `rev` (no gap, no re-listing): the
// orchestrator plans from it and each agent's sync answers from its node's index instead of
// listing every task. Writers that must read their own writes wait for the watch to reach the
// revision their write returned (`waitFor`). Listeners hear of changes at once: `change` (what the
// orchestrator cares for) and per node (what that node's agent waits for).
import { EventEmitter } from 'node:events';
import type { Logger } from '../../util/log.ts';
import type { NodeRecord } from '../manager/nodes.ts';
import type { ServiceRecord } from '../manager/service-spec.ts';
import type { ClusterStore, Stored } from './store.ts';
import type { TaskRecord } from '../manager/tasks.ts';

type Change<T> = { key: string; value?: T; version: number; created: number };

/** One prefix followed by a watch. */
class Watched<T> {
  readonly items = new Map<string, Stored<T>>();
  rev = 0;
  private stop: (() => Promise<void>) | undefined;

  constructor(
    private readonly store: ClusterStore,
    readonly prefix: string,
    private readonly onChange: (key: string, prev: Stored<T> | undefined, next: Stored<T> | undefined) => void,
    private readonly onLost: (err: Error) => void,
  ) {}

  async start(): Promise<void> {
    const snap = await this.store.snapshot<T>(this.prefix);
    const before = new Map(this.items);
    this.items.clear();
    for (const s of snap.items) this.items.set(s.key, s);
    this.rev = snap.revision;
    // After a reload, what changed meanwhile is told like any change.
    for (const [k, prev] of before) if (!this.items.has(k)) this.onChange(k, prev, undefined);
    for (const [k, next] of this.items) if (before.get(k)?.version !== next.version) this.onChange(k, before.get(k), next);
    this.stop = await this.store.watchFrom<T>(this.prefix, snap.revision + 1, (c) => this.apply(c), this.onLost);
  }

  private apply(c: Change<T>): void {
    const prev = this.items.get(c.key);
    let next: Stored<T> | undefined;
    if (c.value === undefined) this.items.delete(c.key);
    else {
      next = { key: c.key, value: c.value, version: c.version, created: c.created };
      this.items.set(c.key, next);
    }
    this.rev = Math.max(this.rev, c.version);
    this.onChange(c.key, prev, next);
  }

  async close(): Promise<void> {
    const s = this.stop;
    this.stop = undefined;
    await s?.().catch(() => undefined); // a watch whose store connection is gone has nothing left to cancel
  }
}

export type WaitPrefix = 'services' | 'tasks';

export class ClusterCache {
  readonly services: Watched<ServiceRecord>;
  readonly tasks: Watched<TaskRecord>;
  readonly nodes: Watched<NodeRecord>;
  readonly beats: Watched<unknown>;
  /** node ID → IDs of the tasks assigned to it */
  private readonly byNode = new Map<string, Set<string>>();
  private readonly events = new EventEmitter();
  private waiters: Array<{ prefix: WaitPrefix; rev: number; done: () => void }> = [];
  private started = false;
  private closed = false;

  constructor(
    store: ClusterStore,
    private readonly log: Logger | undefined,
  ) {
    this.events.setMaxListeners(0);
    const lost = (w: () => Watched<unknown>) => (err: Error) => void this.reload(w(), err);
    this.services = new Watched<ServiceRecord>(
      store,
      'services/',
      () => this.changed(),
      lost(() => this.services as Watched<unknown>),
    );
    this.tasks = new Watched<TaskRecord>(
      store,
      'tasks/',
      (_k, p, n) => this.taskChanged(p, n),
      lost(() => this.tasks as Watched<unknown>),
    );
    this.nodes = new Watched<NodeRecord>(
      store,
      'nodes/',
      () => this.changed(),
      lost(() => this.nodes as Watched<unknown>),
    );
    // A heartbeat's refresh is no news; a node coming up (key created) or going down (lease expired) is.
    this.beats = new Watched<unknown>(
      store,
      'heartbeats/',
      (_k, p, n) => (!p || !n) && this.changed(),
      lost(() => this.beats),
    );
  }

  get ready(): boolean {
    return this.started && !this.closed;
  }

  async start(): Promise<void> {
    await Promise.all([this.services.start(), this.tasks.start(), this.nodes.start(), this.beats.start()]);
    this.started = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.events.removeAllListeners();
    for (const w of this.waiters) w.done();
    this.waiters = [];
    await Promise.all([this.services.close(), this.tasks.close(), this.nodes.close(), this.beats.close()]);
  }

  /** A watch ended for good (e.g. compaction passed it): read the prefix again and follow on. */
  private async reload(w: Watched<unknown>, err: Error): Promise<void> {
    if (this.closed) return;
    this.log?.warn('cluster watch lost; reading the store again', { prefix: w.prefix, error: err.message });
    await w.close();
    for (let delay = 500; !this.closed; delay = Math.min(delay * 2, 10_000)) {
      try {
        await w.start();
        return;
      } catch (e) {
        this.log?.debug('cluster watch restart failed', { prefix: w.prefix, error: (e as Error).message });
        await new Promise((r) => setTimeout(r, delay).unref());
      }
    }
  }

  /** Orchestration-relevant news: services, tasks, nodes, nodes up or down. */
  onChange(fn: () => void): void {
    this.events.on('change', fn);
  }

  /** Resolves at the next change of `node`'s tasks, or after `ms`. */
  nodeChange(node: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.events.off(`node:${node}`, done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.events.on(`node:${node}`, done);
    });
  }

  /** Resolves true once the watch of `prefix` has applied revision `rev`, false after `ms`. */
  waitFor(prefix: WaitPrefix, rev: number, ms = 5000): Promise<boolean> {
    if (!this.ready || this[prefix].rev >= rev) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = { prefix, rev, done: () => (clearTimeout(timer), resolve(true)) };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve(false);
      }, ms);
      this.waiters.push(w);
    });
  }

  private changed(): void {
    this.events.emit('change');
    this.release();
  }

  private release(): void {
    if (!this.waiters.length) return;
    const keep: typeof this.waiters = [];
    for (const w of this.waiters)
      if (this[w.prefix].rev >= w.rev) w.done();
      else keep.push(w);
    this.waiters = keep;
  }

  private taskChanged(prev: Stored<TaskRecord> | undefined, next: Stored<TaskRecord> | undefined): void {
    const id = (prev ?? next)!.value.ID;
    const from = prev?.value.NodeID;
    const to = next?.value.NodeID;
    if (from && from !== to) {
      const set = this.byNode.get(from);
      set?.delete(id);
      if (set && !set.size) this.byNode.delete(from);
    }
    if (to) {
      const set = this.byNode.get(to) ?? new Set<string>();
      set.add(id);
      this.byNode.set(to, set);
    }
    if (from) this.events.emit(`node:${from}`);
    if (to && to !== from) this.events.emit(`node:${to}`);
    this.changed();
  }

  serviceList(): Stored<ServiceRecord>[] {
    return [...this.services.items.values()];
  }

  taskList(): Stored<TaskRecord>[] {
    return [...this.tasks.items.values()];
  }

  /** The tasks assigned to a node (its agent's view). */
  tasksOf(node: string): Stored<TaskRecord>[] {
    const out: Stored<TaskRecord>[] = [];
    for (const id of this.byNode.get(node) ?? []) {
      const t = this.tasks.items.get(`tasks/${id}`);
      if (t) out.push(t);
    }
    return out;
  }

  task(id: string): Stored<TaskRecord> | undefined {
    return this.tasks.items.get(`tasks/${id}`);
  }

  /** Nodes with whether each is up (its heartbeat key exists). */
  nodeList(): Array<{ rec: NodeRecord; up: boolean }> {
    return [...this.nodes.items.values()].map((s) => ({ rec: s.value, up: this.beats.items.has(`heartbeats/${s.value.ID}`) }));
  }
}
