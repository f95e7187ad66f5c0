// The `engine` CLI against the docker CLI 28, both pointed at the same engined: wall time, CPU (user
// + system of the CLI process alone) and peak memory (max RSS of the CLI process), both from wait4,
// of `--version` (no daemon: the start-up cost alone), `ps` with no containers, `ps -a` with 500,
// `run --rm busybox true` and `images`. `engine` is the executable compiled with Bun
// (dist/bin/engine, scripts/build-cli.mjs), the one bin/engine runs. Used by run.ts (`--only
// client`) and by the standalone bench/client-cli.ts.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { httpOverUnix, REPO_ROOT } from '../../test/helpers/daemon.ts';
import { loadAverage } from '../lib/proc.ts';
import { summarize } from '../lib/stats.ts';
import { num, ratio, table } from '../lib/table.ts';

export interface CliSample {
  wallMs: number;
  cpuMs: number;
  /** The CLI process's peak resident memory (ru_maxrss), KiB. */
  rssKb: number;
}

export const CLIENT_CASES = ['version', 'ps', 'ps500', 'run', 'images'] as const;
type Case = (typeof CLIENT_CASES)[number];
export interface ClientResults {
  samples: Partial<Record<`${'engine' | 'docker'}:${Case}`, CliSample[]>>;
  /** The engine executable measured. */
  engineBin?: string;
  /** /proc/loadavg around the measurement: the machine is shared, wall times depend on it. */
  loadBefore: string;
  loadAfter: string;
}

/** Containers made (created, not started) for the `ps -a` case. */
export const PS_CONTAINERS = 500;

const ARGS: Record<Case, string[]> = {
  version: ['--version'],
  ps: ['ps'],
  ps500: ['ps', '-a'],
  run: ['run', '--rm', 'busybox', 'true'],
  images: ['images'],
};
const LABELS: Record<Case, string> = {
  version: '`--version` (no daemon)',
  ps: '`ps` (0 containers)',
  ps500: `\`ps -a\` (${PS_CONTAINERS} containers)`,
  run: '`run --rm busybox true`',
  images: '`images`',
};

// time(1) counts CPU in 10 ms steps, too coarse for a CLI run; this Python helper forks the
// command, reaps it with wait4 and prints its wall time, user + system CPU in ms and ru_maxrss in
// KiB (its own start-up is outside all three; the fork's copy of Python is replaced by exec, and
// ru_maxrss of the reaped child is the executed program's peak). Python 3 is on every test machine
// (python3-docker needs it).
const TIMER = [
  'import os, sys, time',
  't0 = time.perf_counter()',
  'pid = os.fork()',
  'if pid == 0:',
  '    fd = os.open("/dev/null", os.O_WRONLY); os.dup2(fd, 1); os.execvp(sys.argv[1], sys.argv[1:])',
  '_, st, ru = os.wait4(pid, 0)',
  'w = (time.perf_counter() - t0) * 1000',
  'print(f"{w} {(ru.ru_utime + ru.ru_stime) * 1000} {ru.ru_maxrss} {os.waitstatus_to_exitcode(st)}")',
].join('\n');

/** Runs a command once (stdout discarded): its wall time, its own CPU and its peak RSS. */
async function measure(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliSample> {
  const { out, err } = await new Promise<{ out: string; err: string }>((resolve, reject) => {
    const child = spawn('python3', ['-c', TIMER, cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let o = '';
    let e = '';
    child.stdout.on('data', (b) => (o += b));
    child.stderr.on('data', (b) => (e += b));
    child.on('error', reject);
    child.on('close', () => resolve({ out: o, err: e }));
  });
  const [wallMs, cpuMs, rssKb, code] = out.trim().split(' ').map(Number) as [number, number, number, number];
  if (code !== 0 || !Number.isFinite(wallMs)) throw new Error(`${cmd} ${args.join(' ')} → ${code}: ${err.trim()}`);
  return { wallMs, cpuMs, rssKb };
}

/** Creates `n` containers (not started) and returns their IDs. */
async function createContainers(socket: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await httpOverUnix(socket, 'POST', '/containers/create', { body: { Image: 'busybox', Cmd: ['true'] } });
    if (r.status !== 201) throw new Error(`container create → ${r.status}: ${r.body.toString()}`);
    ids.push((JSON.parse(r.body.toString()) as { Id: string }).Id);
  }
  return ids;
}

/**
 * `n` measured rounds after `warmups`: each round runs every case once per CLI, the CLI that goes
 * first alternating from round to round (load on the shared machine and any cache warmth spread
 * over both). The 500-container case runs in rounds of its own once those containers exist (and
 * they are removed after). `scratch` holds each CLI's (empty) config directory.
 */
export async function clientCli(socket: string, scratch: string, n: number, warmups: number): Promise<ClientResults> {
  const host = `unix://${socket}`;
  const base = { PATH: process.env.PATH, HOME: scratch };
  const envs = {
    engine: { ...base, ENGINE_HOST: host, ENGINE_CONFIG: join(scratch, 'engine') },
    docker: { ...base, DOCKER_HOST: host, DOCKER_CONFIG: join(scratch, 'docker') },
  };
  // ENGINE_BENCH_CLI: another build of the CLI (e.g. bin/engine with ENGINE_CLI_NODE=1, the Node bundle).
  const bins = { engine: process.env.ENGINE_BENCH_CLI ?? join(REPO_ROOT, 'dist/bin/engine'), docker: 'docker' };
  if (process.env.ENGINE_CLI_NODE) (envs.engine as NodeJS.ProcessEnv).ENGINE_CLI_NODE = process.env.ENGINE_CLI_NODE;
  // Both executables are read back from disk before the warm-ups, as after an install or a boot: a
  // file cached as it was written (a fresh build of the CLI) maps ~5 MiB more per run (scripts/page-cache.mjs).
  for (const bin of [bins.engine, 'docker'])
    spawnSync('sh', ['-c', 'f=$(command -v "$1") && sync "$f" && dd if="$f" iflag=nocache count=0 status=none', 'sh', bin]);
  const res: ClientResults['samples'] = {};
  const loadBefore = loadAverage();
  const rounds = async (cases: readonly Case[]) => {
    for (let i = -warmups; i < n; i++) {
      for (const c of cases) {
        const order = (i & 1) === 0 ? (['engine', 'docker'] as const) : (['docker', 'engine'] as const);
        for (const who of order) {
          const s = await measure(bins[who], ARGS[c], envs[who]);
          if (i >= 0) (res[`${who}:${c}`] ??= []).push(s);
        }
      }
    }
  };
  await rounds(['version', 'ps', 'run', 'images']);
  const ids = await createContainers(socket, PS_CONTAINERS);
  try {
    await rounds(['ps500']);
  } finally {
    for (const id of ids) await httpOverUnix(socket, 'DELETE', `/containers/${id}?force=1`);
  }
  return { samples: res, engineBin: bins.engine, loadBefore, loadAfter: loadAverage() };
}

/** The report section: medians and p90 of wall, CPU and max RSS, and engine/docker ratios of the medians. */
export function clientSection(r: ClientResults, n: number, warmups: number): string {
  const rows: string[][] = [];
  for (const c of CLIENT_CASES) {
    const e = r.samples[`engine:${c}`];
    const d = r.samples[`docker:${c}`];
    if (!e || !d) continue;
    for (const [what, f] of [
      ['wall, ms', (x: CliSample) => x.wallMs],
      ['CPU, ms', (x: CliSample) => x.cpuMs],
      ['max RSS, MiB', (x: CliSample) => (x.rssKb ?? NaN) / 1024],
    ] as const) {
      const a = summarize(e.map(f));
      const b = summarize(d.map(f));
      rows.push([`${LABELS[c]} (${what})`, num(a.median), num(a.p90), num(b.median), num(b.p90), ratio(a.median, b.median)]);
    }
  }
  return [
    `- engine: ${r.engineBin ?? 'dist/bin/engine'}; ${n} rounds after ${warmups} warm-ups, the CLI going first alternating; CPU = user + system and max RSS = ru_maxrss of the CLI process (wait4)`,
    `- load average before: ${r.loadBefore}; after: ${r.loadAfter}`,
    '',
    table(['', 'engine median', 'p90', 'docker median', 'p90', 'engine/docker'], rows),
  ].join('\n');
}
