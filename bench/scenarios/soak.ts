// The soak: N sequential lifecycles of `true` (create → start → wait → delete, default network) on
// one engined, sampling the resident memory and open file descriptors of the daemon and of its
// containerd as it goes. Flat means the last 1 000 lifecycles (a tenth of N when N < 10 000) look
// like the first 1 000: no memory or descriptors that grow with the number of containers ever run,
// no lifecycle that slows down. Not part of the default run (`--only soak`, `--soak-count N`).

import { readdirSync } from 'node:fs';
import { loadAverage, rssMiB } from '../lib/proc.ts';
import { median } from '../lib/stats.ts';
import { num, table } from '../lib/table.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { apiLifecycle } from './api-lifecycle.ts';

export interface SoakSample {
  /** Lifecycles done when sampled. */
  done: number;
  daemonRss: number;
  containerdRss: number;
  daemonFds: number;
  containerdFds: number;
}

export interface SoakResult {
  count: number;
  /** Wall ms of each lifecycle, in order. */
  lifecycleMs: number[];
  samples: SoakSample[];
  wallS: number;
  loadBefore: string;
  loadAfter: string;
}

function fds(pid: number | null): number {
  if (!pid) return NaN;
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

function sample(d: DaemonUnderTest, done: number): SoakSample {
  const cd = d.containerdPid();
  return { done, daemonRss: rssMiB(d.pid), containerdRss: rssMiB(cd), daemonFds: fds(d.pid), containerdFds: fds(cd) };
}

/** `count` lifecycles one after the other, sampled `samples` times; progress every tenth. */
export async function soak(d: DaemonUnderTest, count: number, progress: (s: string) => void, samples = 200): Promise<SoakResult> {
  const every = Math.max(1, Math.floor(count / samples));
  const out: SoakResult = { count, lifecycleMs: [], samples: [sample(d, 0)], wallS: 0, loadBefore: loadAverage(), loadAfter: '' };
  const t0 = performance.now();
  for (let i = 1; i <= count; i++) {
    out.lifecycleMs.push((await apiLifecycle(d, {})).total);
    if (i % every === 0 || i === count) out.samples.push(sample(d, i));
    if (i % Math.max(1, Math.floor(count / 10)) === 0)
      progress(`soak: ${i}/${count} lifecycles, daemon RSS ${num(rssMiB(d.pid))} MiB, fds ${fds(d.pid)}, load ${loadAverage()}`);
  }
  out.wallS = (performance.now() - t0) / 1000;
  out.loadAfter = loadAverage();
  return out;
}

/** First vs last window (1 000 lifecycles, or a tenth of the count when smaller): medians of each. */
export function soakSection(r: SoakResult): string {
  const win = Math.min(1000, Math.max(1, Math.floor(r.count / 10)));
  const first = r.samples.filter((s) => s.done > 0 && s.done <= win);
  const last = r.samples.filter((s) => s.done > r.count - win);
  const rows: string[][] = [];
  const add = (label: string, a: number, b: number, unit: string) =>
    rows.push([`${label} (${unit})`, num(a), num(b), num(b - a), Number.isFinite(a) && a !== 0 ? `${(b / a).toFixed(2)}×` : '—']);
  add('lifecycle wall, median', median(r.lifecycleMs.slice(0, win)), median(r.lifecycleMs.slice(-win)), 'ms');
  for (const [label, f, unit] of [
    ['engined RSS, median of the samples', (s: SoakSample) => s.daemonRss, 'MiB'],
    ['its containerd RSS, median of the samples', (s: SoakSample) => s.containerdRss, 'MiB'],
    ['engined open fds, median of the samples', (s: SoakSample) => s.daemonFds, 'count'],
    ['its containerd open fds, median of the samples', (s: SoakSample) => s.containerdFds, 'count'],
  ] as const)
    add(label, median(first.map(f)), median(last.map(f)), unit);
  const s0 = r.samples[0]!;
  const end = r.samples[r.samples.length - 1]!;
  return [
    `- ${r.count} sequential lifecycles of \`true\` (default network) on one engined in ${r.wallS.toFixed(0)} s; ${r.samples.length} samples; load average before ${r.loadBefore}, after ${r.loadAfter}`,
    `- before the first lifecycle: engined ${num(s0.daemonRss)} MiB / ${s0.daemonFds} fds, its containerd ${num(s0.containerdRss)} MiB / ${s0.containerdFds} fds; after the last: engined ${num(end.daemonRss)} MiB / ${end.daemonFds} fds, its containerd ${num(end.containerdRss)} MiB / ${end.containerdFds} fds`,
    '',
    table([``, `first ${win}`, `last ${win}`, 'last − first', 'last ÷ first'], rows),
  ].join('\n');
}
