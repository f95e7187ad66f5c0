// The classic builder, engined vs dockerd 20.10, with the docker CLI (DOCKER_BUILDKIT=0) at each:
// a 7-step Dockerfile (FROM, ENV, WORKDIR, COPY, two RUN, CMD) cold (--no-cache) and fully cached,
// and `COPY . /ctx` of a 100 MiB / 10 000-file context (--no-cache), with each daemon's peak
// resident memory during each scenario (VmRSS sampled every 5 ms while its builds run; VmHWM is
// since the process started, so it cannot tell the scenarios apart): the 100 MiB context should
// peak no higher than the small builds. RUN steps use --network none on both (dockerd runs here
// with --bridge none).
//   bin/node dist/bench/build.js [runs=5] [--no-dockerd]
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../test/helpers/daemon.ts';
import { median } from './lib/stats.ts';
import { rssMiB } from './lib/proc.ts';
import { Engined } from './targets/engined.ts';
import { Dockerd, ensureDockerd } from './targets/dockerd.ts';
import type { DaemonUnderTest } from './targets/daemon.ts';

const DOCKERFILE =
  'FROM busybox\nENV APP=/app MODE=bench\nWORKDIR /app\nCOPY . .\nRUN echo one > /app/one.txt\nRUN cat /app/one.txt /app/src/a.txt > /app/both.txt\nCMD ["cat", "/app/both.txt"]\n';

/** The highest VmRSS (MiB) of pid while fn runs, sampled every 5 ms (and once before and after). */
async function peakRss<T>(pid: number, fn: () => Promise<T>): Promise<[T, number]> {
  let peak = rssMiB(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 5);
  try {
    const r = await fn();
    return [r, Math.max(peak, rssMiB(pid))];
  } finally {
    clearInterval(timer);
  }
}

async function build(d: DaemonUnderTest, dir: string, extra: string[]): Promise<number> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DOCKER_BUILDKIT: '0',
    DOCKER_HOST: `unix://${d.socket}`,
    DOCKER_CONFIG: join(d.dir, 'docker-config'),
  };
  delete env.DOCKER_CONTEXT;
  const t0 = performance.now();
  const r = await run('docker', ['build', '-q', '--network', 'none', ...extra, dir], { env, timeoutMs: 600_000 });
  const ms = performance.now() - t0;
  if (r.code !== 0) throw new Error(`${d.kind}: docker build ${extra.join(' ')} → ${r.code}: ${r.stderr.trim()}`);
  return ms;
}

async function main(): Promise<void> {
  const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 5);
  const withDockerd = !process.argv.includes('--no-dockerd') && !(await ensureDockerd((s) => process.stderr.write(`${s}\n`)));
  const work = await mkdtemp('/tmp/bench-build-');
  const small = join(work, 'small');
  await mkdir(join(small, 'src'), { recursive: true });
  await writeFile(join(small, 'Dockerfile'), DOCKERFILE);
  for (let i = 0; i < 20; i++) await writeFile(join(small, 'src', i ? `f${i}.txt` : 'a.txt'), `file ${i}\n`);
  const big = join(work, 'big');
  for (let dirN = 0; dirN < 100; dirN++) {
    await mkdir(join(big, `d${dirN}`), { recursive: true });
    // 10 000 files, ~102 MiB: in each of 100 directories one 950 KiB file and 99 of 1 KiB.
    for (let f = 0; f < 100; f++) await writeFile(join(big, `d${dirN}`, `f${f}`), randomBytes(f === 0 ? 950 * 1024 : 1024));
  }
  await writeFile(join(big, 'Dockerfile'), 'FROM busybox\nCOPY . /ctx\n');
  const daemons: DaemonUnderTest[] = [];
  try {
    const engined = (await Engined.start()).daemon;
    daemons.push(engined);
    await engined.loadBusybox();
    if (withDockerd) {
      const dockerd = (await Dockerd.start()).daemon;
      daemons.push(dockerd);
      await dockerd.loadBusybox();
    }
    const rows: string[] = [
      '| scenario | engined ms (median) | dockerd ms (median) | ratio | engined peak RSS | dockerd peak RSS |',
      '|---|---|---|---|---|---|',
    ];
    const measure = async (label: string, dir: string, extra: string[], prime: boolean) => {
      const times = new Map<string, number[]>();
      const peaks = new Map<string, number>();
      for (const d of daemons) if (prime) await build(d, dir, []);
      for (let i = 0; i < runs; i++) {
        for (const d of daemons) {
          const [ms, peak] = await peakRss(d.pid, () => build(d, dir, extra));
          times.set(d.kind, [...(times.get(d.kind) ?? []), ms]);
          peaks.set(d.kind, Math.max(peaks.get(d.kind) ?? 0, peak));
        }
      }
      const e = median(times.get('engined')!);
      const k = times.get('dockerd') ? median(times.get('dockerd')!) : NaN;
      const mib = (kind: string) => (peaks.has(kind) ? `${peaks.get(kind)!.toFixed(0)} MiB` : '–');
      rows.push(
        `| ${label} | ${e.toFixed(0)} | ${Number.isNaN(k) ? '–' : k.toFixed(0)} | ${Number.isNaN(k) ? '–' : (e / k).toFixed(2)}× | ${mib('engined')} | ${mib('dockerd')} |`,
      );
    };
    await measure('7-step Dockerfile, cold (--no-cache)', small, ['--no-cache'], false);
    await measure('7-step Dockerfile, every step cached', small, [], true);
    await measure('100 MiB / 10 000-file context, COPY . (--no-cache)', big, ['--no-cache'], false);
    process.stdout.write(
      `${rows.join('\n')}\n\nPeak RSS: the daemon process's highest VmRSS sampled every 5 ms during the scenario's measured builds.\n`,
    );
  } finally {
    for (const d of daemons) await d.stop().catch((err) => process.stderr.write(`stopping ${d.kind}: ${(err as Error).message}\n`));
    await rm(work, { recursive: true, force: true });
  }
}

await main();
