// The `storage` group: daemons of their own per storage driver — engined on overlay2 (the data root
// on the host's filesystem) and on btrfs (a loop filesystem made for the run, released at the end),
// and dockerd on both when it runs — each given busybox by `docker import`, then the lifecycle and a
// commit taking turns across all of them.

import { loopFsUnavailable, makeLoopFs } from '../../test/helpers/loop-fs.ts';
import { progress, type Iterations } from '../lib/options.ts';
import { interleave } from '../lib/stats.ts';
import { startTracked, stopTracked } from '../lib/tracked.ts';
import type { Results } from '../results.ts';
import { apiLifecycle, NETWORK_NONE } from '../scenarios/api-lifecycle.ts';
import { commitOnce } from '../scenarios/commit.ts';
import { STORAGE_BENCH_DRIVERS, type StorageBenchDriver } from '../scenarios/storage.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { Dockerd } from '../targets/dockerd.ts';
import { Engined } from '../targets/engined.ts';

/** Mounts a fresh 2 GiB btrfs at the data root; its undo unmounts it and detaches the loop device. */
async function btrfsDataRoot(dataRoot: string): Promise<() => Promise<void>> {
  const fs = await makeLoopFs('btrfs', dataRoot, 2048);
  return () => fs.release();
}

async function start(kind: 'engined' | 'dockerd', driver: StorageBenchDriver): Promise<DaemonUnderTest> {
  const prepare = driver === 'btrfs' ? btrfsDataRoot : undefined;
  const args = ['--storage-driver', driver];
  if (kind === 'engined') {
    const d = (await startTracked(() => Engined.start(undefined, args, prepare))).daemon;
    await d.importBusybox();
    return d;
  }
  const d = (await startTracked(() => Dockerd.start({ args, ...(prepare ? { prepare } : {}) }))).daemon;
  await d.loadBusybox();
  return d;
}

export async function storageGroup(res: Results, it: Iterations, useDockerd: boolean): Promise<void> {
  const drivers: StorageBenchDriver[] = [];
  for (const driver of STORAGE_BENCH_DRIVERS) {
    const why = driver === 'overlay2' ? undefined : await loopFsUnavailable(driver);
    if (why) res.notes.push(`storage: ${driver} skipped: ${why}`);
    else drivers.push(driver);
  }
  const daemons = new Map<string, DaemonUnderTest>();
  try {
    for (const driver of drivers)
      for (const kind of useDockerd ? (['engined', 'dockerd'] as const) : (['engined'] as const)) {
        progress(`storage: starting ${kind} on ${driver}`);
        daemons.set(`${kind} ${driver}`, await start(kind, driver));
      }
    const each = <T>(fn: (d: DaemonUnderTest) => Promise<T>) =>
      Object.fromEntries([...daemons].map(([k, d]) => [k, () => fn(d)])) as Record<string, () => Promise<T>>;
    progress(`storage: lifecycle on ${[...daemons.keys()].join(', ')}, taking turns (${it.warmups} warm-ups + ${it.n})`);
    const lifecycle = await interleave(
      it.n,
      it.warmups,
      each((d) => apiLifecycle(d, NETWORK_NONE)),
    );
    progress(`storage: commit, taking turns (${it.commitWarmups} warm-ups + ${it.commitN})`);
    const commit = await interleave(it.commitN, it.commitWarmups, each(commitOnce));
    res.storage = { lifecycle, commit };
  } finally {
    for (const d of daemons.values()) await stopTracked(d);
  }
}
