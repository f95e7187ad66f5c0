// After a (re)start of the daemon: brings the records and containerd into agreement, in the
// background. The API answers at once; each container has two gates. The first (records.unknownState:
// inspect and list wait for it, records.known) opens after its first look: interrupted removals finished,
// tasks left running re-attached, exits that happened while the daemon was down recorded — its state
// is then the host's. The second (records.reconciling: every other request waits for it, records.ready) opens
// once the rest is done: without live-restore the stop the shutdown would have given (the
// container's own stop timeout, as dockerd's restore), then the restart policy. containerd
// containers the store does not know are removed alongside.
import { isNotFound } from '../../../errors.ts';
import { nowIso, ZERO_TIME } from '../../../util/time.ts';
import type { RunDeps } from '../deps.ts';
import type { LogDrivers } from '../io/log-drivers.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { ContainerRecord } from '../record.ts';
import type { ContainerRecords } from '../records.ts';
import { removeLocked, type RemovalParts } from './removal.ts';
import { restartAtStartup } from './restart-policy.ts';
import type { RunState } from './run-state.ts';
import { DEFAULT_STOP_TIMEOUT_S, stopSignal, stopTask, type StopParts } from './stop.ts';

/**
 * Containers whose containerd state is examined at the same time (each is a few gRPC calls, mostly
 * waiting): 32 made 200 containers' states known in ~150-230 ms on a loaded 2-core machine.
 */
const PARALLEL = 32;

/** What happens to a container after its first look: nothing more, or a stop (no live-restore). */
type Next = 'done' | 'stop';

export class Restorer {
  private done: Promise<void> = Promise.resolve();
  /** What the removals and stops of the reconciliation use. */
  private readonly parts: RemovalParts & StopParts;

  constructor(
    private readonly records: ContainerRecords,
    private readonly runs: RunState,
    logs: LogDrivers,
    private readonly d: RunDeps,
    private readonly lifecycle: Lifecycle,
  ) {
    this.parts = { records, runs, logs, d };
  }

  /**
   * Starts the reconciliation and returns its completion (it never rejects: failures are logged).
   * Every known container is gated before this returns, so no request sees a state not yet checked.
   */
  restore(liveRestore: boolean): Promise<void> {
    const known = gatesOn(this.records.unknownState, this.records.byId.keys());
    const settled = gatesOn(this.records.reconciling, this.records.byId.keys());
    const release = { known: (id: string) => known.release(id), settled: (id: string) => (known.release(id), settled.release(id)) };
    this.done = this.run(liveRestore, release)
      .catch((err) => {
        this.d.log.error(`reconciling containers after the start: ${(err as Error).message}`);
      })
      .finally(() => {
        // Whatever happened, nobody waits forever.
        known.releaseAll();
        settled.releaseAll();
      });
    return this.done;
  }

  /** Resolves once the reconciliation is over (the shutdown waits for it). */
  whenDone(): Promise<void> {
    return this.done;
  }

  private async run(liveRestore: boolean, release: { known: (id: string) => void; settled: (id: string) => void }): Promise<void> {
    const { d } = this;
    const started = Date.now();
    const listed = await d.client.containers.list().catch((err) => {
      d.log.warn(`listing containerd's containers at start-up: ${(err as Error).message}`);
      return [];
    });
    d.log.debug("containerd's containers listed", { containers: listed.length, ms: Date.now() - started });
    const inSupervisor = new Set(listed.map((c) => c.id));
    const unknown = this.removeUnknown(listed);
    const queue = [...this.records.byId.values()];
    const pipelines: Array<Promise<void>> = [];
    // The stops begin once every state is known: 200 stops at once slowed the first looks still
    // under way (200 states known ~2.8 s after /_ping instead of ~0.5 s on a loaded machine).
    let allKnown!: () => void;
    const known = new Promise<void>((r) => (allKnown = r));
    const worker = async () => {
      for (let rec = queue.shift(); rec; rec = queue.shift()) {
        const r = rec;
        const next = await this.runs.lock
          .run(r.Id, () => this.firstLook(r, liveRestore, inSupervisor))
          .catch((err) => {
            d.log.error(`reconciling a container: ${(err as Error).message}`, { id: r.Id });
            return 'done' as const;
          });
        release.known(r.Id);
        // The stop and restart run outside the worker: a stop may take the whole stop timeout.
        const finished = next === 'stop' ? known.then(() => this.finish(r, next)) : this.finish(r, next);
        pipelines.push(finished.finally(() => release.settled(r.Id)));
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    d.log.debug('containers known', { containers: this.records.byId.size, ms: Date.now() - started });
    allKnown();
    await Promise.all(pipelines);
    await unknown;
    d.log.info('containers reconciled', { containers: this.records.byId.size, ms: Date.now() - started });
  }

  /** Under the container's lock: what containerd and the host hold for it, made to match the record. */
  private async firstLook(rec: ContainerRecord, liveRestore: boolean, inSupervisor: Set<string>): Promise<Next> {
    const { records, runs, d } = this;
    if (rec.Internal.removing) {
      await removeLocked(this.parts, rec, false).catch((err) =>
        d.log.error(`finishing removal: ${(err as Error).message}`, { id: rec.Id }),
      );
      return 'done';
    }
    if (!rec.State.Running && !rec.State.Restarting) {
      // A crash between creating the task and recording the start leaves pieces behind.
      if (inSupervisor.has(rec.Id) || rec.Internal.netnsPath) {
        await d.launcher
          .forget(rec.Id)
          .catch((err) => d.log.debug(`leftovers of an unrecorded start: ${(err as Error).message}`, { id: rec.Id }));
        await d.launcher
          .cleanup(rec)
          .catch((err) => d.log.debug(`clean-up of an unrecorded start: ${(err as Error).message}`, { id: rec.Id }));
        records.persist(rec);
      }
      return 'done';
    }
    // Re-attach even without live-restore: output written while the daemon was down reaches the
    // log, and the stop goes through the normal exit path (state, clean-up, AutoRemove).
    const task = rec.State.Running
      ? await d.launcher.reattach(rec, runs.hub(rec.Id)).catch((err) => {
          d.log.debug(`re-attaching: ${(err as Error).message}`, { id: rec.Id });
          return undefined;
        })
      : undefined;
    if (task) {
      this.lifecycle.adopt(rec, task);
      if (liveRestore) {
        d.log.info('re-attached to running container', { id: rec.Id });
        return 'done';
      }
      return 'stop';
    }
    // The task is gone (or exited while the daemon was down): record the exit and clean up.
    const exitCode = await d.launcher.forget(rec.Id).catch((err) => {
      d.log.debug(`the exited task: ${(err as Error).message}`, { id: rec.Id });
      return undefined;
    });
    await d.launcher.cleanup(rec).catch((err) => d.log.warn(`cleanup at start-up: ${(err as Error).message}`, { id: rec.Id }));
    const finishedAt = rec.State.FinishedAt === ZERO_TIME || rec.State.Running ? nowIso() : rec.State.FinishedAt;
    rec.State = {
      ...rec.State,
      Status: 'exited',
      Running: false,
      Paused: false,
      Restarting: false,
      Pid: 0,
      ExitCode: exitCode ?? (rec.State.Running ? 255 : rec.State.ExitCode),
      FinishedAt: finishedAt,
    };
    records.persist(rec);
    if (rec.HostConfig.AutoRemove)
      await removeLocked(this.parts, rec, true).catch((err) =>
        d.log.error(`auto-remove at start-up: ${(err as Error).message}`, { id: rec.Id }),
      );
    return 'done';
  }

  /** The stop a crashed daemon's shutdown would have given, then the restart policy. */
  private async finish(rec: ContainerRecord, next: Next): Promise<void> {
    const { records, runs, d } = this;
    if (next === 'stop') {
      // The container's own stop timeout, as dockerd's restore (not the daemon's shutdown-timeout,
      // the bound of a whole shutdown); -1, "wait without a limit", would hold the container's
      // requests: the default timeout instead.
      runs.startupStops.add(rec.Id);
      try {
        const own = rec.Config.StopTimeout;
        await stopTask(this.parts, rec, stopSignal(rec), own !== undefined && own >= 0 ? own : DEFAULT_STOP_TIMEOUT_S);
      } catch (err) {
        d.log.warn(`stopping at start-up: ${(err as Error).message}`, { id: rec.Id });
      } finally {
        runs.startupStops.delete(rec.Id);
      }
    }
    if (!records.byId.has(rec.Id) || runs.shuttingDown) return;
    const facts = {
      startedBefore: rec.State.StartedAt !== ZERO_TIME,
      running: rec.State.Running,
      exitCode: rec.State.ExitCode,
      stoppedByUser: rec.Internal.stoppedByUser,
      signalledByUser: rec.Internal.signalledByUser === true,
      restartCount: rec.RestartCount,
    };
    if (!restartAtStartup(rec.HostConfig.RestartPolicy, facts)) return;
    await runs.lock
      .run(rec.Id, async () => {
        if (rec.State.Running || !records.byId.has(rec.Id) || runs.shuttingDown) return;
        // As dockerd: a start by the daemon is a fresh start (count reset, no longer "stopped by user").
        rec.RestartCount = 0;
        rec.Internal.stoppedByUser = false;
        delete rec.Internal.signalledByUser;
        await this.lifecycle.startLocked(rec);
      })
      .catch((err) => d.log.error(`restart at start-up failed: ${(err as Error).message}`, { id: rec.Id }));
  }

  /** Containers in containerd's namespace that the store does not know, with their tasks and snapshots. */
  private async removeUnknown(listed: Array<{ id: string; snapshot_key?: string; snapshotter?: string }>): Promise<void> {
    const { records, d } = this;
    const ownSnapshots = new Set([...records.byId.values()].map((r) => r.Internal.snapshotKey));
    for (const c of listed) {
      if (records.byId.has(c.id)) continue;
      d.log.info('removing a containerd container the store does not know', { id: c.id });
      await d.launcher.forget(c.id).catch((err) => d.log.warn(`removing unknown container: ${(err as Error).message}`, { id: c.id }));
      if (c.snapshot_key && !ownSnapshots.has(c.snapshot_key)) {
        await d.client.snapshots.remove(c.snapshot_key, { snapshotter: c.snapshotter }).catch((err) => {
          if (!isNotFound(err)) d.log.warn(`removing unknown snapshot: ${(err as Error).message}`, { id: c.id });
        });
      }
    }
    await d.launcher
      .removeStaleRuntimeDirs(new Set(records.byId.keys()))
      .catch((err) => d.log.warn(`removing stale runtime directories: ${(err as Error).message}`));
  }
}

/** One gate per container in `map`, each released once (or all at once at the end). */
function gatesOn(map: Map<string, Promise<void>>, ids: Iterable<string>): { release(id: string): void; releaseAll(): void } {
  const open = new Map<string, () => void>();
  for (const id of ids) map.set(id, new Promise<void>((resolve) => open.set(id, resolve)));
  const release = (id: string) => {
    map.delete(id);
    open.get(id)?.();
    open.delete(id);
  };
  return { release, releaseAll: () => [...open.keys()].forEach(release) };
}
