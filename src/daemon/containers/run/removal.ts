// Removing containers: `rm` (with -f: the task is killed first), the removal itself (marked in the
// record first, so an interrupted removal is finished at the next start), rename and prune.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { conflict, invalidParameter } from '../../../errors.ts';
import type { ContainerServiceDeps } from '../deps.ts';
import { compilePruneFilters } from '../filters.ts';
import { normalizeName } from '../names.ts';
import { rwSize } from '../queries.ts';
import type { ContainerRecord } from '../record.ts';
import type { ContainerRecords } from '../records.ts';
import type { LogDrivers } from '../io/log-drivers.ts';
import type { RunState } from './run-state.ts';
import { stopTask, type StopParts } from './stop.ts';
import { unmountFuseRoot } from '../fs/fuse-rootfs.ts';

/** What a removal uses: the record and the run's leftovers (hub, stdin relay, waiters, log driver). */
export interface RemovalParts {
  records: Pick<ContainerRecords, 'byId' | 'event' | 'persist'>;
  runs: Pick<RunState, 'hubs' | 'stdinRelays' | 'waiters'>;
  logs: Pick<LogDrivers, 'remove'>;
  d: Pick<ContainerServiceDeps, 'containersDir' | 'launcher' | 'log' | 'networks' | 'rootfs' | 'store' | 'volumes'>;
}

/** The removal, under the container's lock; volumes: also its anonymous volumes (rm -v, AutoRemove). */
export async function removeLocked(parts: RemovalParts, rec: ContainerRecord, volumes: boolean): Promise<void> {
  const { records, runs, logs, d } = parts;
  if (!records.byId.has(rec.Id)) return;
  rec.Internal.removing = true;
  rec.State = { ...rec.State, Status: 'removing' };
  records.persist(rec);
  await logs.remove(rec.Id, 'removal');
  // What containerd still holds is killed and deleted; if that fails the snapshot removal below
  // fails too and the record stays marked "removing" (finished at the next start).
  await d.launcher.forget(rec.Id).catch((err) => d.log.debug(`removal: containerd leftovers: ${(err as Error).message}`, { id: rec.Id }));
  // A FUSE rootfs a failed cleanup left mounted: rm must not walk into it.
  await unmountFuseRoot(join(d.containersDir, rec.Id));
  await d.rootfs.remove(rec.Internal.snapshotKey);
  await rm(join(d.containersDir, rec.Id), { recursive: true, force: true });
  d.store.delete(rec.Id);
  await d.networks?.containerRemoved(rec.Id).catch((err) => d.log.warn(`releasing networks: ${(err as Error).message}`, { id: rec.Id }));
  records.byId.delete(rec.Id);
  await d.volumes?.release(rec, volumes).catch((err) => d.log.warn(`releasing volumes: ${(err as Error).message}`, { id: rec.Id }));
  runs.hubs.delete(rec.Id);
  runs.stdinRelays.get(rec.Id)?.destroy();
  runs.stdinRelays.delete(rec.Id);
  d.launcher.removed(rec.Id);
  runs.waiters.notify(rec.Id, ['not-running', 'next-exit', 'removed'], { StatusCode: rec.State.ExitCode, Error: null });
  records.event(rec, 'destroy');
}

export class Removal {
  private pruning = false;

  private readonly parts: RemovalParts & StopParts;

  constructor(
    private readonly records: ContainerRecords,
    private readonly runs: RunState,
    logs: LogDrivers,
    private readonly d: RemovalParts['d'] & Pick<ContainerServiceDeps, 'client' | 'events'>,
  ) {
    this.parts = { records, runs, logs, d };
  }

  /** `ref` is the reference the request named: dockerd's refusal quotes it as given (ID, name or /name). */
  async remove(rec: ContainerRecord, opts: { force: boolean; volumes: boolean; link: boolean }, ref = rec.Name.slice(1)): Promise<void> {
    if ((rec.State.Running || rec.State.Restarting) && !opts.force) {
      const name = ref;
      if (rec.State.Paused) throw conflict(`cannot remove container "${name}": container is paused and must be unpaused first`);
      throw conflict(
        `cannot remove container "${name}": container is ${rec.State.Restarting ? 'restarting' : 'running'}: stop the container before removing or force remove`,
      );
    }
    this.runs.cancelRestart(rec);
    if (rec.State.Running) {
      rec.Internal.stoppedByUser = true;
      await stopTask(this.parts, rec, 9, 0);
    }
    await this.runs.lock.run(rec.Id, () => removeLocked(this.parts, rec, opts.volumes));
  }

  async rename(rec: ContainerRecord, newName: string): Promise<void> {
    const name = normalizeName(newName);
    if (name === rec.Name) throw invalidParameter(`Renaming a container with the same name as its current name`);
    await this.runs.lock.run(rec.Id, async () => {
      const oldName = rec.Name;
      this.d.store.rename(rec.Id, name);
      rec.Name = name;
      this.records.event(rec, 'rename', { oldName });
    });
  }

  async prune(filters: Map<string, string[]>): Promise<{ ContainersDeleted: string[] | null; SpaceReclaimed: number }> {
    const match = compilePruneFilters(filters);
    if (this.pruning) throw conflict('a prune operation is already running');
    this.pruning = true;
    try {
      // dockerd leaves the list nil (JSON null) when nothing was removed.
      let deleted: string[] | null = null;
      let reclaimed = 0;
      for (const rec of [...this.records.byId.values()]) {
        if (rec.State.Running || rec.State.Paused || rec.State.Restarting || rec.Internal.removing) continue;
        if (this.records.reconciling.has(rec.Id) || !match(rec)) continue; // its state is not known yet
        const size = await rwSize(this.d, rec).catch((err) => {
          this.d.log.debug(`prune: size of the writable layer: ${(err as Error).message}`, { id: rec.Id });
          return 0;
        });
        try {
          await this.runs.lock.run(rec.Id, () => removeLocked(this.parts, rec, false));
        } catch (err) {
          this.d.log.warn(`failed to prune container: ${(err as Error).message}`, { id: rec.Id });
          continue;
        }
        reclaimed += size;
        (deleted ??= []).push(rec.Id);
      }
      this.d.events?.publish({ Type: 'container', Action: 'prune', Actor: { ID: '', Attributes: { reclaimed: String(reclaimed) } } });
      return { ContainersDeleted: deleted, SpaceReclaimed: reclaimed };
    } finally {
      this.pruning = false;
    }
  }
}
