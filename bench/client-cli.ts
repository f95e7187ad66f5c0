// The `engine` CLI against the docker CLI 28, both pointed at the same engined: wall time and CPU
// (user + system, of the CLI process alone, from /usr/bin/time) of `run --rm busybox true` and
// `ps`, taking turns so that load on the shared machine spreads over both. Not part of the test
// suite; nothing asserts. After a build:
//
//   bin/node dist/bench/client-cli.js [iterations=20] [warm-ups=3]
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/helpers/daemon.ts';
import { loadAverage } from './lib/proc.ts';
import { interleave, summarize } from './lib/stats.ts';
import { num, table } from './lib/table.ts';
import { Engined } from './targets/engined.ts';

interface Sample {
  wallMs: number;
  cpuMs: number;
}

/** Runs a command under /usr/bin/time; the wall time is measured here, the CPU by time(1). */
async function measure(cmd: string, args: string[], env: NodeJS.ProcessEnv, scratch: string): Promise<Sample> {
  const out = join(scratch, 'time.out');
  const t0 = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', out, cmd, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b) => (err += b));
    child.on('error', reject);
    child.on('close', (c) => (c === 0 ? resolve(c) : reject(new Error(`${cmd} ${args.join(' ')} → ${c}: ${err.trim()}`))));
  });
  const wallMs = performance.now() - t0;
  const [u, s] = (await readFile(out, 'utf8')).trim().split('\n').pop()!.split(' ').map(Number) as [number, number];
  void code;
  return { wallMs, cpuMs: (u + s) * 1000 };
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20);
  const warmups = Number(process.argv[3] ?? 3);
  const scratch = await mkdtemp('/tmp/bench-client-');
  const { daemon } = await Engined.start();
  try {
    await daemon.loadBusybox();
    const host = `unix://${daemon.socket}`;
    const base = { PATH: process.env.PATH, HOME: scratch };
    const engineEnv = { ...base, ENGINE_HOST: host, ENGINE_CONFIG: join(scratch, 'engine') };
    const dockerEnv = { ...base, DOCKER_HOST: host, DOCKER_CONFIG: join(scratch, 'docker') };
    const engine = join(REPO_ROOT, 'bin/engine');
    const loadBefore = loadAverage();
    const cases = {
      engineRun: () => measure(engine, ['run', '--rm', 'busybox', 'true'], engineEnv, scratch),
      dockerRun: () => measure('docker', ['run', '--rm', 'busybox', 'true'], dockerEnv, scratch),
      enginePs: () => measure(engine, ['ps'], engineEnv, scratch),
      dockerPs: () => measure('docker', ['ps'], dockerEnv, scratch),
      engineVersion: () => measure(engine, ['--version'], engineEnv, scratch),
      dockerVersion: () => measure('docker', ['--version'], dockerEnv, scratch),
    };
    process.stderr.write(`client-cli: ${warmups} warm-ups + ${n} runs of each, taking turns\n`);
    const r = await interleave(n, warmups, cases);
    const rows: string[][] = [];
    const row = (label: string, ours: Sample[], theirs: Sample[]) => {
      for (const [what, f] of [
        ['wall', (x: Sample) => x.wallMs],
        ['CPU', (x: Sample) => x.cpuMs],
      ] as const) {
        const a = summarize(ours.map(f));
        const b = summarize(theirs.map(f));
        rows.push([`${label} (${what})`, num(a.median), num(a.p90), num(b.median), num(b.p90), (a.median / b.median).toFixed(2)]);
      }
    };
    row('`run --rm busybox true`', r.engineRun, r.dockerRun);
    row('`ps`', r.enginePs, r.dockerPs);
    row('`--version` (no daemon)', r.engineVersion, r.dockerVersion);
    const out = [
      `# engine CLI vs docker CLI, same engined (${new Date().toISOString()})`,
      '',
      `- ${n} runs of each after ${warmups} warm-ups, taking turns; milliseconds; CPU = user + system of the CLI process`,
      `- load average before: ${loadBefore}; after: ${loadAverage()}`,
      '',
      table(['', 'engine median', 'p90', 'docker median', 'p90', 'engine/docker'], rows),
    ].join('\n');
    process.stdout.write(`${out}\n`);
  } finally {
    await daemon.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
