// Process facts from /proc (resident memory, children) and the teardown of a daemon's temp dir:
// kill what runs from it (by pid), detach its mounts, remove it.

import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { killProcessesUnder } from '../../test/helpers/supervisor-harness.ts';
import { unmountUnder } from '../../test/helpers/daemon.ts';

/** VmRSS of a process in MiB, or NaN when it is gone. */
export function rssMiB(pid: number | null | undefined): number {
  if (!pid) return NaN;
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function statOf(pid: number): { comm: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    return { comm, ppid };
  } catch {
    return null;
  }
}

/** The first direct child of `parent` whose command name is `comm`. */
export function childNamed(parent: number, comm: string): number | null {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!pid) continue;
    const s = statOf(pid);
    if (s && s.ppid === parent && s.comm === comm) return pid;
  }
  return null;
}

export function pidFromFile(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** After the daemon is stopped: SIGKILL leftovers started from `dir` (containerd, shims), unmount, remove. */
export async function teardownDir(dir: string): Promise<void> {
  killProcessesUnder(dir);
  await new Promise((r) => setTimeout(r, 100));
  await unmountUnder(dir);
  await rm(dir, { recursive: true, force: true }).catch(async () => {
    await new Promise((r) => setTimeout(r, 500));
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
  });
}

export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
}

const CLK_TCK = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)

/** CPU time (user + system) a process has used so far, in ms (10 ms resolution); NaN when gone. */
export function cpuMs(pid: number | null | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK; // utime, stime
  } catch {
    return NaN;
  }
}

/** CPU used by a daemon and by its containerd between two calls of the returned function. */
export function cpuMeter(pids: { daemon: number; containerd: number | null }): () => { daemon: number; containerd: number } {
  const d0 = cpuMs(pids.daemon);
  const c0 = cpuMs(pids.containerd);
  return () => ({ daemon: cpuMs(pids.daemon) - d0, containerd: cpuMs(pids.containerd) - c0 });
}

/** CPU ms per thread kind of a process (main thread, libuv pool, V8 workers…), user+system, from /proc. */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[0-9]+$/, '');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(comm, (out.get(comm) ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** The CPU ms each thread kind used between two threadCpu readings (kinds that used none left out). */
export function threadCpuSince(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  return new Map([...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).filter(([, v]) => v > 0));
}

/** `WorkerThread 430, main 218, …`: thread kinds by cost, largest first, those under `min` ms left out. */
export function threadText(t: Map<string, number>, min = 0): string {
  return [...t]
    .filter(([, v]) => v >= min)
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v.toFixed(0)}`)
    .join(', ');
}

/** The mean of each thread kind over several threadCpuSince readings. */
export function meanByThread(runs: Array<Map<string, number>>): Map<string, number> {
  const kinds = new Set(runs.flatMap((t) => [...t.keys()]));
  return new Map([...kinds].map((k) => [k, runs.reduce((s, t) => s + (t.get(k) ?? 0), 0) / runs.length] as const));
}

/** The CPU ms each thread kind used between two threadCpu readings: their total, and the kinds by cost. */
export function threadDelta(a: Map<string, number>, b: Map<string, number>): { total: number; text: string } {
  const d = threadCpuSince(a, b);
  return { total: [...d.values()].reduce((s, v) => s + v, 0), text: threadText(d) };
}

/** engined's resident memory by kind of mapping, MiB. */
export function smapsGroups(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string, kb: number) => (out[k] = (out[k] ?? 0) + kb / 1024);
  let name = '';
  let size = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      name = head[3]!;
      size = (parseInt(head[2]!, 16) - parseInt(head[1]!, 16)) / 1024;
      continue;
    }
    const m = /^Rss:\s+(\d+) kB/.exec(line);
    if (!m) continue;
    const kb = Number(m[1]);
    if (name === '[heap]') add('brk heap', kb);
    else if (name === '') add(size >= 60 * 1024 && size <= 64 * 1024 ? 'anon 64M (arena?)' : size >= 256 ? 'anon ≥256K' : 'anon <256K', kb);
    else if (name.endsWith('/node')) add('node binary', kb);
    else if (name.startsWith('/')) add('other files', kb);
    else add(name, kb);
  }
  const roll = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  for (const k of ['Anonymous', 'Shared_Clean', 'Private_Clean']) {
    const m = new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(roll);
    if (m) out[`(${k})`] = Number(m[1]) / 1024;
  }
  return out;
}
