// The logs write taken apart (issue 16): a container writes MiB to stdout (`yes … | head -c`) and,
// interleaved, the same writer to a file in the container (the floor); for each run the wall time
// and the CPU of every party: the daemon per thread, the container's shim, the container's
// processes (sampled from /proc every 10 ms while it runs: a process's last few ms may be missed).
//   bin/node dist/bench/logs-write.js [runs=3] [MiB=256] [--prof DIR]

import { readdirSync, readFileSync } from 'node:fs';
import { api } from './lib/http.ts';
import { loadAverage, threadCpu, threadDelta } from './lib/proc.ts';
import { createContainer, removeContainer } from './scenarios/api-lifecycle.ts';
import { Engined } from './targets/engined.ts';

const LINE = 'x'.repeat(99);

function ticksOf(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

/** Pid → [ppid, comm, cmdline] of every process. */
function processes(): Map<number, { ppid: number; comm: string; cmd: string }> {
  const out = new Map<number, { ppid: number; comm: string; cmd: string }>();
  for (const e of readdirSync('/proc')) {
    const pid = Number(e);
    if (!pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      out.set(pid, { ppid: Number(stat.slice(close + 2).split(' ')[1]), comm: stat.slice(stat.indexOf('(') + 1, close), cmd });
    } catch {
      // gone
    }
  }
  return out;
}

/** Samples the shim of container `id` and its descendants until stopped; the highest CPU seen per pid. */
function sampleContainer(id: string): () => { shim: number; container: number } {
  const shimCpu = new Map<number, number>();
  const contCpu = new Map<number, number>();
  let shimPid = 0;
  const tick = (): void => {
    if (!shimPid) {
      for (const [pid, p] of processes()) if (p.comm.startsWith('containerd-shim') && p.cmd.includes(id)) shimPid = pid;
      if (!shimPid) return;
    }
    try {
      shimCpu.set(shimPid, ticksOf(`/proc/${shimPid}/stat`));
    } catch {
      return;
    }
    const all = processes();
    const under = new Set([shimPid]);
    for (let grew = true; grew;) {
      grew = false;
      for (const [pid, p] of all) if (!under.has(pid) && under.has(p.ppid)) (under.add(pid), (grew = true));
    }
    under.delete(shimPid);
    for (const pid of under) {
      try {
        contCpu.set(pid, Math.max(contCpu.get(pid) ?? 0, ticksOf(`/proc/${pid}/stat`)));
      } catch {
        // exited
      }
    }
  };
  const timer = setInterval(tick, 10);
  tick();
  return () => {
    clearInterval(timer);
    tick();
    const sum = (m: Map<number, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
    return { shim: sum(shimCpu), container: sum(contCpu) };
  };
}

async function once(d: Engined, bytes: number, toFile: boolean): Promise<string> {
  const cmd = `yes ${LINE} | head -c ${bytes}${toFile ? ' > /floor.out' : ''}`;
  const id = await createContainer(d, ['sh', '-c', cmd], { NetworkMode: 'none', LogConfig: { Type: 'json-file', Config: {} } });
  try {
    const th0 = threadCpu(d.pid);
    const t0 = performance.now();
    await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    const stop = sampleContainer(id);
    await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
    const ms = performance.now() - t0;
    const { shim, container } = stop();
    const th = threadDelta(th0, threadCpu(d.pid));
    return `${toFile ? 'floor ' : 'stdout'} ${(ms / 1000).toFixed(2)} s | daemon ${th.total.toFixed(0)} ms (${th.text}) | shim ${shim.toFixed(0)} ms | container ${container.toFixed(0)} ms | load ${loadAverage()}`;
  } finally {
    await removeContainer(d, id).catch(() => undefined);
  }
}

const args = process.argv.slice(2);
const prof = args.indexOf('--prof');
const profDir = prof >= 0 ? args.splice(prof, 2)[1] : undefined;
const runs = Number(args[0] ?? 3);
const bytes = Number(args[1] ?? 256) * 1024 * 1024;
const { daemon: d } = await Engined.start(profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : undefined);
try {
  await d.loadBusybox();
  for (let k = 0; k < runs; k++) {
    // Alternate which goes first.
    const order = k % 2 === 0 ? [false, true] : [true, false];
    for (const toFile of order) console.log(await once(d, bytes, toFile));
  }
} finally {
  await d.stop();
}
