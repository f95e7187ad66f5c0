// The `engine` CLI against the docker CLI 28, both pointed at the same engined: wall time and CPU
// (user + system of the CLI process alone, from wait4) of `run --rm busybox true`, `ps`
// and `--version` (no daemon: the start-up cost alone). Used by run.ts (`--only client`) and by the
// standalone bench/client-cli.ts.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../test/helpers/daemon.ts';
import { loadAverage } from '../lib/proc.ts';
import { summarize } from '../lib/stats.ts';
import { num, ratio, table } from '../lib/table.ts';

export interface CliSample {
  wallMs: number;
  cpuMs: number;
}

export const CLIENT_CASES = ['run', 'ps', 'version'] as const;
type Case = (typeof CLIENT_CASES)[number];
export interface ClientResults {
  samples: Record<`${'engine' | 'docker'}:${Case}`, CliSample[]>;
  /** /proc/loadavg around the measurement: the machine is shared, wall times depend on it. */
  loadBefore: string;
  loadAfter: string;
}

const ARGS: Record<Case, string[]> = { run: ['run', '--rm', 'busybox', 'true'], ps: ['ps'], version: ['--version'] };
const LABELS: Record<Case, string> = { run: '`run --rm busybox true`', ps: '`ps`', version: '`--version` (no daemon)' };

// time(1) counts CPU in 10 ms steps, too coarse for a CLI run; this Python helper forks the
// command, reaps it with wait4 and prints its wall time and user + system CPU in ms (its own
// start-up is outside both). Python 3 is on every test machine (python3-docker needs it).
const TIMER = [
  'import os, sys, time',
  't0 = time.perf_counter()',
  'pid = os.fork()',
  'if pid == 0:',
  '    fd = os.open("/dev/null", os.O_WRONLY); os.dup2(fd, 1); os.execvp(sys.argv[1], sys.argv[1:])',
  '_, st, ru = os.wait4(pid, 0)',
  'w = (time.perf_counter() - t0) * 1000',
  'print(f"{w} {(ru.ru_utime + ru.ru_stime) * 1000} {os.waitstatus_to_exitcode(st)}")',
].join('\n');

/** Runs a command once (stdout discarded): its wall time and its own CPU. */
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
  const [wallMs, cpuMs, code] = out.trim().split(' ').map(Number) as [number, number, number];
  if (code !== 0 || !Number.isFinite(wallMs)) throw new Error(`${cmd} ${args.join(' ')} → ${code}: ${err.trim()}`);
  return { wallMs, cpuMs };
}

/**
 * `n` measured rounds after `warmups`: each round runs every case once per CLI, the CLI that goes
 * first alternating from round to round (load on the shared machine and any cache warmth spread
 * over both). `scratch` holds each CLI's (empty) config directory.
 */
export async function clientCli(socket: string, scratch: string, n: number, warmups: number): Promise<ClientResults> {
  const host = `unix://${socket}`;
  const base = { PATH: process.env.PATH, HOME: scratch };
  const envs = {
    engine: { ...base, ENGINE_HOST: host, ENGINE_CONFIG: join(scratch, 'engine') },
    docker: { ...base, DOCKER_HOST: host, DOCKER_CONFIG: join(scratch, 'docker') },
  };
  // ENGINE_BENCH_CLI: another build of the CLI (e.g. an older one, for before/after figures).
  const bins = { engine: process.env.ENGINE_BENCH_CLI ?? join(REPO_ROOT, 'bin/engine'), docker: 'docker' };
  const res = {} as ClientResults['samples'];
  const loadBefore = loadAverage();
  for (let i = -warmups; i < n; i++) {
    for (const c of CLIENT_CASES) {
      const order = (i & 1) === 0 ? (['engine', 'docker'] as const) : (['docker', 'engine'] as const);
      for (const who of order) {
        const s = await measure(bins[who], ARGS[c], envs[who]);
        if (i >= 0) (res[`${who}:${c}`] ??= []).push(s);
      }
    }
  }
  return { samples: res, loadBefore, loadAfter: loadAverage() };
}

/** The report section: medians and p90 of wall and CPU, and engine/docker ratios of the medians. */
export function clientSection(r: ClientResults, n: number, warmups: number): string {
  const rows: string[][] = [];
  for (const c of CLIENT_CASES) {
    for (const [what, f] of [
      ['wall', (x: CliSample) => x.wallMs],
      ['CPU', (x: CliSample) => x.cpuMs],
    ] as const) {
      const a = summarize(r.samples[`engine:${c}`].map(f));
      const b = summarize(r.samples[`docker:${c}`].map(f));
      rows.push([`${LABELS[c]} (${what}, ms)`, num(a.median), num(a.p90), num(b.median), num(b.p90), ratio(a.median, b.median)]);
    }
  }
  return [
    `- ${n} rounds after ${warmups} warm-ups, the CLI going first alternating; CPU = user + system of the CLI process (wait4)`,
    `- load average before: ${r.loadBefore}; after: ${r.loadAfter}`,
    '',
    table(['', 'engine median', 'p90', 'docker median', 'p90', 'engine/docker'], rows),
  ].join('\n');
}
