// Waiting for a task's exit in containerd: Tasks.Wait (re-issued while containerd restarts
// underneath) and the OOM events of the namespace, which say whether a SIGKILL was the kernel's.
import { isNotFound } from '../../../errors.ts';
import type { SupervisorClient } from '../../../supervisor/client.ts';
import type { Logger } from '../../../util/log.ts';
import type { TaskExit } from './running-task.ts';

/** How long the exit of a memory-limited task killed by SIGKILL waits for its OOM event. */
const OOM_EVENT_WAIT_MS = 250;

function tsToIso(ts: { seconds: string | number; nanos: number } | null | undefined): string {
  if (!ts || Number(ts.seconds) <= 0) return new Date().toISOString();
  const ms = Number(ts.seconds) * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(ts.nanos).padStart(9, '0')}Z`;
}

export class ExitWatcher {
  private readonly oomed = new Set<string>();
  /** Exits waiting (briefly) for an OOM event that may still be on its way: see wait. */
  private readonly oomWaiters = new Map<string, () => void>();

  constructor(
    private readonly client: SupervisorClient,
    private readonly log: Logger,
  ) {
    // One filter: containerd ORs the filters of a list, ANDs the terms of one. As two filters this
    // took every event of the namespace (a task's exit too) for an OOM kill.
    client.subscribe([`namespace==${client.namespace},topic=="/tasks/oom"`], (e) => {
      if (e.topic !== '/tasks/oom') return;
      const id = (e.event as { container_id?: string } | null)?.container_id;
      if (!id) return;
      this.oomed.add(id);
      this.oomWaiters.get(id)?.();
    });
  }

  /** A new run of `id`: an OOM kill of an earlier run is no longer its. */
  reset(id: string): void {
    this.oomed.delete(id);
  }

  /** Resolves when an OOM event for `id` arrives, or after `ms`. */
  private oomEvent(id: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.oomWaiters.get(id) === done) this.oomWaiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.oomWaiters.set(id, done);
    });
  }

  /** The OOM kills the task's cgroup counts (cgroup v1 memory.oom_control, v2 memory.events); 0 if unknown. */
  private async oomKills(id: string): Promise<number> {
    try {
      const [m] = await this.client.tasks.metrics([`id==${id}`]);
      const data = m?.data as { memory_oom_control?: { oom_kill?: unknown }; memory_events?: { oom_kill?: unknown } } | null | undefined;
      return Number(data?.memory_oom_control?.oom_kill ?? data?.memory_events?.oom_kill ?? 0);
    } catch (err) {
      this.log.debug(`the exited task's OOM count: ${(err as Error).message}`, { id });
      return 0;
    }
  }

  /** Tasks.Wait, re-issued when containerd restarts underneath (the task itself keeps running). */
  wait(id: string, memoryLimited: boolean): { promise: Promise<TaskExit>; cancel: () => void } {
    let cancelled = false;
    const promise = (async (): Promise<TaskExit> => {
      for (;;) {
        try {
          const r = await this.client.tasks.wait(id, '', { waitForReady: true });
          // The OOM event comes on the event stream, the exit on this call: a memory-limited task
          // killed by SIGKILL gives the event a moment to arrive.
          if (memoryLimited && r.exit_status === 137 && !this.oomed.has(id)) {
            await this.oomEvent(id, OOM_EVENT_WAIT_MS);
            // An event slower than that (a loaded host): the task's cgroup, still there until the
            // task is deleted, counts the kernel's OOM kills.
            if (!this.oomed.has(id) && (await this.oomKills(id)) > 0) this.oomed.add(id);
          }
          return { status: r.exit_status, at: tsToIso(r.exited_at as { seconds: string; nanos: number } | null), oom: this.oomed.has(id) };
        } catch (err) {
          if (cancelled) return new Promise<TaskExit>(() => undefined);
          if (isNotFound(err)) return { status: 255, at: new Date().toISOString(), oom: false };
          // containerd restarting underneath: the task lives on; wait again shortly.
          this.log.debug(`waiting for the exit: ${(err as Error).message}`, { id });
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    })();
    return {
      promise,
      cancel: () => {
        cancelled = true;
      },
    };
  }
}
