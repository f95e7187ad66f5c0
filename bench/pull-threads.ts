// Where a pull's CPU goes, before/after in one run (issue 16): engined from one or more built trees
// (--root, repeatable; K=V after a colon sets the daemon's environment) and dockerd (--dockerd)
// pull the bench image (4 × 50 MiB random layers, gzip level 1, bench/scenarios/pull.ts) from a
// local registry on an empty store, taking turns. With --busy N every round runs twice: quiet, then
// with N CPU burners spinning (lib/burners.ts). Per daemon and mode: median wall time, CPU of the
// daemon + its containerd, and the daemon's CPU by thread (/proc/<pid>/task/*/stat: main thread,
// stage workers, libuv's pool, V8's helpers), with the load average.
//   bin/node dist/bench/pull-threads.js [--root DIR[:K=V,K=V]]… [--dockerd] [--n 3] [--busy N]
// PULL_THREADS_PERF=file: `perf record` of the first engined over its measured pulls;
// PULL_THREADS_LOG=file: its output. ENGINE_* variables for one tree: --root DIR:ENGINE_X=1.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startBurners } from './lib/burners.ts';
import { loadAverage, meanByThread, threadText } from './lib/proc.ts';
import { median } from './lib/stats.ts';
import { pullOnce, startPullRegistry } from './scenarios/pull.ts';
import type { DaemonUnderTest } from './targets/daemon.ts';
import { Dockerd } from './targets/dockerd.ts';

const args = process.argv.slice(2);
const roots: Array<{ root: string; env: Record<string, string> }> = [];
let n = 3;
let busy = 0;
let withDockerd = false;
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === '--root') {
    const [dir, envs] = args[++i]!.split(/:(.*)/s) as [string, string | undefined];
    const env = Object.fromEntries(
      (envs ?? '')
        .split(',')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    roots.push({ root: resolve(dir), env });
  } else if (a === '--n') n = Number(args[++i]);
  else if (a === '--busy') busy = Number(args[++i]);
  else if (a === '--dockerd') withDockerd = true;
  else throw new Error(`unknown argument ${a}`);
}
if (!roots.length) roots.push({ root: resolve('.'), env: {} });

interface Contender {
  name: string;
  daemon: DaemonUnderTest;
  runs: Record<string, Array<{ ms: number; cpu: number; daemon: number; containerd: number; threads: Map<string, number> }>>;
}

const img = await startPullRegistry();
const contenders: Contender[] = [];
let perf: ReturnType<typeof spawn> | null = null;
try {
  for (const { root, env } of roots) {
    const { Engined } = (await import(`${root}/dist/bench/targets/engined.js`)) as typeof import('./targets/engined.ts');
    const { daemon } = await Engined.start({ ...process.env, ...env });
    const tag = Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    contenders.push({ name: `engined ${root}${tag ? ` ${tag}` : ''}`, daemon, runs: {} });
  }
  if (withDockerd) contenders.push({ name: 'dockerd', daemon: (await Dockerd.start()).daemon, runs: {} });
  for (const c of contenders) await pullOnce(c.daemon, img); // warm-up: workers started, code compiled
  if (process.env.PULL_THREADS_PERF) {
    perf = spawn('perf', ['record', '-F', '999', '-g', '-p', String(contenders[0]!.daemon.pid), '-o', process.env.PULL_THREADS_PERF], {
      stdio: 'ignore',
    });
    await new Promise((r) => setTimeout(r, 1000));
  }
  const modes = busy ? ['quiet', `busy ${busy}`] : ['quiet'];
  for (let i = 0; i < n; i++) {
    for (const mode of modes) {
      const b = mode === 'quiet' ? null : startBurners(busy);
      if (b) await new Promise((r) => setTimeout(r, 500)); // burners on the CPU before the pull
      try {
        for (const c of i % 2 ? [...contenders].reverse() : contenders) {
          const r = await pullOnce(c.daemon as never, img);
          const t = r.threads;
          (c.runs[mode] ??= []).push({ ms: r.ms, cpu: r.cpu.daemon + r.cpu.containerd, ...r.cpu, threads: t });
          console.error(
            `${mode}: ${c.name}: ${r.ms.toFixed(0)} ms, CPU ${r.cpu.daemon} + ${r.cpu.containerd} ms (${[...t].map(([k, v]) => `${k} ${v}`).join(', ')}); load ${loadAverage()}`,
          );
        }
      } finally {
        await b?.stop();
      }
    }
  }
  console.log(`\n${n} pulls of ${img.mb.toFixed(0)} MB each, medians; load ${loadAverage()}\n`);
  console.log('| mode | daemon | wall ms | CPU ms (daemon + containerd) | daemon | containerd | daemon threads (mean ms) |');
  console.log('|---|---|---:|---:|---:|---:|---|');
  for (const mode of modes) {
    for (const c of contenders) {
      const rs = c.runs[mode] ?? [];
      const per = threadText(meanByThread(rs.map((r) => r.threads)), 10);
      const m = (f: (r: (typeof rs)[number]) => number) => median(rs.map(f)).toFixed(0);
      console.log(
        `| ${mode} | ${c.name} | ${m((r) => r.ms)} | ${m((r) => r.cpu)} | ${m((r) => r.daemon)} | ${m((r) => r.containerd)} | ${per} |`,
      );
    }
  }
} finally {
  if (perf) {
    perf.kill('SIGINT');
    await new Promise((r) => perf!.once('exit', r));
  }
  const first = contenders[0]?.daemon as { td?: { output: string } } | undefined;
  for (const c of contenders) await c.daemon.stop();
  if (process.env.PULL_THREADS_LOG && first?.td) writeFileSync(process.env.PULL_THREADS_LOG, first.td.output);
  await img.registry.cleanup();
}
