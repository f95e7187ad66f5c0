// The containers as the page knows them: loaded once from GET /containers/json?all=1, then kept
// current from the events stream (each container event changes its row at once and re-reads that
// one container), so a table of thousands follows the engine without polling.
import { getJson, onEvents, type EngineEvent } from './api.ts';
import { humanDuration } from './format.ts';

export interface ContainerRow {
  Id: string;
  Names: string[];
  Image: string;
  ImageID: string;
  Command: string;
  Created: number;
  State: string;
  Status: string;
  Ports?: Array<{ IP?: string; PrivatePort: number; PublicPort?: number; Type: string }>;
  Labels?: Record<string, string>;
  Mounts?: Array<{ Name?: string; Source?: string; Destination: string; Type: string }>;
  NetworkSettings?: { Networks?: Record<string, unknown> };
}

// What an event says of the state before the re-read confirms it.
const STATE_OF: Record<string, string> = {
  start: 'running',
  restart: 'running',
  unpause: 'running',
  pause: 'paused',
  die: 'exited',
  stop: 'exited',
  kill: 'running',
  create: 'created',
};

type Listener = () => void;

export class ContainerStore {
  readonly rows = new Map<string, ContainerRow>();
  version = 0;
  loaded = false;
  error = '';
  private listeners = new Set<Listener>();
  private unsubscribe?: () => void;

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    if (!this.unsubscribe) {
      this.unsubscribe = onEvents((e) => this.onEvent(e));
      void this.load();
    }
    return () => this.listeners.delete(fn);
  }

  async load(): Promise<void> {
    try {
      const list = await getJson<ContainerRow[]>('/containers/json?all=1');
      this.rows.clear();
      for (const c of list) this.rows.set(c.Id, c);
      this.loaded = true;
      this.error = '';
    } catch (err) {
      this.error = (err as Error).message;
    }
    this.changed();
  }

  private changed(): void {
    this.version++;
    for (const l of this.listeners) l();
  }

  private onEvent(e: EngineEvent): void {
    // A network (dis)connect changes the container's networks in the list.
    if (e.Type === 'network' && (e.Action === 'connect' || e.Action === 'disconnect') && e.Actor.Attributes?.container) {
      if (this.rows.has(e.Actor.Attributes.container)) this.refresh(e.Actor.Attributes.container);
      return;
    }
    if (e.Type !== 'container') return;
    const id = e.Actor.ID;
    if (e.Action === 'destroy') {
      if (this.gone.size > 10000) this.gone.clear();
      this.gone.add(id); // an answer read before the removal must not bring the row back
      if (this.rows.delete(id)) this.changed();
      return;
    }
    const row = this.rows.get(id);
    const state = STATE_OF[e.Action];
    if (e.Action === 'start' || e.Action === 'restart') this.since.set(id, { state: 'running', time: e.time });
    if (e.Action === 'die') this.since.set(id, { state: 'exited', time: e.time, exitCode: e.Actor.Attributes?.exitCode ?? '0' });
    if (row && state && e.Action !== 'kill' && row.State !== state) {
      this.rows.set(id, { ...row, State: state, Status: state === 'running' ? 'Up' : state === 'paused' ? 'Up (Paused)' : row.Status });
      this.changed();
    }
    if (state || e.Action === 'rename' || e.Action === 'update' || e.Action.startsWith('health_status')) this.refresh(id);
  }

  /** When this page saw each container start or stop (event time): the Status column ages from it. */
  readonly since = new Map<string, { state: string; time: number; exitCode?: string }>();
  private pending = new Set<string>();
  private gone = new Set<string>();
  private flushing = false;

  /** Re-reads a container (list form, so the row keeps the list's fields); a burst of events makes one request per 100 containers. */
  refresh(id: string): void {
    this.pending.add(id);
    if (!this.flushing) {
      this.flushing = true;
      setTimeout(() => void this.flush(), 0);
    }
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.size) {
        const ids = [...this.pending].slice(0, 100);
        for (const id of ids) this.pending.delete(id);
        try {
          const list = await getJson<ContainerRow[]>(`/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ id: ids }))}`);
          const found = new Set(list.map((c) => c.Id));
          for (const c of list) if (!this.gone.has(c.Id)) this.rows.set(c.Id, c);
          for (const id of ids) if (!found.has(id)) this.rows.delete(id); // removed meanwhile
          this.changed();
        } catch (err) {
          console.warn('refresh:', (err as Error).message);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}

export const containerStore = new ContainerStore();

/** docker ps' Status, aged to `now` when this page saw the start or exit; otherwise the daemon's words at the last read. */
export function statusOf(c: ContainerRow, now: number): string {
  const seen = containerStore.since.get(c.Id);
  if (seen?.state === 'running' && c.State === 'running') return `Up ${humanDuration(now - seen.time)}`;
  if (seen?.state === 'running' && c.State === 'paused') return `Up ${humanDuration(now - seen.time)} (Paused)`;
  if (seen?.state === 'exited' && c.State === 'exited') return `Exited (${seen.exitCode}) ${humanDuration(now - seen.time)} ago`;
  return c.Status;
}

export function nameOf(c: { Names?: string[]; Id: string }): string {
  return (c.Names?.[0] ?? c.Id.slice(0, 12)).replace(/^\//, '');
}
