// A daemon's memory around a burst of work (issue 25), variant against variant and against dockerd,
// shared by bench/pull-memory.ts (pulls) and bench/burst-memory.ts (a build, a log burst): each
// round starts every daemon fresh (the order rotates), readies it, reads its idle RSS, runs the
// burst while sampling the daemon's and its containerd's RSS every 20 ms (and the daemon's VmHWM,
// reset through /proc/<pid>/clear_refs just before), then reads both again at fixed delays after
// the burst ends. Medians over the rounds in one table.

import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startBurners } from './burners.ts';
import { loadAverage, rssMiB, smapsGroups, threadCpu, threadDelta } from './proc.ts';
import { median } from './stats.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { Dockerd } from '../targets/dockerd.ts';

export interface Variant {
  label: string;
  root: string | null; // null: dockerd
  env: Record<string, string>;
}
export type Reading = Record<string, number>;
export type Daemon = DaemonUnderTest & { containerdPid(): number | null; loadBusybox?(): Promise<void> };

/** `label=root[:K=V,K=V]` or `--dockerd` into a variant; null for anything else. */
export function variantArg(a: string): Variant | null {
  if (a === '--dockerd') return { label: 'dockerd', root: null, env: {} };
  if (a.startsWith('-') || !a.includes('=')) return null;
  const [label, rest] = a.split(/=(.*)/s) as [string, string];
  const [root, env] = rest.split(/:(.*)/s) as [string, string | undefined];
  const kv = (env ?? '')
    .split(',')
    .filter(Boolean)
    .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]);
  return { label, root: resolve(root), env: Object.fromEntries(kv) };
}

/** The command line of a burst script: the options every one takes, then its own. */
export interface BurstArgs {
  rounds: number;
  after: number[];
  busy: number;
  smaps: boolean;
  debug: boolean;
  /** engined from this checkout first when no variant names a root. */
  variants: Variant[];
  /** The script's own `--name value` options, by name, as given. */
  own: Map<string, string>;
}

/** `--rounds N --after a,b --busy N --smaps --debug`, `label=root[:K=V,…]`/`--dockerd`, and `ownNames`. */
export function parseBurstArgs(
  argv: readonly string[],
  defaults: { rounds: number; after: number[] },
  ownNames: readonly string[],
): BurstArgs {
  const a: BurstArgs = { ...defaults, busy: 0, smaps: false, debug: false, variants: [], own: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === '--rounds') a.rounds = Number(argv[++i]);
    else if (w === '--after') a.after = argv[++i]!.split(',').map(Number);
    else if (w === '--busy') a.busy = Number(argv[++i]);
    else if (w === '--smaps') a.smaps = true;
    else if (w === '--debug') a.debug = true;
    else if (ownNames.includes(w)) a.own.set(w, argv[++i]!);
    else {
      const v = variantArg(w);
      if (!v) throw new Error(`unknown argument ${w}`);
      a.variants.push(v);
    }
  }
  if (!a.variants.some((v) => v.root)) a.variants.unshift({ label: 'this', root: resolve('.'), env: {} });
  return a;
}

export function status(pid: number | null, key: string): number {
  if (!pid) return NaN;
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

export async function startVariant(v: Variant, debug: boolean): Promise<Daemon> {
  if (!v.root) return (await Dockerd.start()).daemon;
  const { Engined } = (await import(`${v.root}/dist/bench/targets/engined.js`)) as typeof import('../targets/engined.ts');
  return (await Engined.start({ ...process.env, ...v.env }, debug ? ['--debug'] : undefined)).daemon;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const groupsLine = (g: Reading) =>
  Object.entries(g)
    .filter(([, x]) => x >= 1)
    .map(([k, x]) => `${k} ${x.toFixed(0)}`)
    .join(', ');

export interface BurstOptions {
  /** Seconds after the burst at which RSS is read. */
  after: number[];
  /** CPU burners spinning during the burst. */
  busy?: number;
  /** engined's mappings by kind at the peak, right after and at the last delay. */
  smaps?: boolean;
  /** engined with --debug; its lines matching `grep` printed after. */
  debug?: boolean;
  grep?: string;
}

/**
 * One fresh daemon: `ready` (not measured), the idle reading, `burst` (returns the ms of each unit
 * of work it did) with the peak sampled, then the readings after.
 */
export async function measureBurst(
  v: Variant,
  o: BurstOptions,
  ready: (d: Daemon) => Promise<void>,
  burst: (d: Daemon) => Promise<number[]>,
): Promise<Reading> {
  const d = await startVariant(v, !!o.debug);
  try {
    await ready(d);
    await sleep(3000); // start-up's trim, containerd settled
    const ctr = () => d.containerdPid();
    const out: Reading = {
      idle: rssMiB(d.pid),
      'idle+ctrd': rssMiB(d.pid) + rssMiB(ctr()),
      'idle threads': status(d.pid, 'Threads'),
    };
    if (o.smaps && v.root) console.error(`${v.label} idle mappings: ${groupsLine(smapsGroups(d.pid))}`);
    let peak = 0;
    let peakBoth = 0;
    let peakThreads = 0;
    let atPeak: Reading | null = null;
    try {
      writeFileSync(`/proc/${d.pid}/clear_refs`, '5'); // VmHWM := VmRSS
    } catch {
      // not ours to reset (not root): the sampled peak alone
    }
    const sample = () => {
      const r = rssMiB(d.pid);
      if (o.smaps && v.root && r > peak + 5) atPeak = smapsGroups(d.pid);
      peak = Math.max(peak, r);
      peakBoth = Math.max(peakBoth, r + rssMiB(ctr()));
      peakThreads = Math.max(peakThreads, status(d.pid, 'Threads'));
    };
    const timer = setInterval(sample, 20);
    const b = o.busy ? startBurners(o.busy) : null;
    const cpu0 = threadCpu(d.pid);
    let ms: number[];
    try {
      ms = await burst(d);
    } finally {
      clearInterval(timer);
      await b?.stop();
    }
    sample();
    const cpu = threadDelta(cpu0, threadCpu(d.pid));
    console.error(`${v.label} threads' CPU ms during the burst: ${cpu.text}`);
    if (atPeak) console.error(`${v.label} at the peak: ${groupsLine(atPeak as Reading)}`);
    Object.assign(out, {
      peak,
      'peak (VmHWM)': Math.max(peak, status(d.pid, 'VmHWM') / 1024),
      'peak+ctrd': peakBoth,
      'peak threads': peakThreads,
      'burst ms': median(ms),
      'daemon CPU ms': cpu.total,
    });
    const t0 = performance.now();
    for (const s of o.after) {
      const wait = s * 1000 - (performance.now() - t0);
      if (wait > 0) await sleep(wait);
      out[`+${s}s`] = rssMiB(d.pid);
      out[`+${s}s +ctrd`] = rssMiB(d.pid) + rssMiB(ctr());
      out[`+${s}s threads`] = status(d.pid, 'Threads');
      if (o.smaps && v.root && (s === o.after[0] || s === o.after.at(-1)))
        console.error(`${v.label} +${s}s mappings: ${groupsLine(smapsGroups(d.pid))}`);
    }
    const log = (d as { td?: { output: string } }).td?.output;
    if (o.debug && log)
      for (const l of log.split('\n').filter((x) => new RegExp(o.grep ?? 'heap trimmed').test(x))) console.error(`${v.label}: ${l}`);
    return out;
  } finally {
    await d.stop();
  }
}

/** `rounds` rounds over the variants, the order rotating; each round's readings printed as they come. */
export async function rounds(variants: Variant[], n: number, one: (v: Variant) => Promise<Reading>): Promise<Map<string, Reading[]>> {
  const results = new Map<string, Reading[]>();
  for (let r = 0; r < n; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]!);
    for (const v of order) {
      const m = await one(v);
      (results.get(v.label) ?? results.set(v.label, []).get(v.label)!).push(m);
      console.error(
        `round ${r + 1} ${v.label}: ${Object.entries(m)
          .map(([k, x]) => `${k} ${x.toFixed(0)}`)
          .join(', ')}; load ${loadAverage()}`,
      );
    }
  }
  return results;
}

/** The medians as a markdown table, a variant a column, under `title`. */
export function printTable(title: string, results: Map<string, Reading[]>): void {
  const keys = Object.keys(results.values().next().value![0]!);
  console.log(`\n${title}; load ${loadAverage()}\n`);
  console.log(`| | ${[...results.keys()].join(' | ')} |`);
  console.log(`|---|${[...results.keys()].map(() => '---:').join('|')}|`);
  for (const k of keys) console.log(`| ${k} | ${[...results.values()].map((rs) => median(rs.map((x) => x[k]!)).toFixed(0)).join(' | ')} |`);
}
