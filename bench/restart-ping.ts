// Restart after a crash: how long until the API answers /_ping again (issue 12). Starts a daemon on
// temporary roots, runs N `sleep` containers, kills engined -9, starts it again on the same roots
// and times spawn → first /_ping 200, then spawn → every container inspected as running (reconcile
// done). Usage, after a build: bin/node dist/bench/restart-ping.js [containers=50] [--live-restore]
import { startDaemon } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';
import { httpOverUnix } from '../test/helpers/daemon.ts';

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
  for (;;) {
    try {
      const r = await httpOverUnix(d.socket, 'GET', '/_ping', { timeoutMs: 60_000 });
      if (r.status === 200) {
        pingMs = performance.now() - t0;
        break;
      }
    } catch {
      // not listening yet
    }
    if (d.exitCode !== null) throw new Error(`daemon exited:\n${d.output}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  // Every container inspected: each answer waits for that container's reconciliation.
  const states = await Promise.all(ids.map(async (id) => (await d.request('GET', `/containers/${id}/json`, { timeoutMs: 120_000 })).json<{ State: { Status: string } }>().State.Status));
  const allMs = performance.now() - t0;
  const startup = /startupMs=(\d+)/.exec(d.output)?.[1];
  const tally = states.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
  console.log(JSON.stringify({ containers: count, liveRestore, pingMs: Math.round(pingMs), allInspectedMs: Math.round(allMs), startupMsLogged: startup ? Number(startup) : null, states: tally }));
} finally {
  await d.cleanup();
}
