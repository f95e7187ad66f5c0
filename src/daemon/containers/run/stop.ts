// Stopping a container's task: the stop signal, a grace period, then SIGKILL; resolves once the
// exit has been processed (state recorded, restart decided). Shared by stop, restart, rm -f, the
// daemon's shutdown and the stops at start-up.
import { parseSignal } from '../../../oci/signals.ts';
import type { ContainerServiceDeps } from '../deps.ts';
import type { ContainerRecord } from '../record.ts';
import type { ContainerRecords } from '../records.ts';
import type { RunState } from './run-state.ts';

export const DEFAULT_STOP_TIMEOUT_S = 10;

/** What a stop uses: the kill events, the task and its exit's waiters, containerd. */
export interface StopParts {
  records: Pick<ContainerRecords, 'event'>;
  runs: Pick<RunState, 'tasks' | 'waiters'>;
  d: Pick<ContainerServiceDeps, 'client' | 'launcher' | 'log'>;
}

/** The signal a stop sends: the request's, else the container's StopSignal, else SIGTERM. */
export function stopSignal(rec: ContainerRecord, override?: string): number {
  return parseSignal(override || rec.Config.StopSignal || 'SIGTERM');
}

/** Signals the task, waits up to `timeoutS` (negative: no limit) for the exit to be processed, then SIGKILLs. */
export async function stopTask(parts: StopParts, rec: ContainerRecord, signal: number, timeoutS: number): Promise<void> {
  const { records, runs, d } = parts;
  const task = runs.tasks.get(rec.Id);
  if (!task) return;
  const { client, log } = d;
  const processed = runs.waiters.nextExit(rec.Id);
  if (rec.State.Paused) {
    // A frozen task cannot act on the signal; a resume that fails leaves it to the SIGKILL below.
    await client.tasks.resume(rec.Id).catch((err) => log.debug(`resume before stop: ${(err as Error).message}`, { id: rec.Id }));
  }
  if (timeoutS !== 0) {
    records.event(rec, 'kill', { signal: String(signal) });
    await client.tasks
      .kill(rec.Id, signal, { all: false })
      .catch((err) => log.debug(`stop signal: ${(err as Error).message}`, { id: rec.Id }));
    let timer: NodeJS.Timeout | undefined;
    const graceful = await Promise.race([
      task.exited.then(() => true),
      new Promise<boolean>((r) => {
        if (timeoutS >= 0) timer = setTimeout(() => r(false), timeoutS * 1000);
      }),
    ]);
    clearTimeout(timer);
    if (graceful) {
      await processed;
      return;
    }
  }
  records.event(rec, 'kill', { signal: '9' });
  await client.tasks
    .kill(rec.Id, 9, { all: d.launcher.killsAll })
    .catch((err) => log.debug(`kill: ${(err as Error).message}`, { id: rec.Id }));
  await processed;
}
