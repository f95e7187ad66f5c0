// The daemons and work directories alive right now, so that a failure or Ctrl-C still stops every
// daemon, kills its leftovers, unmounts and removes the directories.

import type { DaemonUnderTest } from '../targets/daemon.ts';
import { progress } from './options.ts';
import { teardownDir } from './proc.ts';

export const alive = new Set<DaemonUnderTest>();
export const workDirs = new Set<string>();
let tornDown: Promise<void> | null = null;

export function teardownAll(): Promise<void> {
  tornDown ??= (async () => {
    for (const d of [...alive]) await d.stop().catch((e) => progress(`stopping ${d.kind}: ${(e as Error).message}`));
    for (const dir of workDirs) await teardownDir(dir).catch((e) => progress(`removing ${dir}: ${(e as Error).message}`));
  })();
  return tornDown;
}

/** Starts a daemon and tracks it until `untrack` (or the final teardown). */
export async function startTracked<D extends DaemonUnderTest>(start: () => Promise<{ daemon: D; readyMs: number }>) {
  const r = await start();
  alive.add(r.daemon);
  return r;
}

/** Stops a daemon started for one group. */
export async function stopTracked(d: DaemonUnderTest): Promise<void> {
  await d.stop().catch((e) => progress(`stopping ${d.kind}: ${(e as Error).message}`));
  alive.delete(d);
}

export function onSignalsTearDown(): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      progress(`${sig}: cleaning up`);
      void teardownAll().finally(() => process.exit(130));
    });
  }
}
