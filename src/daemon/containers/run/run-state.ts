// What the runs of the containers hold while the daemon is up: the running tasks, each container's
// output hub and stdin relay, the waiters on exits, the pending restarts of the restart policy
// (backoff), the containers being stopped at start-up, the daemon's shutdown flag, and the
// per-container lock under which a container's state changes one at a time.
import { KeyedMutex } from '../../../util/mutex.ts';
import { OutputHub } from '../io/output-hub.ts';
import type { StdinRelay } from '../io/stdin-relay.ts';
import type { ContainerRecord } from '../record.ts';
import type { RunningTask } from './running-task.ts';
import { ExitWaiters } from './waiters.ts';

export class RunState {
  readonly tasks = new Map<string, RunningTask>();
  readonly hubs = new Map<string, OutputHub>();
  readonly stdinRelays = new Map<string, StdinRelay>();
  readonly waiters = new ExitWaiters();
  /** Pending restarts of containers whose policy asked for one (restart-policy backoff). */
  readonly backoff = new Map<string, { ms: number; timer?: NodeJS.Timeout }>();
  readonly lock = new KeyedMutex();
  /** Containers being stopped at start-up (left running by a crashed daemon, no live-restore). */
  readonly startupStops = new Set<string>();
  shuttingDown = false;

  /** The container's output hub (made on first use; it outlives runs, until the removal). */
  hub(id: string): OutputHub {
    let h = this.hubs.get(id);
    if (!h) {
      h = new OutputHub();
      this.hubs.set(id, h);
    }
    return h;
  }

  /** Drops a restart the policy scheduled (its backoff timer cleared). */
  cancelRestart(rec: ContainerRecord): void {
    const b = this.backoff.get(rec.Id);
    if (b?.timer) clearTimeout(b.timer);
    this.backoff.delete(rec.Id);
  }
}
