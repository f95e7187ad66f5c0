// Profiling aid for the classic builder (engined only): the 7-step Dockerfile built once, then
// rebuilt fully cached N times (wall ms and daemon CPU ms per build, medians), and optionally the
// 100 MiB / 10 000-file context (`--big`) with the daemon's peak RSS before and after. With
// `--cpu-prof DIR` the daemon runs under V8's CPU profiler (the profile is written when it stops).
//   bin/node dist/bench/build-profile.js [n=15] [--big[=scale]] [--cpu-prof DIR]
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../test/helpers/daemon.ts';
import { median } from './lib/stats.ts';
import { cpuMs } from './lib/proc.ts';
import { Engined } from './targets/engined.ts';

const DOCKERFILE =
  'FROM busybox\nENV APP=/app MODE=bench\nWORKDIR /app\nCOPY . .\nRUN echo one > /app/one.txt\nRUN cat /app/one.txt /app/src/a.txt > /app/both.txt\nCMD ["cat", "/app/both.txt"]\n';
const hwm = (pid: number) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

const argv = process.argv.slice(2);
const n = Number(argv.find((a) => /^\d+$/.test(a)) ?? 15);
const profDir = argv.includes('--cpu-prof') ? argv[argv.indexOf('--cpu-prof') + 1]! : undefined;
const work = await mkdtemp('/tmp/bench-bprof-');
const small = join(work, 'small');
await mkdir(join(small, 'src'), { recursive: true });
await writeFile(join(small, 'Dockerfile'), DOCKERFILE);
for (let i = 0; i < 20; i++) await writeFile(join(small, 'src', i ? `f${i}.txt` : 'a.txt'), `file ${i}\n`);
const env = profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : undefined;
const d = (await Engined.start(env)).daemon;
try {
  await d.loadBusybox();
  const denv: NodeJS.ProcessEnv = {
    ...process.env,
    DOCKER_BUILDKIT: '0',
    DOCKER_HOST: `unix://${d.socket}`,
    DOCKER_CONFIG: join(d.dir, 'docker-config'),
  };
  delete denv.DOCKER_CONTEXT;
  const build = async (dir: string, extra: string[] = []) => {
    const c0 = cpuMs(d.pid)!;
    const t0 = performance.now();
    const r = await run('docker', ['build', '-q', '--network', 'none', '-t', 'prof:x', ...extra, dir], { env: denv, timeoutMs: 600_000 });
    if (r.code !== 0) throw new Error(r.stderr);
    return { ms: performance.now() - t0, cpu: cpuMs(d.pid)! - c0 };
  };
  await build(small);
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await build(small);
    walls.push(r.ms);
    cpus.push(r.cpu);
  }
  process.stdout.write(`cached rebuild: wall ${median(walls).toFixed(0)} ms, daemon cpu ${median(cpus).toFixed(0)} ms (median of ${n})\n`);
  const bigArg = argv.find((a) => a.startsWith('--big'));
  if (bigArg) {
    const dirs = 100 * Number(bigArg.split('=')[1] ?? 1); // --big=2: twice the files and bytes
    const big = join(work, 'big');
    for (let dirN = 0; dirN < dirs; dirN++) {
      await mkdir(join(big, `d${dirN}`), { recursive: true });
      for (let f = 0; f < 100; f++) await writeFile(join(big, `d${dirN}`, `f${f}`), randomBytes(f === 0 ? 950 * 1024 : 1024));
    }
    await writeFile(join(big, 'Dockerfile'), 'FROM busybox\nCOPY . /ctx\n');
    const before = hwm(d.pid);
    const r = await build(big, ['--no-cache']);
    process.stdout.write(
      `big context (${dirs * 100} files): wall ${r.ms.toFixed(0)} ms, daemon cpu ${r.cpu.toFixed(0)} ms, VmHWM ${before.toFixed(0)} → ${hwm(d.pid).toFixed(0)} MiB\n`,
    );
  }
} finally {
  await d.stop();
  await rm(work, { recursive: true, force: true });
}
