// A container's runs: start (log driver, launch, state), restart, adopting a task that survived a
// daemon restart; the exit (output drained, clean-up, restart policy with backoff, AutoRemove) in
// exit-recorder.ts; stop, kill, pause, unpause and the stops of a daemon shutdown in run-control.ts.
import { conflict } from '../../../errors.ts';
import { nowIso, ZERO_TIME } from '../../../util/time.ts';
import type { RunDeps } from '../deps.ts';
import type { LogDrivers } from '../io/log-drivers.ts';
import type { ContainerRecord } from '../record.ts';
import type { ContainerRecords } from '../records.ts';
import { removeLocked } from './removal.ts';
import type { RunState } from './run-state.ts';
import type { RunningTask } from './running-task.ts';
import type { ContainerVerifier } from '../create/verify.ts';
import { ExitRecorder } from './exit-recorder.ts';
import { RunControl } from './run-control.ts';

export class Lifecycle {
  private readonly exits: ExitRecorder;
  private readonly control: RunControl;

  constructor(
    private readonly records: ContainerRecords,
    private readonly runs: RunState,
    private readonly logs: LogDrivers,
    private readonly d: RunDeps,
    private readonly verifier: ContainerVerifier,
  ) {
    this.exits = new ExitRecorder(records, runs, logs, d, (rec) => this.startLocked(rec));
    this.control = new RunControl(records, runs, logs, d);
  }

  async start(rec: ContainerRecord): Promise<'started' | 'already'> {
    return this.runs.lock.run(rec.Id, async () => {
      if (rec.State.Paused) throw conflict('cannot start a paused container, try unpause instead');
      if (rec.State.Running) return 'already';
      if (rec.Internal.removing) throw conflict('container is marked for removal and cannot be started');
      rec.Internal.stoppedByUser = false;
      delete rec.Internal.signalledByUser;
      await this.startLocked(rec);
      return 'started';
    });
  }

  /** Starts a run; the caller holds the container's lock. */
  async startLocked(rec: ContainerRecord): Promise<void> {
    const { records, runs, logs, d } = this;
    const hub = runs.hub(rec.Id);
    hub.reset();
    let task: RunningTask;
    let logging: Promise<void> | undefined;
    try {
      // The daemon's limits, runtimes and CDI specs may have changed since the create (reload).
      const { cdi } = this.verifier.checkStart(rec.HostConfig);
      logging = (await logs.open(rec, hub)).done;
      task = await d.launcher.launch(rec, hub, (ref) => records.find(ref), cdi);
    } catch (err) {
      hub.endLog();
      hub.endRun();
      await logging?.catch((e) => d.log.debug(`log driver after a failed start: ${(e as Error).message}`, { id: rec.Id }));
      const message = (err as Error).message;
      const neverRan = rec.State.FinishedAt === ZERO_TIME && rec.State.StartedAt === ZERO_TIME;
      rec.State = {
        ...rec.State,
        Status: neverRan ? 'created' : 'exited',
        Running: false,
        Restarting: false,
        Pid: 0,
        ExitCode: startFailureExitCode(message),
        Error: message,
      };
      records.persist(rec);
      // As dockerd: an AutoRemove container that fails to start is removed (`docker run --rm`
      // waits for condition=removed and would otherwise hang).
      if (rec.HostConfig.AutoRemove)
        await removeLocked({ records, runs, logs, d }, rec, true).catch((e) =>
          d.log.warn(`auto-remove after a failed start: ${(e as Error).message}`, { id: rec.Id }),
        );
      throw err;
    }
    runs.tasks.set(rec.Id, task);
    // Input an attached client sent before the start (docker run -i) flows now.
    const relay = runs.stdinRelays.get(rec.Id);
    if (relay && !relay.connected && !relay.destroyed && task.stdin) relay.connect(task.stdin);
    rec.State = {
      ...rec.State,
      Status: 'running',
      Running: true,
      Paused: false,
      Restarting: false,
      OOMKilled: false,
      Dead: false,
      Pid: task.pid,
      ExitCode: 0,
      Error: '',
      StartedAt: task.startedAt ?? nowIso(),
    };
    d.runs?.emit(rec, 'started');
    records.persist(rec);
    records.event(rec, 'start');
    d.log.debug('container started', { id: rec.Id, pid: task.pid });
    this.exits.watch(rec, task, logging, Date.now());
  }

  /** Watches a task that survived a daemon restart as if this daemon had started it. */
  adopt(rec: ContainerRecord, task: RunningTask): void {
    this.runs.tasks.set(rec.Id, task);
    // A log plugin that fails now loses the output (the task already runs); the error is logged.
    const logging = this.logs.open(rec, this.runs.hub(rec.Id)).then((l) => l.done);
    this.exits.watch(rec, task, logging, Date.now());
    this.d.runs?.emit(rec, 'started');
  }

  stop(rec: ContainerRecord, opts: { timeout?: number; signal?: string }): Promise<'stopped' | 'already'> {
    return this.control.stop(rec, opts);
  }

  async restart(rec: ContainerRecord, opts: { timeout?: number; signal?: string }): Promise<void> {
    await this.stop(rec, opts);
    await this.runs.lock.run(rec.Id, async () => {
      if (rec.State.Running) return;
      rec.Internal.stoppedByUser = false;
      delete rec.Internal.signalledByUser;
      await this.startLocked(rec);
    });
    this.records.event(rec, 'restart');
  }

  kill(rec: ContainerRecord, signal: string | undefined): Promise<void> {
    return this.control.kill(rec, signal);
  }

  pause(rec: ContainerRecord): Promise<void> {
    return this.control.pause(rec);
  }

  unpause(rec: ContainerRecord): Promise<void> {
    return this.control.unpause(rec);
  }

  /** Daemon shutdown. Without live-restore, running containers stop within the shutdown timeout. */
  shutdown(liveRestore: boolean, timeoutS: number): Promise<void> {
    return this.control.shutdown(liveRestore, timeoutS);
  }
}

/** The exit code dockerd records when a start fails: 127 command not found, 126 not executable, else 128. */
export function startFailureExitCode(message: string): number {
  const m = message.toLowerCase();
  if (m.includes('executable file not found') || m.includes('no such file or directory') || m.includes('not a directory')) return 127;
  if (m.includes('permission denied')) return 126;
  return 128;
}
