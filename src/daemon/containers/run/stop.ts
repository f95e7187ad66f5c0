// Stopping a container's task: the stop signal, a grace period, then SIGKILL; resolves once the
// exit has been processed (state recorded, restart decided). Shared by stop, restart, rm -f, the
// daemon's shutdown and the stops at start-up.
import type { StopState } from '../context.ts';
import type { ContainerRecord } from '../record.ts';

/** Signals the task, waits up to `timeoutS` (negative: no limit) for the exit to be processed, then SIGKILLs. */
export async function stopTask(ctx: StopState, rec: ContainerRecord, signal: number, timeoutS: number): Promise<void> {
  const task = ctx.tasks.get(rec.Id);
  if (!task) return;
  const { client, log } = ctx.d;
  const processed = ctx.waiters.nextExit(rec.Id);
  if (rec.State.Paused) {
    // A frozen task cannot act on the signal; a resume that fails leaves it to the SIGKILL below.
    await client.tasks.resume(rec.Id).catch((err) => log.debug(`resume before stop: ${(err as Error).message}`, { id: rec.Id }));
  }
  if (timeoutS !== 0) {
    ctx.event(rec, 'kill', { signal: String(signal) });
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
  ctx.event(rec, 'kill', { signal: '9' });
  await client.tasks
    .kill(rec.Id, 9, { all: ctx.d.launcher.killsAll })
    .catch((err) => log.debug(`kill: ${(err as Error).message}`, { id: rec.Id }));
  await processed;
}
