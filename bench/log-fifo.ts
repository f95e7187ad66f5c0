// The daemon's half of the logs write without containerd (issue 16): a writer process floods a FIFO
// (busybox `yes … | head -c`, as in the container: 4 KiB writes, as a container's shim forwards them) and this process reads it
// the daemon's way (openFifoReader → OutputHub → json-file driver), interleaved with the floor (the
// same writer into a file). Prints wall time and this process's CPU per thread kind.
//   bin/node dist/bench/log-fifo.js [runs=3] [MiB=256]

import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOutputFifo } from '../src/daemon/containers/io/fifo.ts';
import { OutputHub } from '../src/daemon/containers/io/output-hub.ts';
import { attachInput, createLogDriver } from '../src/logging/index.ts';
import { loadAverage } from './lib/proc.ts';

const LINE = 'x'.repeat(99);

function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const comm = Number(tid) === process.pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[0-9]+$/, '');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(comm, (out.get(comm) ?? 0) + (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      // ended
    }
  }
  return out;
}

function delta(a: Map<string, number>, b: Map<string, number>): string {
  const d = [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
  const total = d.reduce((s, [, v]) => s + v, 0);
  return `${total} ms (${d
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')})`;
}

/** Runs the writer into `target`; resolves with its exit and the CPU its processes used (ms). */
function writer(bytes: number, target: string): { done: Promise<number> } {
  const sh = spawn('bash', ['-c', `TIMEFORMAT='%U %S'; time (busybox yes ${LINE} | busybox head -c ${bytes} > ${target})`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  sh.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return {
    done: new Promise((resolve, reject) =>
      sh.once('exit', (code) => {
        if (code !== 0) return reject(new Error(`writer exited ${code}: ${err}`));
        const [u, s] = err.trim().split(/\s+/).map(Number) as [number, number];
        resolve((u + s) * 1000);
      }),
    ),
  };
}

async function viaHub(dir: string, bytes: number, k: number): Promise<string> {
  const fifo = join(dir, `fifo-${k}`);
  execFileSync('mkfifo', [fifo]);
  const driver = createLogDriver('json-file', { containerId: `c${k}`, dir: join(dir, `c${k}`), options: {}, attrs: {} });
  const hub = new OutputHub();
  const th0 = threadCpu();
  const t0 = performance.now();
  const { input, done } = attachInput(driver, { stdout: true, stderr: false });
  hub.connect(input);
  const out = openOutputFifo(fifo);
  const w = writer(bytes, fifo);
  const pumped = hub.pump(out, 'stdout');
  const wcpu = await w.done;
  await pumped;
  await done;
  const ms = performance.now() - t0;
  const line = `stdout ${(ms / 1000).toFixed(2)} s | writer ${wcpu.toFixed(0)} ms | this process ${delta(th0, threadCpu())} | load ${loadAverage()}`;
  await driver.close();
  await rm(join(dir, `c${k}`), { recursive: true, force: true });
  return line;
}

async function floor(dir: string, bytes: number): Promise<string> {
  const t0 = performance.now();
  const wcpu = await writer(bytes, join(dir, 'floor.out')).done;
  const ms = performance.now() - t0;
  await rm(join(dir, 'floor.out'));
  return `floor  ${(ms / 1000).toFixed(2)} s | writer ${wcpu.toFixed(0)} ms | load ${loadAverage()}`;
}

const runs = Number(process.argv[2] ?? 3);
const bytes = Number(process.argv[3] ?? 256) * 1024 * 1024;
const dir = await mkdtemp(join(tmpdir(), 'log-fifo-'));
try {
  for (let k = 0; k < runs; k++) {
    if (k % 2 === 0) console.log(await viaHub(dir, bytes, k), '\n' + (await floor(dir, bytes)));
    else console.log(await floor(dir, bytes), '\n' + (await viaHub(dir, bytes, k)));
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
