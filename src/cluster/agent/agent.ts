// A node's agent (managers and workers alike): every round it reports the states of its tasks to a
// manager and gets back the tasks assigned to it, then runs them as ordinary containers on the
// local engine (named `<service>.<slot>.<task id>` with dockerd's swarm labels), stops those whose
// desired state is no longer running, and removes the containers of tasks that are gone. Its parts:
// the states it reports (task-reports.ts), the containers it runs (task-containers.ts), and how a
// task's container starts (task-start.ts).
import type { Logger } from '../../util/log.ts';
import { containerBody, stopTimeout } from './container-body.ts';
import type { TaskPayloads } from '../manager/secrets-api.ts';
import type { AgentSyncRequest, SyncAnswer } from '../manager/agent-sync.ts';
import { inParallel } from '../manager/in-parallel.ts';
import type { TaskRuntime } from './task-runtime.ts';
import { isTerminal, stateRank, type TaskRecord } from '../manager/tasks.ts';
import { TaskContainers } from './task-containers.ts';
import { TaskReports } from './task-reports.ts';
import { hostPortStatus, pullTaskImage, runTaskContainer } from './task-start.ts';

/**
 * One exchange with a manager: reports in, this node's tasks out. With `known` (the digest of the
 * tasks the agent last got) and no reports, the manager holds the answer until they change or
 * SYNC_WAIT_MS pass (a long poll), so the agent hears of new work at once without busy polling.
 */
export type SyncFn = (req: AgentSyncRequest) => Promise<SyncAnswer>;

/** Pause between rounds (the long poll paces an idle agent); longer after a failed round. */
const ROUND_MS = 50;
const RETRY_MS = 1000;
/** Containers created, started or removed at once by one agent. */
const PARALLEL = 4;
/** How long a stop waits for a round's container work (creates and starts) to finish. */
const STOP_WAIT_MS = 15_000;

/** The node's tasks after an answer: all of them, or the last ones updated by a delta. */
function merged(last: Map<string, TaskRecord>, a: SyncAnswer): Map<string, TaskRecord> {
  if (!a.ids) return new Map(a.tasks.map((t) => [t.ID, t]));
  const next = new Map<string, TaskRecord>();
  for (const id of a.ids) {
    const t = last.get(id);
    if (t) next.set(id, t);
  }
  for (const t of a.tasks) next.set(t.ID, t);
  return next;
}

export class Agent {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The containers of this node's tasks, and which may hold their files (task-containers.ts). */
  private readonly containers = new TaskContainers();
  /** Statuses decided locally and not yet seen back in the store. */
  private readonly reports = new TaskReports();
  private readonly stopping = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  /** The tasks of the last answer, for exits seen between rounds. */
  private lastTasks = new Map<string, TaskRecord>();
  private known: string | undefined;
  /** The revision of the last answer: the next sync asks only for what changed since. */
  private rev: number | undefined;
  /** The secret and config data of the last answer. */
  private payloads: TaskPayloads | undefined;
  /** The round under way, if any (stop waits for its container work). */
  private current: Promise<number> | undefined;
  private polling = false;
  /** Tasks whose image is being pulled, whose pull is over (container next), whose container is being made. */
  private readonly pulling = new Set<string>();
  private readonly pulled = new Set<string>();
  private readonly creating = new Set<string>();
  /** Container work started outside a round (after a pull): a stop waits for it too. */
  private readonly sideWork = new Set<Promise<unknown>>();

  constructor(
    private readonly sync: SyncFn,
    private readonly runtime: () => TaskRuntime | undefined,
    private readonly log: Logger,
  ) {}

  start(): void {
    const tick = (ms: number) => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        const run = this.round();
        this.current = run;
        void run.then(tick);
      }, ms);
      this.timer.unref();
    };
    tick(0);
  }

  /**
   * Stops the rounds; resolves once a round under way has finished its container work (a long poll
   * still waiting is not waited for: its answer is dropped), so a leave can then remove what is left.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    const work = [...this.sideWork, ...(this.polling || !this.current ? [] : [this.current])];
    if (!work.length) return;
    const bound = new Promise<void>((r) => setTimeout(r, STOP_WAIT_MS).unref());
    await Promise.race([Promise.all(work).then(() => undefined), bound]);
  }

  /** The container of a task run here, if any (logs). */
  containerOf(taskId: string): string | undefined {
    return this.containers.get(taskId);
  }

  /**
   * A task's container ended between rounds (it exited or a stop completed): its new state is
   * reported at once rather than when the round's long poll returns.
   */
  private exited(rt: TaskRuntime, cid: string): void {
    if (this.stopped) return;
    const taskId = this.containers.taskOf(cid);
    const t = taskId ? this.lastTasks.get(taskId) : undefined;
    if (!t) return;
    void this.handle(rt, t).then(() => this.flush());
  }

  /** Sends the pending reports now (beside the round, which may be waiting in its long poll). */
  private flush(): void {
    this.reports.flush((reports) => this.sync({ reports }), this.log);
  }

  /** One round; returns the pause before the next. */
  private async round(): Promise<number> {
    const rt = this.runtime();
    if (!rt || this.stopped) return RETRY_MS;
    try {
      this.unsubscribe ??= rt.onExit((cid) => setImmediate(() => this.exited(rt, cid)));
      await this.containers.adopt(rt);
      const reports = this.reports.take();
      // While a stop is under way the round must come back to see it end: no long poll then.
      const wait = !reports.length && !this.stopping.size && this.known !== undefined;
      this.polling = true;
      const since = this.rev !== undefined ? { since: this.rev } : {};
      const answer = await this.sync(wait ? { reports, known: this.known!, ...since } : { reports, ...since }).finally(
        () => (this.polling = false),
      );
      if (this.stopped) return RETRY_MS; // a leave or shutdown came during the poll: start nothing now
      this.known = answer.digest;
      this.rev = answer.rev;
      this.payloads = answer.payloads;
      this.reports.sent(reports);
      this.lastTasks = merged(this.lastTasks, answer);
      const tasks = [...this.lastTasks.values()];
      const known = new Set(this.lastTasks.keys());
      await inParallel(tasks, PARALLEL, (t) => this.handle(rt, t));
      // Containers of tasks that no longer exist (service removed, history trimmed) go.
      for (const id of this.pulled) if (!known.has(id)) this.pulled.delete(id);
      const gone = this.containers.dropUnknown(known);
      for (const [taskId] of gone) this.reports.forget(taskId);
      await inParallel(gone, PARALLEL, ([taskId, cid]) =>
        rt
          .remove(cid)
          .then(() => rt.removeFiles(taskId))
          .catch((err: Error) => this.log.warn('cannot remove a task container', { task: taskId, error: err.message })),
      );
    } catch (err) {
      this.log.debug('agent round failed', { error: (err as Error).message });
      return RETRY_MS;
    }
    return this.stopping.size ? 250 : ROUND_MS;
  }

  private async handle(rt: TaskRuntime, t: TaskRecord): Promise<void> {
    const state = this.reports.stateOf(t);
    const cid = this.containers.get(t.ID);
    // A task still pending (a global task waiting for room on this node) is not run yet.
    if (t.DesiredState === 'running' && !cid && stateRank(state) < stateRank('assigned')) return;
    if (t.DesiredState === 'running' && !cid && !isTerminal(state)) {
      if (this.creating.has(t.ID) || this.pulling.has(t.ID)) return;
      if (!this.pulled.has(t.ID)) {
        // The pull runs beside the rounds (a long one must not hold other tasks' stops); once it
        // is over the task is handled again, with its latest record.
        this.reports.set(t, 'preparing', 'preparing');
        this.flush(); // shown while the image is pulled
        this.pulling.add(t.ID);
        void pullTaskImage(rt, t, String(containerBody(t).Image), () => this.stopped, this.log).finally(() => {
          this.pulling.delete(t.ID);
          this.pulled.add(t.ID);
          const cur = this.lastTasks.get(t.ID);
          if (!cur || this.stopped) return;
          const work = this.handle(rt, cur)
            .then(() => this.flush())
            .catch((err: Error) => this.log.warn('cannot start a task after its pull', { task: cur.ID, error: err.message }));
          this.sideWork.add(work);
          void work.finally(() => this.sideWork.delete(work));
        });
        return;
      }
      this.pulled.delete(t.ID);
      this.creating.add(t.ID);
      try {
        const id = await runTaskContainer(rt, t, this.payloads, () => this.containers.filesWritten(t.ID));
        this.containers.set(t.ID, id);
        const st = rt.state(id);
        const portStatus = await hostPortStatus(rt, t, id);
        this.reports.set(t, 'running', 'started', { ContainerStatus: { ContainerID: id, PID: st?.pid ?? 0, ExitCode: 0 }, ...portStatus });
      } catch (err) {
        const failedId = (err as { containerId?: string }).containerId;
        if (failedId) this.containers.set(t.ID, failedId);
        // No container to remove later: the task's files go now.
        else await this.containers.removeFiles(rt, t.ID, this.log);
        const msg = (err as Error).message;
        const created = /No such image|not found|invalid|not delivered|expand/i.test(msg);
        this.reports.set(t, created ? 'rejected' : 'failed', created ? 'preparing' : 'starting', { Err: msg });
      } finally {
        this.creating.delete(t.ID);
      }
      return;
    }
    if (!cid) {
      if (t.DesiredState !== 'running' && !isTerminal(state)) this.reports.set(t, 'shutdown', 'shutdown');
      return;
    }
    const st = rt.state(cid);
    if (!st) {
      if (!isTerminal(state)) this.reports.set(t, 'failed', 'container gone', { Err: 'task: the container was removed' });
      return;
    }
    if (st.running) {
      if (t.DesiredState !== 'running' && !this.stopping.has(t.ID)) {
        this.stopping.add(t.ID);
        void rt
          .stop(cid, stopTimeout(t))
          .catch((err: Error) => this.log.warn('cannot stop a task container', { task: t.ID, error: err.message }))
          .finally(() => this.stopping.delete(t.ID));
      } else if (stateRank(state) < stateRank('running')) {
        this.reports.set(t, 'running', 'started', { ContainerStatus: { ContainerID: cid, PID: st.pid, ExitCode: 0 } });
      }
      return;
    }
    // The container ended: its secrets leave the node now (as dockerd), not when it is removed.
    await this.containers.removeFiles(rt, t.ID, this.log);
    if (isTerminal(state)) return;
    this.reports.ended(t, cid, st);
  }
}
