// What the cluster e2e tests ask of a node: `docker node ls` as objects, and the etcd member a
// daemon runs (to kill it with the daemon, or to see it replaced after a restart).
import { readdirSync, readFileSync } from 'node:fs';
import type { TestDaemon } from './daemon.ts';

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
