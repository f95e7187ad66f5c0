// A build's and a log burst's memory (issue 25), engined against dockerd, as bench/pull-memory.ts
// does for pulls (bench/lib/burst.ts: fresh daemon each round, idle, peak sampled every 20 ms and
// VmHWM, RSS at fixed delays after the burst). The bursts:
//   build — `DOCKER_BUILDKIT=0 docker build --no-cache -q` of a generated context of
//           `--context-mib` MiB (10 files of random bytes) with `FROM busybox` + `COPY . /ctx`;
//   logs  — a busybox container writing `--log-mib` MiB to stdout in 100-byte lines (json-file
//           driver) while `GET /containers/{id}/logs?follow=1` reads it along; the burst ends
//           when the container has exited and the follow has ended (the container stays until
//           the last reading).
//   bin/node dist/bench/burst-memory.js [--work build,logs] [--rounds 3] [--after 0,2,5,15]
//     [--context-mib 100] [--log-mib 256] [--busy N] [--smaps] [--debug] [--dockerd] label=root[:K=V] …

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../test/helpers/daemon.ts';
import { api, drain } from './lib/http.ts';
import { measureBurst, parseBurstArgs, printTable, rounds, type Daemon } from './lib/burst.ts';
import { createContainer } from './scenarios/api-lifecycle.ts';

const {
  rounds: nRounds,
  after,
  busy,
  smaps,
  debug,
  variants,
  own,
} = parseBurstArgs(process.argv.slice(2), { rounds: 3, after: [0, 2, 5, 15] }, ['--work', '--context-mib', '--log-mib']);
const work = (own.get('--work') ?? 'build,logs').split(',');
const contextMiB = Number(own.get('--context-mib') ?? 100);
const logMiB = Number(own.get('--log-mib') ?? 256);

const ctxDir = await mkdtemp('/tmp/bench-burst-');

async function build(d: Daemon): Promise<number[]> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DOCKER_BUILDKIT: '0',
    DOCKER_HOST: `unix://${d.socket}`,
    DOCKER_CONFIG: join(d.dir, 'dc'),
  };
  delete env.DOCKER_CONTEXT;
  const t0 = performance.now();
  const r = await run('docker', ['build', '-q', '--no-cache', '--network', 'none', '-t', 'burst:1', ctxDir], { env, timeoutMs: 600_000 });
  if (r.code !== 0) throw new Error(`${d.kind}: docker build → ${r.code}: ${r.stderr.trim()}`);
  return [performance.now() - t0];
}

const LINE = 'x'.repeat(99); // + '\n' = 100 bytes a line
async function logs(d: Daemon): Promise<number[]> {
  const bytes = logMiB << 20;
  const id = await createContainer(d, ['sh', '-c', `yes ${LINE} | head -c ${bytes}`], {
    NetworkMode: 'none',
    LogConfig: { Type: 'json-file', Config: {} },
  });
  const t0 = performance.now();
  await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
  const [w, r] = await Promise.all([
    api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]),
    drain(d.socket, `/containers/${id}/logs?follow=1&stdout=1&stderr=1`),
  ]);
  const ms = performance.now() - t0;
  if (w.json<{ StatusCode: number }>().StatusCode !== 0) throw new Error(`${d.kind}: log writer failed`);
  if (r.status !== 200 || r.bytes < bytes) throw new Error(`${d.kind}: logs -f → ${r.status}, ${r.bytes} bytes of ${bytes}`);
  return [ms];
}

try {
  if (work.includes('build')) {
    const files = 10;
    for (let i = 0; i < files; i++) await writeFile(join(ctxDir, `f${i}.bin`), randomBytes(Math.round((contextMiB << 20) / files)));
    await mkdir(join(ctxDir, 'sub'), { recursive: true });
    await writeFile(join(ctxDir, 'sub', 'a.txt'), 'a\n');
    await writeFile(join(ctxDir, 'Dockerfile'), 'FROM busybox\nCOPY . /ctx\n');
  }
  const o = { after, busy, smaps, debug, grep: process.env.PM_LOG_GREP ?? 'heap trimmed' };
  const ready = async (d: Daemon) => {
    await d.loadBusybox!();
  };
  for (const kind of work) {
    const burst = kind === 'build' ? build : logs;
    const results = await rounds(variants, nRounds, (v) =>
      // The log writer's container stays for the readings after; the daemon's stop removes it.
      measureBurst(v, o, ready, burst),
    );
    const what =
      kind === 'build'
        ? `docker build of a ${contextMiB} MiB context (COPY . /ctx, --no-cache)`
        : `${logMiB} MiB of logs (json-file) read along by logs -f`;
    printTable(`${what}${busy ? `, ${busy} burners` : ''}, medians of ${nRounds} rounds (RSS MiB)`, results);
  }
} finally {
  await rm(ctxDir, { recursive: true, force: true });
}
