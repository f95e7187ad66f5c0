// The `storage` group: daemons of their own per storage driver — engined on overlay2 (the data root
// on the host's filesystem), on btrfs (a loop filesystem made for the run, released at the end) and
// on fuse-overlayfs (FUSE mounts on the host's filesystem), and dockerd on each when it runs — each
// given busybox by `docker import`, then the lifecycle and a commit taking turns across all of them.

import { existsSync } from 'node:fs';
import { findOnPath } from '../../src/supervisor/containerd-process.ts';
import { loopFsUnavailable, makeLoopFs } from '../../test/helpers/loop-fs.ts';
import { progress, type Iterations } from '../lib/options.ts';
import { interleave } from '../lib/stats.ts';
import { startTracked, stopTracked } from '../lib/tracked.ts';
import type { Results } from '../results.ts';
import { apiLifecycle, NETWORK_NONE } from '../scenarios/api-lifecycle.ts';
import { commitOnce } from '../scenarios/commit.ts';
import { BIG_IMAGE_MIB, bigCommitOnce, makeBigImage, STORAGE_BENCH_DRIVERS, type StorageBenchDriver } from '../scenarios/storage.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { Dockerd } from '../targets/dockerd.ts';
import { Engined } from '../targets/engined.ts';

/** Why fuse-overlayfs cannot run here, or undefined. */
function fuseOverlayUnavailable(): string | undefined {
  if (!findOnPath('fuse-overlayfs', `${process.env.PATH}:/usr/bin`)) return 'fuse-overlayfs is not installed';
  return existsSync('/dev/fuse') ? undefined : 'no /dev/fuse';
}

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
    const why =
      driver === 'overlay2' ? undefined : driver === 'fuse-overlayfs' ? fuseOverlayUnavailable() : await loopFsUnavailable(driver);
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
    const each = <T>(fn: (d: DaemonUnderTest) => Promise<T>, from = daemons) =>
      Object.fromEntries(
        [...from].map(([k, d]) => [
          k,
          () =>
            fn(d).catch((err: Error) => {
              const out = d instanceof Engined ? `\n${d.td.output.slice(-3000)}` : '';
              throw new Error(`${k}: ${err.message}${out}`);
            }),
        ]),
      ) as Record<string, () => Promise<T>>;
    progress(`storage: lifecycle on ${[...daemons.keys()].join(', ')}, taking turns (${it.warmups} warm-ups + ${it.n})`);
    const lifecycle = await interleave(
      it.n,
      it.warmups,
      each((d) => apiLifecycle(d, NETWORK_NONE)),
    );
    progress(`storage: commit, taking turns (${it.commitWarmups} warm-ups + ${it.commitN})`);
    const commit = await interleave(it.commitN, it.commitWarmups, each(commitOnce));
    // The commit of a small change on a big image, with engined's path before beside it on btrfs.
    const big = new Map(daemons);
    if (drivers.includes('btrfs')) {
      progress('storage: starting engined on btrfs with ENGINE_COMMIT_DIFF=service');
      const env = { ...process.env, ENGINE_COMMIT_DIFF: 'service' };
      const service = (await startTracked(() => Engined.start(env, ['--storage-driver', 'btrfs'], btrfsDataRoot))).daemon;
      daemons.set('engined btrfs, diff service', service);
      await service.importBusybox();
      big.set('engined btrfs, diff service', service);
    }
    progress(`storage: a ${BIG_IMAGE_MIB} MiB image in each daemon`);
    for (const d of big.values()) await makeBigImage(d);
    progress(`storage: one-file commit on it, taking turns (${it.commitWarmups} warm-ups + ${it.commitN})`);
    const bigCommit = await interleave(it.commitN, it.commitWarmups, each(bigCommitOnce, big));
    res.storage = { lifecycle, commit, bigCommit };
  } finally {
    for (const d of daemons.values()) await stopTracked(d);
  }
}
