// A node's agent (managers and workers alike): every round it reports the states of its tasks to a
// manager and gets back the tasks assigned to it, then runs them as ordinary containers on the
// local engine (named `<service>.<slot>.<task id>` with dockerd's swarm labels), stops those whose
// desired state is no longer running, and removes the containers of tasks that are gone.
import { nodeFacts } from '../node/node-helpers.ts';
import type { Logger } from '../../util/log.ts';
import { containerBody, stopTimeout, taskNetworks } from './container-body.ts';
import { taskPullAuth } from '../manager/pull-options.ts';
import type { TaskPayloads } from '../manager/secrets-api.ts';
import type { AgentSyncRequest, SyncAnswer } from '../manager/services-api.ts';
import { fileMounts, taskFiles } from './task-files.ts';
import type { TaskRuntime } from './task-runtime.ts';
import { containerName, isTerminal, stateRank, type TaskRecord, type TaskState, type TaskStatus } from '../manager/tasks.ts';

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

async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

export class Agent {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** task ID → container ID */
  private readonly containers = new Map<string, string>();
  /** Statuses decided locally and not yet seen back in the store. */
  private readonly pending = new Map<string, TaskStatus>();
  private readonly stopping = new Set<string>();
  private adopted = false;
  private unsubscribe: (() => void) | undefined;
  /** The tasks of the last answer, for exits seen between rounds. */
  private lastTasks = new Map<string, TaskRecord>();
  private known: string | undefined;
  /** The revision of the last answer: the next sync asks only for what changed since. */
  private rev: number | undefined;
  /** Tasks whose secret and config files may be on this node (written here, or adopted). */
  private readonly withFiles = new Set<string>();
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
    const entry = [...this.containers].find(([, c]) => c === cid);
    const t = entry ? this.lastTasks.get(entry[0]) : undefined;
    if (!t) return;
    void this.handle(rt, t).then(() => this.flush());
  }

  /** Sends the pending reports now (beside the round, which may be waiting in its long poll). */
  private flush(): void {
    const reports = [...this.pending].map(([id, status]) => ({ id, status }));
    if (!reports.length) return;
    this.sync({ reports }).then(
      () => {
        for (const r of reports) if (this.pending.get(r.id) === r.status) this.pending.delete(r.id);
      },
      (err: Error) => this.log.debug('agent report failed', { error: err.message }),
    );
  }

  private set(t: TaskRecord, state: TaskState, message: string, extra: Partial<TaskStatus> = {}): void {
    const prev = this.pending.get(t.ID) ?? t.Status;
    if (stateRank(state) < stateRank(prev.State)) return;
    this.pending.set(t.ID, { ...prev, Timestamp: new Date().toISOString(), State: state, Message: message, ...extra });
  }

  /** One round; returns the pause before the next. */
  private async round(): Promise<number> {
    const rt = this.runtime();
    if (!rt || this.stopped) return RETRY_MS;
    try {
      this.unsubscribe ??= rt.onExit((cid) => setImmediate(() => this.exited(rt, cid)));
      if (!this.adopted) {
        // Adopted containers may have files from before the restart: checked once they end.
        for (const c of await rt.list()) {
          this.containers.set(c.taskId, c.id);
          this.withFiles.add(c.taskId);
        }
        this.adopted = true;
      }
      const reports = [...this.pending].map(([id, status]) => ({ id, status }));
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
      for (const r of reports) if (this.pending.get(r.id) === r.status) this.pending.delete(r.id);
      this.lastTasks = merged(this.lastTasks, answer);
      const tasks = [...this.lastTasks.values()];
      const known = new Set(this.lastTasks.keys());
      await inParallel(tasks, PARALLEL, (t) => this.handle(rt, t));
      // Containers of tasks that no longer exist (service removed, history trimmed) go.
      for (const id of this.pulled) if (!known.has(id)) this.pulled.delete(id);
      const gone = [...this.containers].filter(([taskId]) => !known.has(taskId));
      for (const [taskId] of gone) {
        this.containers.delete(taskId);
        this.withFiles.delete(taskId);
        this.pending.delete(taskId);
      }
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

  /**
   * dockerd's pull before a task's container (executor's pullImage): skipped for an image ID or a
   * digest reference the engine holds, otherwise always tried (a tag may have moved), with the
   * credentials the task carries. A failed pull is only logged: the create then says "No such
   * image" (the task is rejected) unless an older copy is here, which runs, as with dockerd.
   */
  private async pullImage(rt: TaskRuntime, t: TaskRecord, image: string): Promise<void> {
    if (/^(sha256:)?[a-f0-9]{64}$/.test(image)) return;
    if (image.includes('@') && (await rt.hasImage(image))) return;
    const abort = new AbortController();
    const stop = setInterval(() => this.stopped && abort.abort(new Error('the agent stopped')), 500);
    try {
      await rt.pull(image, taskPullAuth(t.Spec), abort.signal);
    } catch (err) {
      this.log.warn('pulling the image of a task failed', { task: t.ID, image, error: (err as Error).message });
    } finally {
      clearInterval(stop);
    }
  }

  /** Status.PortStatus of a task with ports of mode host: the node ports its container got. */
  private async portStatus(rt: TaskRuntime, t: TaskRecord, cid: string): Promise<Partial<TaskStatus>> {
    const host = (t.Ports ?? []).filter((p) => (p as { PublishMode?: string }).PublishMode === 'host') as Array<{
      Protocol?: string;
      TargetPort: number;
    }>;
    if (!host.length || !rt.hostPorts) return {};
    const bound = await rt.hostPorts(cid).catch(() => []); // the container is gone already: no ports to report
    const Ports = host.flatMap((p) => {
      const proto = p.Protocol || 'tcp';
      return bound
        .filter((b) => b.target === `${p.TargetPort}/${proto}`)
        .slice(0, 1)
        .map((b) => ({ Protocol: proto, TargetPort: p.TargetPort, PublishedPort: b.published, PublishMode: 'host' }));
    });
    return Ports.length ? { PortStatus: { Ports } } : {};
  }

  private async handle(rt: TaskRuntime, t: TaskRecord): Promise<void> {
    const state = (this.pending.get(t.ID) ?? t.Status).State;
    const cid = this.containers.get(t.ID);
    // A task still pending (a global task waiting for room on this node) is not run yet.
    if (t.DesiredState === 'running' && !cid && stateRank(state) < stateRank('assigned')) return;
    if (t.DesiredState === 'running' && !cid && !isTerminal(state)) {
      if (this.creating.has(t.ID) || this.pulling.has(t.ID)) return;
      if (!this.pulled.has(t.ID)) {
        // The pull runs beside the rounds (a long one must not hold other tasks' stops); once it
        // is over the task is handled again, with its latest record.
        this.set(t, 'preparing', 'preparing');
        this.flush(); // shown while the image is pulled
        this.pulling.add(t.ID);
        void this.pullImage(rt, t, String(containerBody(t).Image)).finally(() => {
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
        const node = nodeFacts();
        const body = containerBody(t, node);
        const files = taskFiles(t, this.payloads, node);
        if (files.length) {
          this.withFiles.add(t.ID);
          const dir = await rt.writeFiles(t.ID, files);
          const host = body.HostConfig as Record<string, unknown>;
          host.Mounts = [...((host.Mounts as unknown[]) ?? []), ...fileMounts(dir, files)];
        }
        const id = await rt.run(
          containerName(t),
          body,
          taskNetworks(t).map((n) => n.target),
        );
        this.containers.set(t.ID, id);
        const st = rt.state(id);
        const portStatus = await this.portStatus(rt, t, id);
        this.set(t, 'running', 'started', { ContainerStatus: { ContainerID: id, PID: st?.pid ?? 0, ExitCode: 0 }, ...portStatus });
      } catch (err) {
        const failedId = (err as { containerId?: string }).containerId;
        if (failedId) this.containers.set(t.ID, failedId);
        // No container to remove later: the task's files go now.
        else if (this.withFiles.delete(t.ID))
          await rt
            .removeFiles(t.ID)
            .catch((e: Error) => this.log.debug("removing a task's files failed", { task: t.ID, error: e.message }));
        const msg = (err as Error).message;
        const created = /No such image|not found|invalid|not delivered|expand/i.test(msg);
        this.set(t, created ? 'rejected' : 'failed', created ? 'preparing' : 'starting', { Err: msg });
      } finally {
        this.creating.delete(t.ID);
      }
      return;
    }
    if (!cid) {
      if (t.DesiredState !== 'running' && !isTerminal(state)) this.set(t, 'shutdown', 'shutdown');
      return;
    }
    const st = rt.state(cid);
    if (!st) {
      if (!isTerminal(state)) this.set(t, 'failed', 'container gone', { Err: 'task: the container was removed' });
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
        this.set(t, 'running', 'started', { ContainerStatus: { ContainerID: cid, PID: st.pid, ExitCode: 0 } });
      }
      return;
    }
    // The container ended: its secrets leave the node now (as dockerd), not when it is removed.
    if (this.withFiles.delete(t.ID))
      await rt.removeFiles(t.ID).catch((e: Error) => this.log.debug("removing a task's files failed", { task: t.ID, error: e.message }));
    if (isTerminal(state)) return;
    const cs = { ContainerID: cid, PID: 0, ExitCode: st.exitCode };
    if (t.DesiredState !== 'running') this.set(t, 'shutdown', 'shutdown', { ContainerStatus: cs });
    else if (st.exitCode === 0 && !st.error) this.set(t, 'complete', 'finished', { ContainerStatus: cs });
    else this.set(t, 'failed', 'task: non-zero exit', { ContainerStatus: cs, Err: st.error || `task: non-zero exit (${st.exitCode})` });
  }
}
