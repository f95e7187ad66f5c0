// The container's lock lent to other services: commit runs with the task frozen, the archive
// endpoints under the lock (the container cannot start, stop or be removed meanwhile), frozen
// when they write into a running container. A pause that fails is no reason to refuse.
import { notFound } from '../../errors.ts';
import type { ContainerServiceDeps } from './deps.ts';
import type { ContainerRecords } from './records.ts';
import type { RunState } from './run/run-state.ts';
import type { ContainerRecord } from './record.ts';

export class ExclusiveAccess {
  constructor(
    private readonly records: Pick<ContainerRecords, 'byId'>,
    private readonly runs: Pick<RunState, 'lock'>,
    private readonly d: Pick<ContainerServiceDeps, 'client' | 'log'>,
  ) {}

  /** Runs fn with the task frozen (commit's pause) unless it is not running or paused already. */
  frozen<T>(rec: ContainerRecord, fn: () => Promise<T>): Promise<T> {
    return this.runs.lock.run(rec.Id, () => this.whileFrozen(rec, true, 'commit', fn));
  }

  /** fn under the container's lock (a 404 naming `ref` if it went meanwhile), frozen with `freeze`. */
  exclusive<T>(rec: ContainerRecord, ref: string, freeze: boolean, fn: (rec: ContainerRecord) => Promise<T>): Promise<T> {
    return this.runs.lock.run(rec.Id, async () => {
      if (!this.records.byId.has(rec.Id)) throw notFound(`No such container: ${ref}`);
      return this.whileFrozen(rec, freeze, 'archive', () => fn(rec));
    });
  }

  private async whileFrozen<T>(rec: ContainerRecord, freeze: boolean, what: string, fn: () => Promise<T>): Promise<T> {
    const { client, log } = this.d;
    // A pause that fails (the task just exited) is no reason to refuse: fn runs unfrozen.
    const frozen =
      freeze &&
      rec.State.Running &&
      !rec.State.Paused &&
      (await client.tasks.pause(rec.Id).then(
        () => true,
        (err) => {
          log.debug(`pause for ${what}: ${(err as Error).message}`, { id: rec.Id });
          return false;
        },
      ));
    try {
      return await fn();
    } finally {
      if (frozen)
        await client.tasks.resume(rec.Id).catch((err) => log.warn(`resume after ${what}: ${(err as Error).message}`, { id: rec.Id }));
    }
  }
}
