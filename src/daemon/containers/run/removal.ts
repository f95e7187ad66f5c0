// Removing containers: `rm` (with -f: the task is killed first), the removal itself (marked in the
// record first, so an interrupted removal is finished at the next start), rename and prune.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { conflict, invalidParameter } from '../../../errors.ts';
import type { RemovalState } from '../context.ts';
import { compilePruneFilters } from '../filters.ts';
import { normalizeName } from '../names.ts';
import { rwSize } from '../queries.ts';
import type { ContainerRecord } from '../record.ts';
import { stopTask } from './stop.ts';
import { unmountFuseRoot } from '../fs/fuse-rootfs.ts';

/** The removal, under the container's lock; volumes: also its anonymous volumes (rm -v, AutoRemove). */
export async function removeLocked(ctx: RemovalState, rec: ContainerRecord, volumes: boolean): Promise<void> {
  const { d } = ctx;
  if (!ctx.recs.has(rec.Id)) return;
  rec.Internal.removing = true;
  rec.State = { ...rec.State, Status: 'removing' };
  ctx.persist(rec);
  await ctx.closeLogDriver(rec.Id, 'removal');
  ctx.drivers.delete(rec.Id);
  // What containerd still holds is killed and deleted; if that fails the snapshot removal below
  // fails too and the record stays marked "removing" (finished at the next start).
  await d.launcher.forget(rec.Id).catch((err) => d.log.debug(`removal: containerd leftovers: ${(err as Error).message}`, { id: rec.Id }));
  // A FUSE rootfs a failed cleanup left mounted: rm must not walk into it.
  await unmountFuseRoot(join(d.containersDir, rec.Id));
  await d.rootfs.remove(rec.Internal.snapshotKey);
  await rm(join(d.containersDir, rec.Id), { recursive: true, force: true });
  d.store.delete(rec.Id);
  await d.networks?.containerRemoved(rec.Id).catch((err) => d.log.warn(`releasing networks: ${(err as Error).message}`, { id: rec.Id }));
  ctx.recs.delete(rec.Id);
  await d.volumes?.release(rec, volumes).catch((err) => d.log.warn(`releasing volumes: ${(err as Error).message}`, { id: rec.Id }));
  ctx.hubs.delete(rec.Id);
  ctx.stdinRelays.get(rec.Id)?.destroy();
  ctx.stdinRelays.delete(rec.Id);
  d.launcher.removed(rec.Id);
  ctx.waiters.notify(rec.Id, ['not-running', 'next-exit', 'removed'], { StatusCode: rec.State.ExitCode, Error: null });
  ctx.event(rec, 'destroy');
}

export class Removal {
  private pruning = false;

  constructor(private readonly ctx: RemovalState) {}

  /** `ref` is the reference the request named: dockerd's refusal quotes it as given (ID, name or /name). */
  async remove(rec: ContainerRecord, opts: { force: boolean; volumes: boolean; link: boolean }, ref = rec.Name.slice(1)): Promise<void> {
    if ((rec.State.Running || rec.State.Restarting) && !opts.force) {
      const name = ref;
      if (rec.State.Paused) throw conflict(`cannot remove container "${name}": container is paused and must be unpaused first`);
      throw conflict(
        `cannot remove container "${name}": container is ${rec.State.Restarting ? 'restarting' : 'running'}: stop the container before removing or force remove`,
      );
    }
    this.ctx.cancelRestart(rec);
    if (rec.State.Running) {
      rec.Internal.stoppedByUser = true;
      await stopTask(this.ctx, rec, 9, 0);
    }
    await this.ctx.lock.run(rec.Id, () => removeLocked(this.ctx, rec, opts.volumes));
  }

  async rename(rec: ContainerRecord, newName: string): Promise<void> {
    const name = normalizeName(newName);
    if (name === rec.Name) throw invalidParameter(`Renaming a container with the same name as its current name`);
    await this.ctx.lock.run(rec.Id, async () => {
      const oldName = rec.Name;
      this.ctx.d.store.rename(rec.Id, name);
      rec.Name = name;
      this.ctx.event(rec, 'rename', { oldName });
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
      for (const rec of [...this.ctx.recs.values()]) {
        if (rec.State.Running || rec.State.Paused || rec.State.Restarting || rec.Internal.removing) continue;
        if (this.ctx.reconciling.has(rec.Id) || !match(rec)) continue; // its state is not known yet
        const size = await rwSize(this.ctx, rec).catch((err) => {
          this.ctx.d.log.debug(`prune: size of the writable layer: ${(err as Error).message}`, { id: rec.Id });
          return 0;
        });
        try {
          await this.ctx.lock.run(rec.Id, () => removeLocked(this.ctx, rec, false));
        } catch (err) {
          this.ctx.d.log.warn(`failed to prune container: ${(err as Error).message}`, { id: rec.Id });
          continue;
        }
        reclaimed += size;
        (deleted ??= []).push(rec.Id);
      }
      this.ctx.d.events?.publish({ Type: 'container', Action: 'prune', Actor: { ID: '', Attributes: { reclaimed: String(reclaimed) } } });
      return { ContainersDeleted: deleted, SpaceReclaimed: reclaimed };
    } finally {
      this.pruning = false;
    }
  }
}
