// What containerd and the host keep of a container after its run: the task and the containerd
// container deleted (killed first when still running), the host side released, FIFOs and stale
// runtime directories removed. Remembers which containers have nothing left, so that a start or
// a removal of those skips the round trips that could only answer "not found".
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotFound } from '../../../errors.ts';
import { removeNetns } from '../../../network/host/netns.ts';
import type { SupervisorClient } from '../../../supervisor/client.ts';
import type { Logger } from '../../../util/log.ts';
import type { ContainerVolumes } from '../../volumes/contract.ts';
import type { ContainerRecord } from '../record.ts';
import type { RunHostSide } from './run-host.ts';
import type { RunningTask } from './running-task.ts';

export interface TaskReaperDeps {
  client: SupervisorClient;
  log: Logger;
  execRoot: string;
  host: RunHostSide;
  volumes?: Pick<ContainerVolumes, 'detach'>;
  /** SIGKILL to every process of the container (runc kill --all) rather than its init alone. */
  killsAll: boolean;
}

export class TaskReaper {
  /**
   * Containers this process knows containerd holds nothing of, and whose sandbox, FIFOs and mounts
   * are gone: created here and never started, or whose exit cleanup finished without an error. A
   * start and a removal of these skip forget()'s calls (two containerd round trips, mount table
   * reads, sandbox teardown) that could only answer "not found". In memory only: after a restart
   * (a crash included) the set is empty and every start and removal forgets as before.
   */
  private readonly clean = new Set<string>();

  constructor(private readonly d: TaskReaperDeps) {}

  /** A container just created (nothing of it in containerd yet): see `clean`. */
  created(id: string): void {
    this.clean.add(id);
  }

  /** A container removed: nothing to remember. */
  removed(id: string): void {
    this.clean.delete(id);
  }

  /**
   * Before a run: leftovers of an earlier run (a crash between start and cleanup) removed; none for
   * a clean container, which stops being one here, before anything of this run exists.
   */
  async clearForRun(id: string): Promise<void> {
    if (!this.clean.delete(id)) await this.forget(id);
  }

  /**
   * After an exit: delete the task and the containerd container, release the namespace and FIFOs.
   * `task`: the run whose exit was seen (its output read to the end or given up on), so its Tasks.Get
   * is skipped and its FIFOs go meanwhile.
   */
  async cleanup(rec: ContainerRecord, task?: RunningTask): Promise<void> {
    const fifoDir = join(this.d.execRoot, 'fifo', rec.Id);
    const [complete] = await Promise.all([
      task ? this.forgetExited(rec.Id) : this.forgetAll(rec.Id),
      task ? rm(fifoDir, { recursive: true, force: true }) : undefined,
    ]);
    await this.d.host.dropNetns(rec);
    if (!task) await rm(fifoDir, { recursive: true, force: true });
    await this.d.volumes?.detach(rec).catch((err) => this.d.log.warn(`releasing volumes: ${(err as Error).message}`, { id: rec.Id }));
    if (complete) this.clean.add(rec.Id);
  }

  /**
   * Kills and deletes whatever containerd still has for this id (task first: a container deleted
   * before its task leaves an orphan). Returns the task's exit status when there was one.
   */
  async forget(id: string): Promise<number | undefined> {
    if (this.clean.has(id)) return undefined;
    return (await this.forgetTask(id)).status;
  }

  /** forget(), true when every step succeeded (nothing can be left). */
  private async forgetAll(id: string): Promise<boolean> {
    return (await this.forgetTask(id)).complete;
  }

  /**
   * forgetAll() for a task whose exit was seen: its process is gone, so the host side (sandbox,
   * namespace, mounts) is released while containerd deletes the stopped task (no Tasks.Get, kill or
   * wait first), and the containerd container goes after the task. Should the delete fail, the
   * long way (forgetAll) decides.
   */
  private async forgetExited(id: string): Promise<boolean> {
    const { client } = this.d;
    const hostSide = this.d.host.release(id);
    hostSide.catch(() => undefined); // settled below on every path
    try {
      await client.tasks.delete(id);
    } catch (err) {
      if (!isNotFound(err)) this.d.log.debug(`task delete after its exit: ${(err as Error).message}`, { id });
      await hostSide.catch((e) => this.d.log.debug(`host side after an exit: ${(e as Error).message}`, { id }));
      return this.forgetAll(id);
    }
    const containerGone = client.containers.delete(id).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    const [c, h] = await Promise.allSettled([containerGone, hostSide]);
    if (c.status === 'rejected') throw c.reason;
    if (h.status === 'rejected') throw h.reason;
    return true;
  }

  private async forgetTask(id: string): Promise<{ status: number | undefined; complete: boolean }> {
    const { client } = this.d;
    let status: number | undefined;
    let complete = true;
    try {
      const t = await client.tasks.get(id);
      if (t.status === 'RUNNING' || t.status === 'PAUSED' || t.status === 'CREATED') {
        // The kill may race the task's own exit, and the wait only bounds how long the delete below
        // waits; the delete reports what matters.
        await client.tasks
          .kill(id, 9, { all: this.d.killsAll })
          .catch((e) => this.d.log.debug(`forget: kill: ${(e as Error).message}`, { id }));
        await Promise.race([
          client.tasks.wait(id).catch((e) => this.d.log.debug(`forget: wait: ${(e as Error).message}`, { id })),
          new Promise((r) => setTimeout(r, 5000)),
        ]);
      }
      status = (await client.tasks.delete(id)).exit_status;
    } catch (err) {
      if (!isNotFound(err)) {
        complete = false;
        this.d.log.debug(`task cleanup: ${(err as Error).message}`, { id });
      }
    }
    const containerGone = client.containers.delete(id).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    if (!complete) {
      // The task may still be there: its sandbox stays unless containerd lets the container go.
      await containerGone;
      await this.d.host.release(id);
      return { status, complete };
    }
    // With the task gone, the containerd container and the host side go at the same time.
    const [c, h] = await Promise.allSettled([containerGone, this.d.host.release(id)]);
    if (c.status === 'rejected') throw c.reason;
    if (h.status === 'rejected') throw h.reason;
    return { status, complete };
  }

  /** At start-up: FIFO directories and network namespaces of containers the store does not know. */
  async removeStaleRuntimeDirs(known: Set<string>): Promise<void> {
    for (const [sub, remove] of [
      ['fifo', (p: string) => rm(p, { recursive: true, force: true })],
      ['netns', removeNetns],
    ] as const) {
      const names = await readdir(join(this.d.execRoot, sub)).catch(() => [] as string[]); // no such directory yet: nothing stale
      for (const name of names) {
        if (known.has(name)) continue;
        await remove(join(this.d.execRoot, sub, name)).catch((err) =>
          this.d.log.warn(`removing stale ${sub} ${name}: ${(err as Error).message}`),
        );
      }
    }
  }
}
