// A pull's memory (issue 25), variant against variant and against dockerd: each round starts every
// daemon fresh (the order rotates), reads its idle RSS, pulls the bench image (bench/scenarios/pull.ts,
// default 4 × 50 MiB random layers, ~210 MB) `--pulls` times in a row, the image removed between
// pulls, sampling the daemon's and its containerd's RSS every 20 ms, then reads both again at
// fixed delays after the last pull ends. With --busy N, N CPU burners spin during the pulls.
// Per daemon: idle RSS before, peak RSS during the pulls, RSS right after and at each delay (daemon
// alone and + containerd), threads, wall time per pull; medians over the rounds. --smaps prints
// engined's mappings by kind (lib/proc.ts smapsGroups) right after and at the last delay; --debug
// runs engined with --debug and prints its heap-trim and pull-timeline lines.
//   bin/node dist/bench/pull-memory.js [--rounds 2] [--pulls 3] [--after 0,1,5,15,60] [--busy N]
//     [--layers 4 --layer-mib 50] [--smaps] [--debug] [--dockerd] label=root[:K=V,K=V] …

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startBurners } from './lib/burners.ts';
import { loadAverage, rssMiB, smapsGroups } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { pullOnce, startPullRegistry } from './scenarios/pull.ts';
import type { DaemonUnderTest } from './targets/daemon.ts';
import { Dockerd } from './targets/dockerd.ts';

interface Variant {
  label: string;
  root: string | null; // null: dockerd
  env: Record<string, string>;
}
type Reading = Record<string, number>;

const argv = process.argv.slice(2);
let rounds = 2;
let pulls = 3;
let busy = 0;
let after = [0, 1, 5, 15, 60];
let layers = 4;
let layerMiB = 50;
let smaps = false;
let debug = false;
const variants: Variant[] = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  if (a === '--rounds') rounds = Number(argv[++i]);
  else if (a === '--pulls') pulls = Number(argv[++i]);
  else if (a === '--busy') busy = Number(argv[++i]);
  else if (a === '--after') after = argv[++i]!.split(',').map(Number);
  else if (a === '--layers') layers = Number(argv[++i]);
  else if (a === '--layer-mib') layerMiB = Number(argv[++i]);
  else if (a === '--smaps') smaps = true;
  else if (a === '--debug') debug = true;
  else if (a === '--dockerd') variants.push({ label: 'dockerd', root: null, env: {} });
  else {
    const [label, rest] = a.split(/=(.*)/s) as [string, string];
    const [root, env] = rest.split(/:(.*)/s) as [string, string | undefined];
    const kv = (env ?? '')
      .split(',')
      .filter(Boolean)
      .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]);
    variants.push({ label, root: resolve(root), env: Object.fromEntries(kv) });
  }
}
if (!variants.some((v) => v.root)) variants.unshift({ label: 'this', root: resolve('.'), env: {} });

function status(pid: number | null, key: string): number {
  if (!pid) return NaN;
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

async function start(v: Variant): Promise<DaemonUnderTest & { containerdPid(): number | null }> {
  if (!v.root) return (await Dockerd.start()).daemon;
  const { Engined } = (await import(`${v.root}/dist/bench/targets/engined.js`)) as typeof import('./targets/engined.ts');
  return (await Engined.start({ ...process.env, ...v.env }, debug ? ['--debug'] : undefined)).daemon;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const groupsLine = (g: Reading) =>
  Object.entries(g)
    .filter(([, x]) => x >= 1)
    .map(([k, x]) => `${k} ${x.toFixed(0)}`)
    .join(', ');

async function measure(v: Variant, img: Awaited<ReturnType<typeof startPullRegistry>>): Promise<Reading> {
  const d = await start(v);
  try {
    await sleep(3000); // start-up's trim, containerd settled
    const ctr = () => d.containerdPid();
    const out: Reading = {
      idle: rssMiB(d.pid),
      'idle+ctrd': rssMiB(d.pid) + rssMiB(ctr()),
      'idle threads': status(d.pid, 'Threads'),
    };
    if (smaps && v.root) console.error(`${v.label} idle mappings: ${groupsLine(smapsGroups(d.pid))}`);
    let peak = 0;
    let peakBoth = 0;
    let peakThreads = 0;
    let atPeak: Reading | null = null;
    const timer = setInterval(() => {
      const r = rssMiB(d.pid);
      if (smaps && v.root && r > peak + 5) atPeak = smapsGroups(d.pid);
      peak = Math.max(peak, r);
      peakBoth = Math.max(peakBoth, r + rssMiB(ctr()));
      peakThreads = Math.max(peakThreads, status(d.pid, 'Threads'));
    }, 20);
    const b = busy ? startBurners(busy) : null;
    const ms: number[] = [];
    try {
      for (let i = 0; i < pulls; i++) ms.push((await pullOnce(d as never, img)).ms);
    } finally {
      clearInterval(timer);
      await b?.stop();
    }
    if (atPeak) console.error(`${v.label} at the peak: ${groupsLine(atPeak as Reading)}`);
    Object.assign(out, { peak, 'peak+ctrd': peakBoth, 'peak threads': peakThreads, 'pull ms': median(ms) });
    const t0 = performance.now();
    for (const s of after) {
      const wait = s * 1000 - (performance.now() - t0);
      if (wait > 0) await sleep(wait);
      out[`+${s}s`] = rssMiB(d.pid);
      out[`+${s}s +ctrd`] = rssMiB(d.pid) + rssMiB(ctr());
      out[`+${s}s threads`] = status(d.pid, 'Threads');
      if (smaps && v.root && (s === after[0] || s === after.at(-1)))
        console.error(`${v.label} +${s}s mappings: ${groupsLine(smapsGroups(d.pid))}`);
    }
    out.hwm = status(d.pid, 'VmHWM') / 1024;
    const log = (d as { td?: { output: string } }).td?.output;
    if (debug && log)
      for (const l of log.split('\n').filter((x) => new RegExp(process.env.PM_LOG_GREP ?? 'heap trimmed|pull timeline').test(x)))
        console.error(`${v.label}: ${l}`);
    return out;
  } finally {
    await d.stop();
  }
}

const img = await startPullRegistry({ layers, layerBytes: layerMiB << 20 });
const results = new Map<string, Reading[]>();
try {
  for (let r = 0; r < rounds; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]!);
    for (const v of order) {
      const m = await measure(v, img);
      (results.get(v.label) ?? results.set(v.label, []).get(v.label)!).push(m);
      console.error(
        `round ${r + 1} ${v.label}: ${Object.entries(m)
          .map(([k, x]) => `${k} ${x.toFixed(0)}`)
          .join(', ')}; load ${loadAverage()}`,
      );
    }
  }
} finally {
  await img.registry.cleanup();
}
const keys = Object.keys(results.values().next().value![0]!);
console.log(
  `\n${pulls} pulls of ${img.mb.toFixed(0)} MB (${layers} layers)${busy ? `, ${busy} burners` : ''}, medians of ${rounds} rounds (RSS MiB); load ${loadAverage()}\n`,
);
console.log(`| | ${[...results.keys()].join(' | ')} |`);
console.log(`|---|${[...results.keys()].map(() => '---:').join('|')}|`);
for (const k of keys) console.log(`| ${k} | ${[...results.values()].map((rs) => median(rs.map((x) => x[k]!)).toFixed(0)).join(' | ')} |`);
