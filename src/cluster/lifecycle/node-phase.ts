// Where the node stands in the cluster lifecycle (inactive, pending, active, error, locked), with
// the error /info shows and a locked manager's saved state, and the queue that runs one lifecycle
// change at a time (init, join, leave, restore, unlock, role change, shutdown).
import { unavailable } from '../../errors.ts';
import type { Logger } from '../../util/log.ts';
import { LOCKED } from '../ca/autolock.ts';
import { NOT_A_MANAGER } from '../inactive.ts';
import type { LocalClusterState } from '../node/local-state.ts';

/** dockerd's answer on a worker to a request only managers serve. */
export const WORKER_NOT_MANAGER =
  "This node is not a swarm manager. Worker nodes can't be used to view or modify cluster state. Please run this command on a manager node or promote the current node to a manager.";

export type Phase = 'inactive' | 'pending' | 'active' | 'error' | 'locked';

export class NodePhase {
  phase: Phase = 'inactive';
  /** Why the node is in `error` (/info's Swarm.Error). */
  error = '';
  /** A manager restarted with its node key sealed (autolock), until `swarm unlock`. */
  lockedState: LocalClusterState | null = null;
  private busy: Promise<unknown> = Promise.resolve();

  constructor(private readonly log: Logger) {}

  /** One lifecycle change at a time (init, join, leave, restore, shutdown). */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.busy.then(fn, fn);
    this.busy = run.catch(() => undefined); // The caller gets the failure through `run`; the queue only needs to move on.
    return run;
  }

  /** The node runs its role. */
  activate(): void {
    this.phase = 'active';
    this.error = '';
  }

  /** Why a request only a running manager serves is refused here (`worker`: the node runs as one). */
  notManager(worker: boolean): Error {
    if (this.phase === 'locked') return unavailable(LOCKED);
    if (worker) return unavailable(WORKER_NOT_MANAGER);
    if (this.phase === 'pending') return unavailable('This node is still starting its cluster membership; try again shortly.');
    if (this.phase === 'error') return unavailable(this.error);
    return unavailable(NOT_A_MANAGER);
  }

  fail(msg: string): void {
    this.phase = 'error';
    this.error = msg;
    this.log.error(msg);
  }
}
