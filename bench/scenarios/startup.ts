// Daemon start-up: process spawn → /_ping answers 200 (containerd start included), on a fresh
// temp dir each time; every daemon is stopped and its dir removed before the next start.

import type { DaemonUnderTest } from '../targets/daemon.ts';

/** `alive` holds each daemon while it runs, so a failure elsewhere can still tear it down. */
export async function startupSamples(
  count: number,
  start: () => Promise<{ daemon: DaemonUnderTest; readyMs: number }>,
  alive: Set<DaemonUnderTest>,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const { daemon, readyMs } = await start();
    alive.add(daemon);
    out.push(readyMs);
    await daemon.stop();
    alive.delete(daemon);
  }
  return out;
}
