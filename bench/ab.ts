// Before/after of two builds on one loaded machine (issue 16): an engined from each repository
// root (its own bin/engined and dist/), side by side, taking turns request by request — the API
// lifecycle of `true` (network none) and curl's time_total of GET /_ping and GET /containers/json
// — so load spreads over both. Prints medians, p25 and the daemon's CPU per operation.
// After a build of both: bin/node dist/bench/ab.js <rootA> <rootB> [lifecycles=30] [curls=400] [cliRuns=0]
// (a root may be this checkout; ENGINE_* variables for one side: A_ENV='K=V,K=V', B_ENV=…).
// cliRuns > 0 adds `docker run --rm busybox true` at each side in turn (the default bridge when
// the side's env names one: A_ENV=ENGINE_DEFAULT_BRIDGE=aba0 B_ENV=ENGINE_DEFAULT_BRIDGE=abb0).

import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { cpuMs } from './lib/proc.ts';

const run = promisify(execFile);

interface Side {
  name: string;
  daemon: { pid: number; socket: string; containerdPid(): number | null; loadBusybox(): Promise<void>; stop(): Promise<void> };
  lifecycle: Array<Record<string, number>>;
  ping: number[];
  list: number[];
  cli: number[];
  cpu: { lifecycle: number; ping: number; list: number; cli: number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p25 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 4)] ?? NaN;
const envOf = (s: string | undefined) =>
  Object.fromEntries(
    (s ?? '')
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as [string, string]),
  );

async function curl(socket: string, path: string): Promise<number> {
  const { stdout } = await run('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{time_total}',
    '--unix-socket',
    socket,
    `http://d${path}`,
  ]);
  const [code, secs] = stdout.trim().split(' ');
  if (code !== '200') throw new Error(`GET ${path} → ${code}`);
  return Number(secs) * 1000;
}

const [rootA, rootB] = [process.argv[2], process.argv[3]].map((r) => resolve(r ?? '.'));
const lifecycles = Number(process.argv[4] ?? 30);
const curls = Number(process.argv[5] ?? 400);
const cliRuns = Number(process.argv[6] ?? 0);

async function cliRun(socket: string): Promise<number> {
  const t0 = performance.now();
  await run('docker', ['run', '--rm', 'busybox', 'true'], { env: { ...process.env, DOCKER_HOST: `unix://${socket}` } });
  return performance.now() - t0;
}
const sides: Side[] = [];
try {
  for (const [name, root, env] of [
    ['A', rootA!, envOf(process.env.A_ENV)],
    ['B', rootB!, envOf(process.env.B_ENV)],
  ] as const) {
    const { Engined } = (await import(`${root}/dist/bench/targets/engined.js`)) as typeof import('./targets/engined.ts');
    const { daemon } = await Engined.start(env);
    await daemon.loadBusybox();
    sides.push({
      name: `${name} (${root})`,
      daemon,
      lifecycle: [],
      ping: [],
      list: [],
      cli: [],
      cpu: { lifecycle: 0, ping: 0, list: 0, cli: 0 },
    });
  }
  const { apiLifecycle } = await import('./scenarios/api-lifecycle.ts');
  const timed = async (s: Side, key: 'lifecycle' | 'ping' | 'list' | 'cli', fn: () => Promise<void>) => {
    const c0 = cpuMs(s.daemon.pid) ?? 0;
    await fn();
    s.cpu[key] += (cpuMs(s.daemon.pid) ?? 0) - c0;
  };
  for (let i = -2; i < lifecycles; i++) {
    for (const s of i % 2 ? [...sides].reverse() : sides) {
      await timed(s, 'lifecycle', async () => {
        const p = await apiLifecycle(s.daemon as never);
        if (i >= 0) s.lifecycle.push({ create: p.create, start: p.start, wait: p.wait, delete: p.delete, total: p.total });
      });
    }
  }
  for (let i = -10; i < curls; i++) {
    for (const s of i % 2 ? [...sides].reverse() : sides) {
      await timed(s, 'ping', async () => void (i >= 0 && s.ping.push(await curl(s.daemon.socket, '/_ping'))));
      await timed(s, 'list', async () => void (i >= 0 && s.list.push(await curl(s.daemon.socket, '/v1.41/containers/json'))));
    }
  }
  for (let i = cliRuns ? -2 : 0; i < cliRuns; i++) {
    for (const s of i % 2 ? [...sides].reverse() : sides) {
      await timed(s, 'cli', async () => void (i >= 0 ? s.cli.push(await cliRun(s.daemon.socket)) : await cliRun(s.daemon.socket)));
    }
  }
  const [a, b] = sides as [Side, Side];
  const row = (label: string, x: number, y: number, digits = 2) =>
    console.log(`| ${label} | ${x.toFixed(digits)} | ${y.toFixed(digits)} | ${(y / x).toFixed(2)}× |`);
  console.log(`A = ${a.name}, B = ${b.name}\n\n| | A | B | B/A |\n|---|---:|---:|---:|`);
  for (const k of ['create', 'start', 'wait', 'delete', 'total'])
    row(`lifecycle ${k}, median ms`, median(a.lifecycle.map((p) => p[k]!)), median(b.lifecycle.map((p) => p[k]!)));
  row('daemon CPU per lifecycle, ms (mean, warm-ups included)', a.cpu.lifecycle / (lifecycles + 2), b.cpu.lifecycle / (lifecycles + 2));
  row('GET /_ping time_total, median ms', median(a.ping), median(b.ping), 3);
  row('GET /_ping time_total, p25 ms', p25(a.ping), p25(b.ping), 3);
  row('GET /containers/json time_total, median ms', median(a.list), median(b.list), 3);
  row('GET /containers/json time_total, p25 ms', p25(a.list), p25(b.list), 3);
  row('daemon CPU per /_ping, µs (mean)', (a.cpu.ping * 1000) / (curls + 10), (b.cpu.ping * 1000) / (curls + 10), 0);
  row('daemon CPU per GET /containers/json, µs (mean)', (a.cpu.list * 1000) / (curls + 10), (b.cpu.list * 1000) / (curls + 10), 0);
  if (cliRuns) {
    row('`docker run --rm busybox true`, median ms', median(a.cli), median(b.cli));
    row('daemon CPU per `docker run --rm`, ms (mean, warm-ups included)', a.cpu.cli / (cliRuns + 2), b.cpu.cli / (cliRuns + 2));
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
} finally {
  for (const s of sides) await s.daemon.stop();
}
