// Daemon start-up: process spawn → /_ping answers 200 (containerd start included), on a fresh
// temp dir each time; every daemon is stopped and its dir removed before the next start.

import type { DaemonUnderTest, StartupMarks } from '../targets/daemon.ts';

/** `alive` holds each daemon while it runs, so a failure elsewhere can still tear it down. */
export async function startupSamples(
  count: number,
  start: () => Promise<{ daemon: DaemonUnderTest; marks: StartupMarks }>,
  alive: Set<DaemonUnderTest>,
): Promise<StartupMarks[]> {
  const out: StartupMarks[] = [];
  for (let i = 0; i < count; i++) {
    const { daemon, marks } = await start();
    alive.add(daemon);
    out.push(marks);
    await daemon.stop();
    alive.delete(daemon);
  }
  return out;
}
