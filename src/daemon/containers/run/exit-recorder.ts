// A run's exit: output drained and the log driver closed, the exit recorded (on disk before
// containerd deletes the task), the run cleaned up, events and waiters told; then the restart
// policy with its backoff, or AutoRemove.
import type { RunDeps } from '../deps.ts';
import type { LogDrivers } from '../io/log-drivers.ts';
import type { ContainerRecord } from '../record.ts';
import type { ContainerRecords } from '../records.ts';
import { removeLocked } from './removal.ts';
import type { RunState } from './run-state.ts';
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
    private readonly records: ContainerRecords,
    private readonly runs: RunState,
    private readonly logs: LogDrivers,
    private readonly d: RunDeps,
    private readonly startLocked: (rec: ContainerRecord) => Promise<void>,
  ) {}

  /** Records the run's exit when it comes (errors logged: nobody waits on this). */
  watch(rec: ContainerRecord, task: RunningTask, logging: Promise<void>, startedAt: number): void {
    void task.exited
      .then((exit) => this.onExit(rec, task, exit, logging, startedAt))
      .catch((err) => {
        this.d.log.error(`recording an exit: ${(err as Error).message}`, { id: rec.Id });
      });
  }

  private async onExit(rec: ContainerRecord, task: RunningTask, exit: TaskExit, logging: Promise<void>, startedAt: number): Promise<void> {
    const { records, runs, logs, d } = this;
    await runs.lock.run(rec.Id, async () => {
      // Output drains before the state says exited: `logs` right after `wait` must see all of it.
      await Promise.race([task.ioDone, delay(IO_DRAIN_MS)]);
      // The driver finishes writing what the streams delivered before it is closed.
      const flushed = logging.catch((err) => d.log.debug(`log driver: ${(err as Error).message}`, { id: rec.Id }));
      await Promise.race([flushed, delay(LOG_FLUSH_MS)]);
      await logs.close(rec.Id, 'exit');
      const restart = shouldRestart(rec.HostConfig.RestartPolicy, {
        exitCode: exit.status,
        stoppedByUser: rec.Internal.stoppedByUser,
        signalledByUser: rec.Internal.signalledByUser === true,
        restartCount: rec.RestartCount,
        shuttingDown: runs.shuttingDown || runs.startupStops.has(rec.Id),
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
      records.persist({ ...rec, State: state });
      await d.launcher.cleanup(rec, task).catch((err) => d.log.warn(`cleanup after exit: ${(err as Error).message}`, { id: rec.Id }));
      runs.tasks.delete(rec.Id);
      rec.State = state;
      records.persist(rec);
      if (exit.oom) records.event(rec, 'oom');
      records.event(rec, 'die', { exitCode: String(exit.status), execDuration: String(Math.floor((Date.now() - startedAt) / 1000)) });
      d.runs?.emit(rec, 'stopped');
      runs.waiters.notify(rec.Id, ['not-running', 'next-exit'], { StatusCode: exit.status, Error: null });
      if (restart) {
        const b = runs.backoff.get(rec.Id) ?? { ms: 0 };
        b.ms = nextBackoff(b.ms, Date.now() - startedAt);
        b.timer = setTimeout(() => {
          this.restartAfterBackoff(rec.Id).catch((err) => d.log.error(`restart after backoff: ${(err as Error).message}`, { id: rec.Id }));
        }, b.ms);
        runs.backoff.set(rec.Id, b);
      } else if (rec.HostConfig.AutoRemove && !runs.shuttingDown) {
        await removeLocked({ records, runs, logs, d }, rec, true); // as dockerd: --rm takes the anonymous volumes along
      }
    });
  }

  private async restartAfterBackoff(id: string): Promise<void> {
    const { records, runs } = this;
    const rec = records.byId.get(id);
    if (!rec) return;
    await runs.lock.run(id, async () => {
      if (!rec.State.Restarting || rec.Internal.stoppedByUser || runs.shuttingDown) return;
      rec.RestartCount++;
      try {
        await this.startLocked(rec);
      } catch (err) {
        this.d.log.error(`restart failed: ${(err as Error).message}`, { id });
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        records.persist(rec);
      }
    });
  }
}
