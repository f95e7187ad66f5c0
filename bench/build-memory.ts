// The classic builder's memory against the context's shape (issue 13): bytes and file count apart.
// Each row builds one context (docker CLI, DOCKER_BUILDKIT=0, --no-cache) on a fresh engined (-D)
// and reports the daemon's peak resident memory during the build (VmHWM, reset through
// /proc/<pid>/clear_refs just before it) and the peaks of its V8 heap, external and arrayBuffers
// memory (the daemon's `build memory` debug line, process.memoryUsage() every 25 ms). Contexts:
// (a) 10 files of 1, 10, 100, 400 MiB in total; (b) 1 000 / 10 000 / 40 000 files of 10 KiB;
// (c) 10 000 files of 40 KiB (400 MiB). Each with `COPY . /ctx` (all) and `COPY small.txt /x`
// (part: the rest of the context is streamed past, unpacked and never copied).
//   bin/node dist/bench/build-memory.js [--only=a1,b10k,...] [--all-only] [--part-only]
import { randomFillSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../test/helpers/daemon.ts';
import { loadAverage, rssMiB } from './lib/proc.ts';
import { Engined } from './targets/engined.ts';

interface Shape {
  name: string;
  files: number;
  totalMiB: number;
}

const SHAPES: Shape[] = [
  { name: 'a1', files: 10, totalMiB: 1 },
  { name: 'a10', files: 10, totalMiB: 10 },
  { name: 'a100', files: 10, totalMiB: 100 },
  { name: 'a400', files: 10, totalMiB: 400 },
  { name: 'b1k', files: 1_000, totalMiB: (1_000 * 10) / 1024 },
  { name: 'b10k', files: 10_000, totalMiB: (10_000 * 10) / 1024 },
  { name: 'b40k', files: 40_000, totalMiB: (40_000 * 10) / 1024 },
  { name: 'c400', files: 10_000, totalMiB: 400 },
];

const DOCKERFILES = {
  all: 'FROM busybox\nCOPY . /ctx\n',
  part: 'FROM busybox\nCOPY small.txt /x\n',
};

function status(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Writes the context: `files` files of equal size (random data) in directories of 100, plus small.txt. */
async function makeContext(dir: string, s: Shape): Promise<void> {
  const size = Math.round((s.totalMiB * 1048576) / s.files);
  const buf = Buffer.allocUnsafe(size);
  for (let i = 0; i < s.files; i++) {
    const sub = join(dir, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) await mkdir(sub, { recursive: true });
    randomFillSync(buf, 0, Math.min(size, 4096)); // distinct files; the rest need not be random
    if (i === 0) randomFillSync(buf);
    writeFileSync(join(sub, `f${i}`), buf);
  }
  await writeFile(join(dir, 'small.txt'), 'small\n');
}

interface Row {
  shape: Shape;
  df: string;
  ms: number;
  before: number;
  peak: number;
  after: number;
  v8: Record<string, number>;
  load: string;
}

async function measure(shape: Shape, df: keyof typeof DOCKERFILES, ctx: string): Promise<Row> {
  await writeFile(join(ctx, 'Dockerfile'), DOCKERFILES[df]);
  // NODE_OPTIONS (e.g. --trace-gc) reaches the daemon; BENCH_DAEMON_LOG=<prefix> keeps its output.
  const d = (await Engined.start(undefined, ['-D'])).daemon;
  try {
    await d.loadBusybox();
    await new Promise((r) => setTimeout(r, 1500)); // let start-up settle (the heap trimmer runs after it)
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DOCKER_BUILDKIT: '0',
      DOCKER_HOST: `unix://${d.socket}`,
      DOCKER_CONFIG: join(d.dir, 'docker-config'),
    };
    delete env.DOCKER_CONTEXT;
    const before = rssMiB(d.pid);
    writeFileSync(`/proc/${d.pid}/clear_refs`, '5'); // VmHWM := VmRSS
    const load = loadAverage();
    const t0 = performance.now();
    const r = await run('docker', ['build', '-q', '--no-cache', '--network', 'none', ctx], { env, timeoutMs: 900_000 });
    const ms = performance.now() - t0;
    if (r.code !== 0) throw new Error(`${shape.name}/${df}: docker build → ${r.code}: ${r.stderr.trim()}`);
    const peak = status(d.pid, 'VmHWM');
    const after = rssMiB(d.pid);
    const lines = d.td.output.split('\n').filter((l) => l.includes('msg="build memory"'));
    const v8: Record<string, number> = {};
    for (const m of (lines.at(-1) ?? '').matchAll(/(\w+)PeakMiB=([\d.]+)/g)) v8[m[1]!] = Number(m[2]);
    if (process.env.BENCH_DAEMON_LOG) writeFileSync(`${process.env.BENCH_DAEMON_LOG}.${shape.name}-${df}`, d.td.output);
    return { shape, df, ms, before, peak, after, v8, load };
  } finally {
    await d.stop();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args
    .find((a) => a.startsWith('--only='))
    ?.slice(7)
    .split(',');
  const kinds: Array<keyof typeof DOCKERFILES> = args.includes('--all-only')
    ? ['all']
    : args.includes('--part-only')
      ? ['part']
      : ['all', 'part'];
  const work = await mkdtemp('/tmp/bench-bmem-');
  const rows: Row[] = [];
  const f = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(0));
  try {
    for (const shape of SHAPES.filter((s) => !only || only.includes(s.name))) {
      const ctx = join(work, shape.name);
      await mkdir(ctx);
      await makeContext(ctx, shape);
      for (const df of kinds) {
        const row = await measure(shape, df, ctx);
        rows.push(row);
        process.stderr.write(
          `${shape.name} ${df}: peak ${row.peak.toFixed(0)} MiB (before ${row.before.toFixed(0)}), ${(row.ms / 1000).toFixed(1)} s\n`,
        );
      }
      await rm(ctx, { recursive: true, force: true });
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const out = [
    '| context | files | MiB | COPY | build s | RSS before | peak RSS | Δ peak | RSS after | heapUsed peak | heapTotal peak | external peak | arrayBuffers peak | load (1/5/15) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.shape.name} | ${r.shape.files} | ${f(r.shape.totalMiB)} | ${r.df} | ${(r.ms / 1000).toFixed(1)} | ${f(r.before)} | ${f(r.peak)} | ${f(r.peak - r.before)} | ${f(r.after)} | ` +
        `${f(r.v8.heapUsed)} | ${f(r.v8.heapTotal)} | ${f(r.v8.external)} | ${f(r.v8.arrayBuffers)} | ${r.load} |`,
    ),
  ];
  process.stdout.write(
    `${out.join('\n')}\n\nMiB throughout. Peak RSS: the daemon's VmHWM over the build (reset just before it); V8 columns: peaks of process.memoryUsage() sampled every 25 ms by the daemon.\n`,
  );
}

await main();
