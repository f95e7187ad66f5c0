// What is done to a running container from outside: stop (signal, grace, SIGKILL), kill with any
// signal (recorded first, so the exit it causes knows whether the restart policy applies), pause
// and unpause; and the stops of a daemon shutdown (or, with live-restore, letting the tasks run).
import { conflict } from '../../../errors.ts';
import { parseSignal } from '../../../oci/signals.ts';
import type { RunDeps } from '../deps.ts';
import type { LogDrivers } from '../io/log-drivers.ts';
import type { ContainerRecord } from '../record.ts';
import type { ContainerRecords } from '../records.ts';
import { delay } from './exit-recorder.ts';
import { killEffect } from './restart-policy.ts';
import type { RunState } from './run-state.ts';
import { DEFAULT_STOP_TIMEOUT_S, stopSignal, stopTask } from './stop.ts';

/** A SIGKILL is answered once its exit is recorded, or after this long. */
const KILL_WAIT_MS = 10_000;

export class RunControl {
  constructor(
    private readonly records: ContainerRecords,
    private readonly runs: RunState,
    private readonly logs: LogDrivers,
    private readonly d: RunDeps,
  ) {}

  async stop(rec: ContainerRecord, opts: { timeout?: number; signal?: string }): Promise<'stopped' | 'already'> {
    const { records, runs } = this;
    const signal = stopSignal(rec, opts.signal);
    const timeout = opts.timeout ?? rec.Config.StopTimeout ?? DEFAULT_STOP_TIMEOUT_S;
    runs.cancelRestart(rec);
    if (!rec.State.Running) {
      if (rec.State.Restarting) {
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        records.persist(rec);
        return 'stopped';
      }
      return 'already';
    }
    rec.Internal.stoppedByUser = true;
    await stopTask({ records, runs, d: this.d }, rec, signal, timeout);
    records.event(rec, 'stop');
    return 'stopped';
  }

  async kill(rec: ContainerRecord, signal: string | undefined): Promise<void> {
    const sig = parseSignal(signal || 'SIGKILL');
    if (!rec.State.Running && !rec.State.Restarting) throw conflict(`Container ${rec.Id} is not running`);
    // Recorded before the signal goes out, so the exit it causes sees it (as dockerd).
    if (!this.runs.shuttingDown) {
      const own = rec.Config.StopSignal ? stopSignal(rec) : undefined;
      if (killEffect(sig, own) === 'stopped') rec.Internal.stoppedByUser = true;
      else rec.Internal.signalledByUser = true;
      this.records.persist(rec);
    }
    // A restart waiting out its backoff has no process to signal: as dockerd, the kill only
    // decides whether the restart still happens (not after SIGKILL or the stop signal).
    if (!rec.State.Running) {
      if (rec.Internal.stoppedByUser) {
        this.runs.cancelRestart(rec);
        rec.State = { ...rec.State, Status: 'exited', Restarting: false };
        this.records.persist(rec);
      }
      return;
    }
    // dockerd waits for a SIGKILL to take effect (state recorded) before answering.
    const processed = sig === 9 ? this.runs.waiters.nextExit(rec.Id) : undefined;
    this.records.event(rec, 'kill', { signal: String(sig) });
    await this.d.client.tasks.kill(rec.Id, sig, { all: sig === 9 && this.d.launcher.killsAll });
    if (processed) await Promise.race([processed, delay(KILL_WAIT_MS)]);
  }

  async pause(rec: ContainerRecord): Promise<void> {
    await this.runs.lock.run(rec.Id, async () => {
      if (!rec.State.Running) throw conflict(`Container ${rec.Id} is not running`);
      if (rec.State.Paused) throw conflict(`Container ${rec.Id} is already paused`);
      await this.d.client.tasks.pause(rec.Id);
      rec.State = { ...rec.State, Status: 'paused', Paused: true };
      this.records.persist(rec);
      this.records.event(rec, 'pause');
    });
  }

  async unpause(rec: ContainerRecord): Promise<void> {
    await this.runs.lock.run(rec.Id, async () => {
      if (!rec.State.Paused) throw conflict(`Container ${rec.Id} is not paused`);
      await this.d.client.tasks.resume(rec.Id);
      rec.State = { ...rec.State, Status: 'running', Paused: false };
      this.records.persist(rec);
      this.records.event(rec, 'unpause');
    });
  }

  /** Daemon shutdown. Without live-restore, running containers stop within the shutdown timeout. */
  async shutdown(liveRestore: boolean, timeoutS: number): Promise<void> {
    const { records, runs, logs } = this;
    runs.shuttingDown = true;
    for (const b of runs.backoff.values()) if (b.timer) clearTimeout(b.timer);
    if (liveRestore) {
      // Tasks keep running; stop watching them and flush what was read to the logs (the rest of
      // their output waits in the FIFOs for the next daemon).
      await Promise.all(
        [...runs.tasks.entries()].map(async ([id, t]) => {
          t.detach();
          runs.hubs.get(id)?.release();
          await logs.close(id, 'shutdown');
        }),
      );
      return;
    }
    await Promise.all(
      [...records.byId.values()]
        .filter((r) => r.State.Running)
        .map((r) => {
          const t = r.Config.StopTimeout ?? timeoutS;
          return stopTask({ records, runs, d: this.d }, r, stopSignal(r), t).catch((err) =>
            this.d.log.warn(`stopping ${r.Id}: ${(err as Error).message}`),
          );
        }),
    );
  }
}
