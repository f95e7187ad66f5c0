// What the cluster e2e tests ask of a node: daemons started together (in network namespaces of
// their own), `docker node ls` as objects, and the etcd member a daemon runs (to kill it with the
// daemon, or to see it replaced after a restart).
import { readdirSync, readFileSync } from 'node:fs';
import { startDaemon, type DaemonStartOptions, type TestDaemon } from './daemon.ts';

/**
 * Starts one daemon per options at once, each waiting up to `readyMs` (also for its restarts: five
 * daemons starting together on a loaded machine took over 30 s). Each daemon that started is handed
 * to `keep` even when another failed, so the caller's after hook cleans it up (Promise.all of
 * startDaemon left those running, and the test file waiting on them until its time-out).
 */
export async function startNodes(opts: DaemonStartOptions[], keep: (d: TestDaemon, i: number) => void, readyMs = 120_000): Promise<void> {
  const started = await Promise.allSettled(opts.map((o) => startDaemon({ readyTimeoutMs: readyMs, ...o })));
  started.forEach((r, i) => r.status === 'fulfilled' && keep(r.value, i));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A line of `docker node ls --format '{{json .}}'`. */
export interface NodeLine {
  ID: string;
  Self: boolean;
  Hostname: string;
  Status: string;
  Availability: string;
  ManagerStatus: string;
}

export async function nodeLs(d: TestDaemon): Promise<NodeLine[]> {
  const r = await d.docker(['node', 'ls', '--format', '{{json .}}']);
  if (r.code !== 0) throw new Error(`docker node ls: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as NodeLine);
}

/** The pid of the etcd whose data is under `dataRoot`, if one runs. */
export function findEtcd(dataRoot: string): number | undefined {
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(`\0--data-dir\0${dataRoot}/`)) return Number(e);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** `docker swarm join` of `d` at `addr` (advertise and listen, port 2377) through the manager at `manager`. */
export async function joinSwarm(d: TestDaemon, token: string, addr: string, manager: string): Promise<void> {
  const r = await d.docker([
    'swarm',
    'join',
    '--token',
    token,
    '--advertise-addr',
    addr,
    '--listen-addr',
    `${addr}:2377`,
    `${manager}:2377`,
  ]);
  if (r.code !== 0) throw new Error(`swarm join of ${addr}: ${r.stderr}\n${d.output.slice(-3000)}`);
}
