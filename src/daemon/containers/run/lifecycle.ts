// A container's runs: start (log driver, launch, state), the exit (output drained, clean-up, restart
// policy with backoff, AutoRemove), stop, restart, kill, pause and unpause, adopting a task that
// survived a daemon restart, and the stops of a daemon shutdown.
import { conflict } from '../../../errors.ts';
import { parseSignal } from '../../../oci/signals.ts';
import { nowIso, ZERO_TIME } from '../../../util/time.ts';
import { DEFAULT_STOP_TIMEOUT_S, type LifecycleState } from '../context.ts';
import type { ContainerRecord } from '../record.ts';
import { removeLocked } from './removal.ts';
import { killEffect, nextBackoff, shouldRestart } from './restart-policy.ts';
import { stopTask } from './stop.ts';
import type { RunningTask, TaskExit } from './running-task.ts';
import type { ContainerVerifier } from '../create/verify.ts';

/** How long an exit waits for the output FIFOs to drain, then for the log driver to write it. */
const IO_DRAIN_MS = 2000;
const LOG_FLUSH_MS = 5000;
/** A SIGKILL is answered once its exit is recorded, or after this long. */
const KILL_WAIT_MS = 10_000;

/** Resolves after ms (never rejects); used to bound waits on output that may never end. */
function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

export class Lifecycle {
  constructor(
    private readonly ctx: LifecycleState,
    private readonly verifier: ContainerVerifier,
  ) {}

  async start(rec: ContainerRecord): Promise<'started' | 'already'> {
    return this.ctx.lock.run(rec.Id, async () => {
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
    const { ctx } = this;
    const { d } = ctx;
    const hub = ctx.hub(rec.Id);
    hub.reset();
    let task: RunningTask;
    let logging: Promise<void> | undefined;
    try {
      // The daemon's limits, runtimes and CDI specs may have changed since the create (reload).
      const { cdi } = this.verifier.checkStart(rec.HostConfig);
      logging = (await ctx.openLogDriver(rec)).done;
      task = await d.launcher.launch(rec, hub, (ref) => ctx.find(ref), cdi);
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
      ctx.persist(rec);
      // As dockerd: an AutoRemove container that fails to start is removed (`docker run --rm`
      // waits for condition=removed and would otherwise hang).
      if (rec.HostConfig.AutoRemove)
        await removeLocked(ctx, rec, true).catch((e) =>
          d.log.warn(`auto-remove after a failed start: ${(e as Error).message}`, { id: rec.Id }),
        );
      throw err;
    }
    ctx.tasks.set(rec.Id, task);
    // Input an attached client sent before the start (docker run -i) flows now.
    const relay = ctx.stdinRelays.get(rec.Id);
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
    ctx.persist(rec);
    ctx.event(rec, 'start');
    d.log.debug('container started', { id: rec.Id, pid: task.pid });
    this.watch(rec, task, logging, Date.now());
  }

  /** Watches a task that survived a daemon restart as if this daemon had started it. */
  adopt(rec: ContainerRecord, task: RunningTask): void {
    this.ctx.tasks.set(rec.Id, task);
    // A log plugin that fails now loses the output (the task already runs); the error is logged.
    const logging = this.ctx.openLogDriver(rec).then((l) => l.done);
    this.watch(rec, task, logging, Date.now());
    this.ctx.d.runs?.emit(rec, 'started');
  }

  private watch(rec: ContainerRecord, task: RunningTask, logging: Promise<void>, startedAt: number): void {
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

  async stop(rec: ContainerRecord, opts: { timeout?: number; signal?: string }): Promise<'stopped' | 'already'> {
    const { ctx } = this;
    const signal = ctx.stopSignal(rec, opts.signal);
    const timeout = opts.timeout ?? rec.Config.StopTimeout ?? DEFAULT_STOP_TIMEOUT_S;
    ctx.cancelRestart(rec);
    if (!rec.State.Running) {
      if (rec.State.Restarting) {
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        ctx.persist(rec);
        return 'stopped';
      }
      return 'already';
    }
    rec.Internal.stoppedByUser = true;
    await stopTask(ctx, rec, signal, timeout);
    ctx.event(rec, 'stop');
    return 'stopped';
  }

  async restart(rec: ContainerRecord, opts: { timeout?: number; signal?: string }): Promise<void> {
    await this.stop(rec, opts);
    await this.ctx.lock.run(rec.Id, async () => {
      if (rec.State.Running) return;
      rec.Internal.stoppedByUser = false;
      delete rec.Internal.signalledByUser;
      await this.startLocked(rec);
    });
    this.ctx.event(rec, 'restart');
  }

  async kill(rec: ContainerRecord, signal: string | undefined): Promise<void> {
    const sig = parseSignal(signal || 'SIGKILL');
    if (!rec.State.Running && !rec.State.Restarting) throw conflict(`Container ${rec.Id} is not running`);
    // Recorded before the signal goes out, so the exit it causes sees it (as dockerd).
    if (!this.ctx.shuttingDown) {
      const own = rec.Config.StopSignal ? this.ctx.stopSignal(rec) : undefined;
      if (killEffect(sig, own) === 'stopped') rec.Internal.stoppedByUser = true;
      else rec.Internal.signalledByUser = true;
      this.ctx.persist(rec);
    }
    // A restart waiting out its backoff has no process to signal: as dockerd, the kill only
    // decides whether the restart still happens (not after SIGKILL or the stop signal).
    if (!rec.State.Running) {
      if (rec.Internal.stoppedByUser) {
        this.ctx.cancelRestart(rec);
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        this.ctx.persist(rec);
      }
      return;
    }
    // dockerd waits for a SIGKILL to take effect (state recorded) before answering.
    const processed = sig === 9 ? this.ctx.waiters.nextExit(rec.Id) : undefined;
    this.ctx.event(rec, 'kill', { signal: String(sig) });
    await this.ctx.d.client.tasks.kill(rec.Id, sig, { all: sig === 9 && this.ctx.d.launcher.killsAll });
    if (processed) await Promise.race([processed, delay(KILL_WAIT_MS)]);
  }

  async pause(rec: ContainerRecord): Promise<void> {
    await this.ctx.lock.run(rec.Id, async () => {
      if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
      if (rec.State.Paused) throw conflict(`Container ${rec.Id} is already paused`);
      await this.ctx.d.client.tasks.pause(rec.Id);
      rec.State = { ...rec.State, Status: 'paused', Paused: true };
      this.ctx.persist(rec);
      this.ctx.event(rec, 'pause');
    });
  }

  async unpause(rec: ContainerRecord): Promise<void> {
    await this.ctx.lock.run(rec.Id, async () => {
      if (!rec.State.Paused) throw conflict(`Container ${rec.Id} is not paused`);
      await this.ctx.d.client.tasks.resume(rec.Id);
      rec.State = { ...rec.State, Status: 'running', Paused: false };
      this.ctx.persist(rec);
      this.ctx.event(rec, 'unpause');
    });
  }

  /** Daemon shutdown. Without live-restore, running containers stop within the shutdown timeout. */
  async shutdown(liveRestore: boolean, timeoutS: number): Promise<void> {
    const { ctx } = this;
    ctx.shuttingDown = true;
    for (const b of ctx.backoff.values()) if (b.timer) clearTimeout(b.timer);
    if (liveRestore) {
      // Tasks keep running; stop watching them and flush what was read to the logs (the rest of
      // their output waits in the FIFOs for the next daemon).
      await Promise.all(
        [...ctx.tasks.entries()].map(async ([id, t]) => {
          t.detach();
          ctx.hubs.get(id)?.release();
          await ctx.closeLogDriver(id, 'shutdown');
        }),
      );
      return;
    }
    await Promise.all(
      [...ctx.recs.values()]
        .filter((r) => r.State.Running)
        .map((r) => {
          const t = r.Config.StopTimeout ?? timeoutS;
          return stopTask(ctx, r, ctx.stopSignal(r), t).catch((err) => ctx.d.log.warn(`stopping ${r.Id}: ${(err as Error).message}`));
        }),
    );
  }
}

/** The exit code dockerd records when a start fails: 127 command not found, 126 not executable, else 128. */
export function startFailureExitCode(message: string): number {
  const m = message.toLowerCase();
  if (m.includes('executable file not found') || m.includes('no such file or directory') || m.includes('not a directory')) return 127;
  if (m.includes('permission denied')) return 126;
  return 128;
}
