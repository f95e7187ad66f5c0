// Removal at scale: N created (never started) containers removed 8 at a time, for N = a small and a
// large count, each daemon in turn; the wall time and the CPU of the daemon and of its containerd
// per container. A cost per container that grows from the small count to the large one is work
// that scales with what else exists (a scan, a rebuilt index, a garbage collection).

import { cpuMeter, loadAverage } from '../lib/proc.ts';
import { pool } from '../lib/stats.ts';
import { num, ratio, table } from '../lib/table.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { createContainer, removeContainer } from './api-lifecycle.ts';

export interface RemoveRun {
  containers: number;
  /** Per container, ms: wall (8 in flight), CPU of the daemon, CPU of its containerd. */
  wallMs: number;
  daemonCpuMs: number;
  containerdCpuMs: number;
  load: string;
}

/** Creates `count` containers (16 in flight), then removes them all (8 in flight) and measures that. */
export async function removeOnce(d: DaemonUnderTest, count: number): Promise<RemoveRun> {
  const ids: string[] = [];
  try {
    await pool(count, 16, async () => {
      ids.push(await createContainer(d, ['true']));
    });
    const cpu = cpuMeter({ daemon: d.pid, containerd: d.containerdPid() });
    const t0 = performance.now();
    const left = ids.splice(0);
    await pool(left.length, 8, async (i) => removeContainer(d, left[i]!));
    const wall = performance.now() - t0;
    const used = cpu();
    return {
      containers: count,
      wallMs: wall / count,
      daemonCpuMs: used.daemon / count,
      containerdCpuMs: used.containerd / count,
      load: loadAverage(),
    };
  } finally {
    await pool(ids.length, 8, async (i) => removeContainer(d, ids[i]!).catch(() => undefined));
  }
}

/** The report section: per-container figures at each count, and large ÷ small (1.00× = flat). */
export function removeSection(runs: { engined?: RemoveRun[]; dockerd?: RemoveRun[] }): string {
  const rows: string[][] = [];
  const counts = [...new Set([...(runs.engined ?? []), ...(runs.dockerd ?? [])].map((r) => r.containers))].sort((a, b) => a - b);
  const at = (who: RemoveRun[] | undefined, n: number) => who?.find((r) => r.containers === n);
  const fields = [
    ['wall per container, 8 in flight', (r: RemoveRun) => r.wallMs],
    ['  daemon CPU per container', (r: RemoveRun) => r.daemonCpuMs],
    ['  its containerd CPU per container', (r: RemoveRun) => r.containerdCpuMs],
  ] as const;
  for (const n of counts)
    for (const [label, f] of fields) {
      const e = at(runs.engined, n);
      const k = at(runs.dockerd, n);
      rows.push([`${label}, ${n} containers (ms)`, num(e && f(e)), num(k && f(k)), ratio(e && f(e), k && f(k))]);
    }
  if (counts.length > 1) {
    const [lo, hi] = [counts[0]!, counts[counts.length - 1]!];
    for (const [label, f] of fields) {
      const growth = (who?: RemoveRun[]) => {
        const a = at(who, lo);
        const b = at(who, hi);
        return a && b ? f(b) / f(a) : undefined;
      };
      rows.push([`${label.trim()}: ${hi} ÷ ${lo} (1.00× = flat)`, ratio(growth(runs.engined), 1), ratio(growth(runs.dockerd), 1), '']);
    }
  }
  const loads = [...(runs.engined ?? []), ...(runs.dockerd ?? [])].map((r) => `${r.containers}: ${r.load.split(' ')[0]}`);
  return [
    `- created containers (never started) removed with DELETE /containers/{id}, 8 at a time; load average (1 min) after each run: ${loads.join(', ')}`,
    '',
    table(['', 'engined', 'dockerd', 'ours/dockerd'], rows),
  ].join('\n');
}
