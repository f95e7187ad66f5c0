// A run's exit: output drained and the log driver closed, the exit recorded (on disk before
// containerd deletes the task), the run cleaned up, events and waiters told; then the restart
// policy with its backoff, or AutoRemove.
import type { LifecycleState } from '../context.ts';
import type { ContainerRecord } from '../record.ts';
import { removeLocked } from './removal.ts';
import { nextBackoff, shouldRestart } from './restart-policy.ts';
import type { RunningTask, TaskExit } from './running-task.ts';

/** How long an exit waits for the output FIFOs to drain, then for the log driver to write it. */
const IO_DRAIN_MS = 2000;
const LOG_FLUSH_MS = 5000;

/** Resolves after ms (never rejects); used to bound waits on output that may never end. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

export class ExitRecorder {
  /** `startLocked`: a new run of the container (its lock held), for the restart policy. */
  constructor(
    private readonly ctx: LifecycleState,
    private readonly startLocked: (rec: ContainerRecord) => Promise<void>,
  ) {}

  /** Records the run's exit when it comes (errors logged: nobody waits on this). */
  watch(rec: ContainerRecord, task: RunningTask, logging: Promise<void>, startedAt: number): void {
    void task.exited
      .then((exit) => this.onExit(rec, task, exit, logging, startedAt))
      .catch((err) => {
        this.ctx.d.log.error(`recording an exit: ${(err as Error).message}`, { id: rec.Id });
      });
  }

  private async onExit(rec: ContainerRecord, task: RunningTask, exit: TaskExit, logging: Promise<void>, startedAt: number): Promise<void> {
    const { ctx } = this;
    const { d } = ctx;
    await ctx.lock.run(rec.Id, async () => {
      // Output drains before the state says exited: `logs` right after `wait` must see all of it.
      await Promise.race([task.ioDone, delay(IO_DRAIN_MS)]);
      // The driver finishes writing what the streams delivered before it is closed.
      const flushed = logging.catch((err) => d.log.debug(`log driver: ${(err as Error).message}`, { id: rec.Id }));
      await Promise.race([flushed, delay(LOG_FLUSH_MS)]);
      await ctx.closeLogDriver(rec.Id, 'exit');
      const restart = shouldRestart(rec.HostConfig.RestartPolicy, {
        exitCode: exit.status,
        stoppedByUser: rec.Internal.stoppedByUser,
        signalledByUser: rec.Internal.signalledByUser === true,
        restartCount: rec.RestartCount,
        shuttingDown: ctx.shuttingDown || ctx.startupStops.has(rec.Id),
      });
      const state: ContainerRecord['State'] = {
        ...rec.State,
        Status: restart ? 'restarting' : 'exited',
        Running: false,
        Paused: false,
        Restarting: restart,
        OOMKilled: exit.oom,
        Pid: 0,
        ExitCode: exit.status,
        FinishedAt: exit.at,
      };
      // The exit is on disk before containerd deletes the task, the only other holder of its
      // status: a daemon killed in between would otherwise come back to a running record with no
      // task and no status (255). A restart finds the task or its leftovers and cleans them up.
      ctx.persist({ ...rec, State: state });
      await d.launcher.cleanup(rec, task).catch((err) => d.log.warn(`cleanup after exit: ${(err as Error).message}`, { id: rec.Id }));
      ctx.tasks.delete(rec.Id);
      rec.State = state;
      ctx.persist(rec);
      if (exit.oom) ctx.event(rec, 'oom');
      ctx.event(rec, 'die', { exitCode: String(exit.status), execDuration: String(Math.floor((Date.now() - startedAt) / 1000)) });
      d.runs?.emit(rec, 'stopped');
      ctx.waiters.notify(rec.Id, ['not-running', 'next-exit'], { StatusCode: exit.status, Error: null });
      if (restart) {
        const b = ctx.backoff.get(rec.Id) ?? { ms: 0 };
        b.ms = nextBackoff(b.ms, Date.now() - startedAt);
        b.timer = setTimeout(() => {
          this.restartAfterBackoff(rec.Id).catch((err) => d.log.error(`restart after backoff: ${(err as Error).message}`, { id: rec.Id }));
        }, b.ms);
        ctx.backoff.set(rec.Id, b);
      } else if (rec.HostConfig.AutoRemove && !ctx.shuttingDown) {
        await removeLocked(ctx, rec, true); // as dockerd: --rm takes the anonymous volumes along
      }
    });
  }

  private async restartAfterBackoff(id: string): Promise<void> {
    const { ctx } = this;
    const rec = ctx.recs.get(id);
    if (!rec) return;
    await ctx.lock.run(id, async () => {
      if (!rec.State.Restarting || rec.Internal.stoppedByUser || ctx.shuttingDown) return;
      rec.RestartCount++;
      try {
        await this.startLocked(rec);
      } catch (err) {
        ctx.d.log.error(`restart failed: ${(err as Error).message}`, { id });
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        ctx.persist(rec);
      }
    });
  }
}
