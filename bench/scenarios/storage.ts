// The `storage` group's figures and report section: the lifecycle of `true` and a commit on each
// storage driver, engined (and dockerd, when it runs) on a data root of the driver's filesystem.

import { num, ratio, table } from '../lib/table.ts';
import { summarize } from '../lib/stats.ts';
import type { ApiPhases } from './api-lifecycle.ts';
import type { CommitRun } from './commit.ts';

/** The drivers measured, each on a filesystem of its own (btrfs: a loop file made for the run). */
export const STORAGE_BENCH_DRIVERS = ['overlay2', 'btrfs'] as const;
export type StorageBenchDriver = (typeof STORAGE_BENCH_DRIVERS)[number];

export interface StorageRun {
  /** Keyed `${kind} ${driver}`, e.g. `engined btrfs`. */
  lifecycle: Record<string, ApiPhases[]>;
  commit: Record<string, CommitRun[]>;
}

const med = (xs: number[] | undefined) => (xs && xs.length ? summarize(xs).median : undefined);
const p90 = (xs: number[] | undefined) => (xs && xs.length ? summarize(xs).p90 : undefined);
const mean = (xs: number[] | undefined) => (xs && xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);

export function storageSection(r: StorageRun): string {
  const keys = [...new Set([...Object.keys(r.lifecycle), ...Object.keys(r.commit)])];
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
  const commitRows = keys.map((k) => {
    const c = r.commit[k];
    const ms = c?.map((x) => x.ms);
    return [
      k,
      num(med(ms)),
      num(p90(ms)),
      num(mean(c?.map((x) => x.cpu.daemon)), 1),
      num(mean(c?.map((x) => x.cpu.containerd)), 1),
      ratio(med(ms), med(r.commit[base(k)]?.map((x) => x.ms))),
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
    "`POST /commit` of a container that wrote 10 MiB, deleted a file and replaced a directory, ms; CPU as above (dockerd diffs in its own process, engined off overlay2 through containerd's diff service):",
    '',
    table(['daemon, driver', 'median', 'p90', 'CPU daemon', 'CPU containerd', '÷ same daemon on overlay2'], commitRows),
  ].join('\n');
}
