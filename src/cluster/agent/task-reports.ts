// The task states an agent decided locally and has not yet seen back in the store: a state only
// moves forward; the reports go out with the next round's sync, or at once (`flush`) for an exit
// seen between rounds, and are dropped once a sync carried them.
import type { Logger } from '../../util/log.ts';
import type { TaskReport } from '../manager/agent-sync.ts';
import { stateRank, type TaskRecord, type TaskState, type TaskStatus } from '../manager/tasks.ts';

export class TaskReports {
  private readonly pending = new Map<string, TaskStatus>();

  /** The task's state as this node knows it: its own newer report, else the record's. */
  stateOf(t: TaskRecord): TaskState {
    return (this.pending.get(t.ID) ?? t.Status).State;
  }

  /** A new state for the task, if it moves forward (with the message and any status fields). */
  set(t: TaskRecord, state: TaskState, message: string, extra: Partial<TaskStatus> = {}): void {
    const prev = this.pending.get(t.ID) ?? t.Status;
    if (stateRank(state) < stateRank(prev.State)) return;
    this.pending.set(t.ID, { ...prev, Timestamp: new Date().toISOString(), State: state, Message: message, ...extra });
  }

  /** The task's container ended: shutdown (no longer meant to run), complete (exit 0), else failed. */
  ended(t: TaskRecord, cid: string, st: { exitCode: number; error?: string }): void {
    const cs = { ContainerID: cid, PID: 0, ExitCode: st.exitCode };
    if (t.DesiredState !== 'running') this.set(t, 'shutdown', 'shutdown', { ContainerStatus: cs });
    else if (st.exitCode === 0 && !st.error) this.set(t, 'complete', 'finished', { ContainerStatus: cs });
    else this.set(t, 'failed', 'task: non-zero exit', { ContainerStatus: cs, Err: st.error || `task: non-zero exit (${st.exitCode})` });
  }

  /** The reports to send now. */
  take(): TaskReport[] {
    return [...this.pending].map(([id, status]) => ({ id, status }));
  }

  /** A sync carried these: each goes unless a newer state was decided meanwhile. */
  sent(reports: TaskReport[]): void {
    for (const r of reports) if (this.pending.get(r.id) === r.status) this.pending.delete(r.id);
  }

  /** The task is gone: nothing of it is reported any more. */
  forget(taskId: string): void {
    this.pending.delete(taskId);
  }

  /** Sends the pending reports now (beside the round, which may be waiting in its long poll). */
  flush(send: (reports: TaskReport[]) => Promise<unknown>, log: Logger): void {
    const reports = this.take();
    if (!reports.length) return;
    send(reports).then(
      () => this.sent(reports),
      (err: Error) => log.debug('agent report failed', { error: err.message }),
    );
  }
}
