// A fleet of containers for restarts after kill -9 (the e2e test and bench/restart-reconcile.ts):
// long-running ones and short ones that exit with a code of their own, started together so that
// the daemon is killed while containers start and exit; after the restart, how long from the first
// /_ping 200 until the daemon's answer for every container is true, checked against the host:
// a container said to be running has that pid, alive, in its own cgroup; any other has no process
// left; one that ran its short command in this round exited with that command's code.
import { readdir, readFile } from 'node:fs/promises';
import { httpOverUnix, type TestDaemon } from './daemon.ts';

export interface FleetMember {
  id: string;
  /** long: runs until stopped; short: exits by itself with `code` within a second. */
  kind: 'long' | 'short';
  code: number;
}

export interface InspectState {
  Status: string;
  Running: boolean;
  Pid: number;
  ExitCode: number;
  StartedAt: string;
  FinishedAt: string;
}

/**
 * Creates `n` containers: every other one long-running, the rest short with codes 1…99. The long
 * ones are `sleep` as PID 1, which ignores SIGTERM: a stop lasts their StopTimeout (`stopTimeoutS`,
 * 1 s unless given), so one being stopped at start-up stays running a known while.
 */
export async function createFleet(d: TestDaemon, n: number, opts: { prefix?: string; stopTimeoutS?: number } = {}): Promise<FleetMember[]> {
  const prefix = opts.prefix ?? 'fleet';
  const fleet: FleetMember[] = [];
  const one = async (i: number): Promise<FleetMember> => {
    const kind = i % 2 === 0 ? 'long' : 'short';
    const code = 1 + (i % 99);
    const body =
      kind === 'long'
        ? { Image: 'busybox', Cmd: ['sleep', '3600'], StopTimeout: opts.stopTimeoutS ?? 1 }
        : { Image: 'busybox', Cmd: ['sh', '-c', `sleep 0.${1 + (i % 9)}; exit ${code}`] };
    const r = await d.request('POST', `/containers/create?name=${prefix}-${i}`, { body });
    if (r.status !== 201) throw new Error(`create ${prefix}-${i}: ${r.status} ${r.text()}`);
    return { id: r.json<{ Id: string }>().Id, kind, code };
  };
  for (let i = 0; i < n; i += 16) fleet.push(...(await Promise.all(Array.from({ length: Math.min(16, n - i) }, (_, j) => one(i + j)))));
  return fleet;
}

/**
 * Starts every container of the fleet not running (16 at a time) and kills the daemon -9, starts
 * still in flight: after `killAfter.ms`, or once `killAfter.starts` starts have been answered (or
 * all but the last 16 when fewer are left). Resolves once the daemon is dead and the starts settled.
 */
export async function startAndKill(
  d: TestDaemon,
  fleet: FleetMember[],
  killAfter: { ms: number } | { starts: number },
): Promise<{ started: number }> {
  const states = await inspectAll(d, fleet);
  const todo = fleet.filter((_m, i) => !states[i]!.Running);
  const enough = 'starts' in killAfter ? Math.max(1, Math.min(killAfter.starts, todo.length - 16)) : Infinity;
  let started = 0;
  let dead = false;
  let reached!: () => void;
  const startsDone = new Promise<void>((r) => (reached = r));
  const worker = async () => {
    for (let m = todo.shift(); m && !dead; m = todo.shift()) {
      const r = await d.request('POST', `/containers/${m.id}/start`, { timeoutMs: 60_000 }).catch(() => undefined); // the daemon died under it
      if (r?.status === 204 && ++started >= enough) reached();
    }
  };
  const workers = Promise.all(Array.from({ length: 16 }, worker));
  if ('ms' in killAfter) await new Promise((r) => setTimeout(r, killAfter.ms));
  else await Promise.race([startsDone, workers]);
  await d.kill9();
  dead = true;
  await workers;
  return { started };
}

/**
 * GET /containers/{id}/json for each member, all at once. An answer "running" is checked against
 * the host as it arrives (a short container may still be running, and exit just after): its pid
 * lives, in the container's cgroup; what it is wrong about goes to `wrong`.
 */
export async function inspectAll(d: TestDaemon, fleet: FleetMember[], wrong: string[] = [], timeoutMs = 120_000): Promise<InspectState[]> {
  return Promise.all(
    fleet.map(async (m) => {
      const r = await d.request('GET', `/containers/${m.id}/json`, { timeoutMs });
      if (r.status !== 200) throw new Error(`inspect ${m.id}: ${r.status} ${r.text()}`);
      const s = r.json<{ State: InspectState }>().State;
      if (s.Running) {
        const cgroup = await readFile(`/proc/${s.Pid}/cgroup`, 'utf8').catch(() => ''); // no such process
        const stat = await readFile(`/proc/${s.Pid}/stat`, 'utf8').catch(() => '');
        const zombie = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
        if (!(s.Pid > 0) || !cgroup.includes(`/${m.id}`) || !stat || zombie)
          wrong.push(`${m.kind} ${m.id.slice(0, 12)}: said running with pid ${s.Pid}, which is not a live process of it`);
        if (s.Status !== 'running') wrong.push(`${m.kind} ${m.id.slice(0, 12)}: Running with Status ${s.Status}`);
      }
      return s;
    }),
  );
}

/** Starts the daemon again (no wait) and resolves at its first /_ping 200, with the time it took. */
export async function restartToPing(d: TestDaemon, timeoutMs = 60_000): Promise<{ pingAt: number; pingMs: number }> {
  const t0 = performance.now();
  await d.spawn();
  for (const deadline = Date.now() + timeoutMs; ;) {
    if (d.exitCode !== null) throw new Error(`daemon exited:\n${d.output}`);
    const r = await httpOverUnix(d.socket, 'GET', '/_ping', { timeoutMs: 2000 }).catch(() => undefined); // not listening yet
    if (r?.status === 200) {
      const pingAt = performance.now();
      return { pingAt, pingMs: pingAt - t0 };
    }
    if (Date.now() > deadline) throw new Error(`no /_ping answer within ${timeoutMs} ms:\n${d.output}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Live processes by container ID, from the host's /proc (cgroup paths end in the ID). */
async function processesByContainer(ids: Set<string>): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!(pid > 0)) continue;
    const [cgroup, stat] = await Promise.all([
      readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => ''), // gone meanwhile
      readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''),
    ]);
    if (!stat || stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue; // gone or a zombie
    const id = /\/([0-9a-f]{64})(?:\/|$)/m.exec(cgroup)?.[1];
    if (id && ids.has(id)) out.set(id, [...(out.get(id) ?? []), pid]);
  }
  return out;
}

/**
 * What is wrong in the answers "not running" of `states` (the daemon's, in fleet order; inspectAll
 * checked the others) against the host: no process of such a container may be left (nothing starts
 * it again), and a short one started in this round (StartedAt after `roundStart`, an ISO time) and
 * since exited must show its command's exit code.
 */
export async function wrongStates(fleet: FleetMember[], states: InspectState[], roundStart: string): Promise<string[]> {
  const procs = await processesByContainer(new Set(fleet.map((m) => m.id)));
  const wrong: string[] = [];
  fleet.forEach((m, i) => {
    const s = states[i]!;
    const live = procs.get(m.id) ?? [];
    const name = `${m.kind} ${m.id.slice(0, 12)}`;
    if (s.Running) return;
    if (live.length) wrong.push(`${name}: ${s.Status}, but processes [${live.join(', ')}] still run in it`);
    if (s.Status === 'running' || s.Pid !== 0) wrong.push(`${name}: not running, with Status ${s.Status} and pid ${s.Pid}`);
    if (m.kind === 'short' && s.Status === 'exited' && Date.parse(s.StartedAt) > Date.parse(roundStart) && s.ExitCode !== m.code)
      wrong.push(`${name}: exited ${s.ExitCode}, its command exits ${m.code} (started ${s.StartedAt})`);
  });
  return wrong;
}
