// The `storage` group's figures and report section: the lifecycle of `true` and a commit on each
// storage driver, engined (and dockerd, when it runs) on a data root of the driver's filesystem.

import { randomBytes } from 'node:crypto';
import { api } from '../lib/http.ts';
import { cpuMeter } from '../lib/proc.ts';
import { num, ratio, table } from '../lib/table.ts';
import { summarize } from '../lib/stats.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { createContainer, removeContainer, type ApiPhases } from './api-lifecycle.ts';
import type { CommitRun } from './commit.ts';

/** The big image's added files: this many 1 MiB files of random data, with an image's whole-second mtimes. */
export const BIG_IMAGE_MIB = 200;
const IMAGE_MTIME = Date.UTC(2024, 0, 1) / 1000;
let seq = 0;

/** `bigbase:latest`: busybox plus BIG_IMAGE_MIB MiB under /big (put in a container, committed). */
export async function makeBigImage(d: DaemonUnderTest): Promise<void> {
  const tar = await tarToBuffer(async (tw) => {
    await tw.directory('big', { mtime: IMAGE_MTIME, mode: 0o755 });
    for (let i = 0; i < BIG_IMAGE_MIB; i++) await tw.file(`big/f${i}`, randomBytes(2 ** 20), { mtime: IMAGE_MTIME, mode: 0o644 });
  });
  const id = await createContainer(d, ['true']);
  try {
    await api(d.socket, 'PUT', `/containers/${id}/archive?path=/`, tar, [200]);
    await api(d.socket, 'POST', `/commit?container=${id}&repo=bigbase&tag=latest`, undefined, [201]);
  } finally {
    await removeContainer(d, id);
  }
}

/** A one-file change on the big image committed: the POST alone, wall and CPU. */
export async function bigCommitOnce(d: DaemonUnderTest): Promise<CommitRun> {
  const name = `bigc-${process.pid}-${seq++}`;
  const r = await api(
    d.socket,
    'POST',
    `/containers/create?name=${name}`,
    { Image: 'bigbase', Cmd: ['sh', '-c', 'echo x > /small'], HostConfig: { NetworkMode: 'none' } },
    [201],
  );
  const id = r.json<{ Id: string }>().Id;
  try {
    await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
    const cpu = cpuMeter({ daemon: d.pid, containerd: d.containerdPid() });
    const t0 = performance.now();
    await api(d.socket, 'POST', `/commit?container=${id}&repo=bigcommit&tag=${name}`, undefined, [201]);
    return { ms: performance.now() - t0, cpu: cpu() };
  } finally {
    await removeContainer(d, id).catch(() => undefined);
    await api(d.socket, 'DELETE', `/images/bigcommit:${name}`, undefined, [200]).catch(() => undefined);
  }
}

/**
 * The drivers measured, each on a filesystem of its own (btrfs: a loop file made for the run;
 * fuse-overlayfs: FUSE mounts over the host's filesystem, engined serving the snapshotter itself).
 */
export const STORAGE_BENCH_DRIVERS = ['overlay2', 'btrfs', 'fuse-overlayfs'] as const;
export type StorageBenchDriver = (typeof STORAGE_BENCH_DRIVERS)[number];

export interface StorageRun {
  /** Keyed `${kind} ${driver}`, e.g. `engined btrfs`. */
  lifecycle: Record<string, ApiPhases[]>;
  commit: Record<string, CommitRun[]>;
  /** A one-file change committed on busybox + BIG_IMAGE_MIB MiB. */
  bigCommit: Record<string, CommitRun[]>;
}

const med = (xs: number[] | undefined) => (xs && xs.length ? summarize(xs).median : undefined);
const p90 = (xs: number[] | undefined) => (xs && xs.length ? summarize(xs).p90 : undefined);
const mean = (xs: number[] | undefined) => (xs && xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);

export function storageSection(r: StorageRun): string {
  const keys = Object.keys(r.lifecycle);
  const base = (k: string) => `${k.split(' ')[0]} overlay2`;
  const lcRows = keys.map((k) => {
    const lc = r.lifecycle[k];
    const total = lc?.map((p) => p.total);
    return [
      k,
      num(med(total)),
      num(p90(total)),
      num(med(lc?.map((p) => p.create))),
      num(med(lc?.map((p) => p.start))),
      num(med(lc?.map((p) => p.delete))),
      num(mean(lc?.map((p) => p.cpu.daemon)), 1),
      num(mean(lc?.map((p) => p.cpu.containerd)), 1),
      ratio(med(total), med(r.lifecycle[base(k)]?.map((p) => p.total))),
    ];
  });
  const commitRows = (runs: Record<string, CommitRun[]>) =>
    Object.keys(runs).map((k) => {
      const c = runs[k];
      const ms = c?.map((x) => x.ms);
      return [
        k,
        num(med(ms)),
        num(p90(ms)),
        num(mean(c?.map((x) => x.cpu.daemon)), 1),
        num(mean(c?.map((x) => x.cpu.containerd)), 1),
        ratio(med(ms), med(runs[base(k)]?.map((x) => x.ms))),
      ];
    });
  return [
    'Lifecycle of `true` (network none) over the API, ms; CPU ms of the daemon and of its containerd per lifecycle (mean; helper processes not counted):',
    '',
    table(
      ['daemon, driver', 'median', 'p90', 'create', 'start', 'delete', 'CPU daemon', 'CPU containerd', '÷ same daemon on overlay2'],
      lcRows,
    ),
    '',
    "`POST /commit` of a container that wrote 10 MiB, deleted a file and replaced a directory, ms; CPU as above (dockerd diffs in its own process; engined reads the overlay upper directory, or off overlayfs compares the two trees by metadata as dockerd; on btrfs containerd's snapshotter then compares the parent's whole content again when it commits the new layer's snapshot, its usage by fs.DiffUsage):",
    '',
    table(['daemon, driver', 'median', 'p90', 'CPU daemon', 'CPU containerd', '÷ same daemon on overlay2'], commitRows(r.commit)),
    '',
    `\`POST /commit\` of a one-file change on busybox + ${BIG_IMAGE_MIB} MiB of files (whole-second mtimes, as image files have), ms; CPU as above. "diff service": engined with ENGINE_COMMIT_DIFF=service, the path before (containerd's walking differ reads every unchanged file whose mtime has whole seconds):`,
    '',
    table(['daemon, driver', 'median', 'p90', 'CPU daemon', 'CPU containerd', '÷ same daemon on overlay2'], commitRows(r.bigCommit)),
  ].join('\n');
}
