// Restart after a crash: how long until the API answers /_ping again (issue 12). Starts a daemon on
// temporary roots, runs N `sleep` containers, kills engined -9, starts it again on the same roots
// and times spawn → first /_ping 200, then spawn → every container inspected as running (reconcile
// done), and the CPU engined used until its first /_ping (less sensitive to other load on the
// machine than wall time). Usage, after a build: bin/node dist/bench/restart-ping.js [containers=50] [--live-restore]
import { readFileSync } from 'node:fs';
import { startDaemon } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';
import { httpOverUnix } from '../test/helpers/daemon.ts';

/** User + system CPU of a process so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const count = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 50);
const liveRestore = process.argv.includes('--live-restore');
const d = await startDaemon(liveRestore ? { config: { 'live-restore': true } } : {});
try {
  await loadBusybox(d);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const c = await d.request('POST', '/containers/create', { body: { Image: 'busybox', Cmd: ['sleep', '3600'] } });
    if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text()}`);
    const id = c.json<{ Id: string }>().Id;
    const s = await d.request('POST', `/containers/${id}/start`);
    if (s.status !== 204) throw new Error(`start: ${s.status} ${s.text()}`);
    ids.push(id);
  }
  await d.kill9();
  const t0 = performance.now();
  await d.spawn();
  let pingMs = -1;
  let pingCpuMs = -1;
  for (;;) {
    try {
      const r = await httpOverUnix(d.socket, 'GET', '/_ping', { timeoutMs: 60_000 });
      if (r.status === 200) {
        pingMs = performance.now() - t0;
        pingCpuMs = cpuMs(d.pid);
        break;
      }
    } catch {
      // not listening yet
    }
    if (d.exitCode !== null) throw new Error(`daemon exited:\n${d.output}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  // Every container inspected: each answer waits for that container's reconciliation.
  const states = await Promise.all(
    ids.map(
      async (id) =>
        (await d.request('GET', `/containers/${id}/json`, { timeoutMs: 120_000 })).json<{ State: { Status: string } }>().State.Status,
    ),
  );
  const allMs = performance.now() - t0;
  const startup = /startupMs=(\d+)/.exec(d.output)?.[1];
  const reconciled = /containers reconciled.*?\bms=(\d+)/.exec(d.output)?.[1];
  const tally = states.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
  console.log(
    JSON.stringify({
      containers: count,
      liveRestore,
      pingMs: Math.round(pingMs),
      pingCpuMs,
      allInspectedMs: Math.round(allMs),
      startupMsLogged: startup ? Number(startup) : null,
      reconcileMsLogged: reconciled ? Number(reconciled) : null,
      states: tally,
    }),
  );
} finally {
  await d.cleanup();
}
