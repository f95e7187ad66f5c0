// What is done to a running container from outside: stop (signal, grace, SIGKILL), kill with any
// signal (recorded first, so the exit it causes knows whether the restart policy applies), pause
// and unpause; and the stops of a daemon shutdown (or, with live-restore, letting the tasks run).
import { conflict } from '../../../errors.ts';
import { parseSignal } from '../../../oci/signals.ts';
import { DEFAULT_STOP_TIMEOUT_S, type LifecycleState } from '../context.ts';
import type { ContainerRecord } from '../record.ts';
import { delay } from './exit-recorder.ts';
import { killEffect } from './restart-policy.ts';
import { stopTask } from './stop.ts';

/** A SIGKILL is answered once its exit is recorded, or after this long. */
const KILL_WAIT_MS = 10_000;

export class RunControl {
  constructor(private readonly ctx: LifecycleState) {}

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
