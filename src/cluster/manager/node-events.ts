// `node` events of scope swarm, as dockerd's logNodeEvent: every manager watches the node records
// and heartbeat keys in the store and publishes create (a node joined), remove (node rm) and update
// with the attributes that changed (availability.old/new, role.old/new, state.old/new and, for
// managers, reachability.old/new). Actor: the node ID, attribute `name` (Spec.Name, else the
// hostname). Leader changes (leader.old/new on the old and the new leader) are seen by asking etcd
// every LEADER_POLL_MS (etcd has no watch on leadership).
import type { EventPublisher } from '../../events/bus.ts';
import type { Logger } from '../../util/log.ts';
import type { NodeRecord } from './nodes.ts';
import type { ClusterStore } from '../store/store.ts';

interface Seen {
  name: string;
  availability: string;
  role: string;
  state: 'ready' | 'down' | 'unknown';
  manager: boolean;
}

const nameOf = (n: NodeRecord) => String((n.Spec as { Name?: string }).Name || n.Description.Hostname || '');
const reachability = (s: Seen['state']) => (s === 'ready' ? 'reachable' : s === 'down' ? 'unreachable' : 'unknown');

/** The attributes of an update, or null when nothing an event reports changed. */
export function nodeUpdateAttributes(old: Seen, cur: Seen): Record<string, string> | null {
  const a: Record<string, string> = { name: cur.name };
  if (old.availability !== cur.availability)
    Object.assign(a, { 'availability.old': old.availability, 'availability.new': cur.availability });
  if (old.role !== cur.role) Object.assign(a, { 'role.old': old.role, 'role.new': cur.role });
  if (old.state !== cur.state) Object.assign(a, { 'state.old': old.state, 'state.new': cur.state });
  if (old.manager && cur.manager && old.state !== cur.state)
    Object.assign(a, { 'reachability.old': reachability(old.state), 'reachability.new': reachability(cur.state) });
  // Other changes (labels, description) are updates too, as in swarmkit.
  return a;
}

const LEADER_POLL_MS = 2000;

export class NodeEvents {
  /** The node whose etcd member leads, as last seen. */
  private leader: string | undefined;
  private leaderTimer: NodeJS.Timeout | null = null;
  private readonly seen = new Map<string, Seen>();
  private readonly up = new Set<string>();
  private stops: Array<() => Promise<void>> = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ClusterStore,
    private readonly events: EventPublisher,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    // What is there now is known without events; changes from here on are reported.
    const [nodes, beats] = await Promise.all([this.store.list<NodeRecord>('nodes/'), this.store.list('heartbeats/')]);
    for (const b of beats) this.up.add(b.key.slice('heartbeats/'.length));
    for (const n of nodes) this.seen.set(n.value.ID, this.view(n.value, this.up.has(n.value.ID) ? 'ready' : 'down'));
    const later = (fn: () => Promise<void>) => {
      this.queue = this.queue.then(fn).catch((err: Error) => this.log.debug('node event failed', { error: err.message }));
    };
    this.leader = await this.leaderNode().catch(() => undefined); // no quorum yet: no leader to report
    this.leaderTimer = setInterval(() => later(() => this.checkLeader()), LEADER_POLL_MS);
    this.leaderTimer.unref();
    this.stops.push(
      await this.store.watch('nodes/', (key, deleted) => later(() => this.nodeChanged(key.slice('nodes/'.length), deleted))),
      await this.store.watch('heartbeats/', (key, deleted) => later(async () => this.beat(key.slice('heartbeats/'.length), !deleted))),
    );
  }

  async stop(): Promise<void> {
    if (this.leaderTimer) clearInterval(this.leaderTimer);
    this.leaderTimer = null;
    const stops = this.stops;
    this.stops = [];
    await Promise.all(stops.map((s) => s().catch(() => undefined))); // a watch whose store connection is gone has nothing left to cancel
  }

  private view(n: NodeRecord, state: Seen['state']): Seen {
    return {
      name: nameOf(n),
      availability: n.Spec.Availability,
      role: n.Spec.Role,
      state,
      manager: n.Spec.Role === 'manager' && !!n.ManagerAddr,
    };
  }

  private publish(action: string, id: string, attributes: Record<string, string>): void {
    this.events.publish({ Type: 'node', Action: action, Actor: { ID: id, Attributes: attributes }, scope: 'swarm' });
  }

  private async nodeChanged(id: string, deleted: boolean): Promise<void> {
    const old = this.seen.get(id);
    if (deleted) {
      if (!old) return;
      this.seen.delete(id);
      this.publish('remove', id, { name: old.name });
      return;
    }
    const rec = await this.store.get<NodeRecord>(`nodes/${id}`);
    if (!rec) return;
    // A node that just joined has not beaten yet: its state is unknown until it does.
    const cur = this.view(rec.value, old ? old.state : this.up.has(id) ? 'ready' : 'unknown');
    this.seen.set(id, cur);
    if (!old) this.publish('create', id, { name: cur.name });
    else this.publish('update', id, nodeUpdateAttributes(old, cur)!);
  }

  private async leaderNode(): Promise<string | undefined> {
    const { leader } = await this.store.membership.leader();
    return (await this.store.membership.list()).find((m) => m.id === leader)?.name || undefined;
  }

  private async checkLeader(): Promise<void> {
    const now = await this.leaderNode().catch(() => undefined); // no quorum: no leader to read
    if (!now || now === this.leader) return; // no quorum: nothing to say until there is a leader
    const old = this.leader;
    this.leader = now;
    const was = old ? this.seen.get(old) : undefined;
    if (old && was) this.publish('update', old, { name: was.name, 'leader.old': 'true', 'leader.new': 'false' });
    const is = this.seen.get(now);
    if (is) this.publish('update', now, { name: is.name, 'leader.old': 'false', 'leader.new': 'true' });
  }

  private beat(id: string, alive: boolean): void {
    if (alive) this.up.add(id);
    else this.up.delete(id);
    const old = this.seen.get(id);
    const state = alive ? 'ready' : 'down';
    if (!old || old.state === state) return;
    const cur = { ...old, state } as Seen;
    this.seen.set(id, cur);
    this.publish('update', id, nodeUpdateAttributes(old, cur)!);
  }
}
