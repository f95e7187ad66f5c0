// Restart after kill -9 while containers start and exit (issue 23): how long from the first
// /_ping 200 until the daemon's answer for every container is true: `docker ps -a` (one request,
// answered once every state is known) and an inspect of each container, all at once (each answer
// checked against the host by test/helpers/restart-fleet.ts; 200 requests at once cost the daemon
// CPU of their own). Starts a daemon on temporary roots, creates N containers
// (half long-running, half exiting with their own code within a second), then per round: starts
// those not running, kills engined -9 at a random moment of those starts, waits until the short
// ones have exited, starts engined again, inspects every container at once from the first /_ping.
// Usage, after a build:
//   bin/node dist/bench/restart-reconcile.js [--containers 200] [--rounds 20] [--no-live-restore] [--seed N]
// Prints one line per round and a summary (JSON) with the distribution of the times.
import { parseArgs } from 'node:util';
import { startDaemon } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';
import { createFleet, inspectAll, restartToPing, startAndKill, wrongStates } from '../test/helpers/restart-fleet.ts';

const { values } = parseArgs({
  options: {
    containers: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '20' },
    'no-live-restore': { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
  },
});
const count = Number(values.containers);
const rounds = Number(values.rounds);
const liveRestore = !values['no-live-restore'];
let seed = Number(values.seed);
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31; // reproducible kill moments

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const d = await startDaemon({ config: { 'live-restore': liveRestore } });
const rows: Array<{ pingMs: number; listMs: number; allMs: number; reconcileMs: number | null; started: number; wrong: number }> = [];
try {
  await loadBusybox(d);
  // Without live-restore the long ones are stopped at each start-up: 3 s of stop timeout keeps an
  // answer "running" checkable against the host meanwhile.
  const fleet = await createFleet(d, count, { stopTimeoutS: liveRestore ? 1 : 3 });
  for (let round = 1; round <= rounds; round++) {
    const roundStart = new Date().toISOString();
    const killAfterMs = 300 + Math.floor(random() * 3000);
    const { started } = await startAndKill(d, fleet, { ms: killAfterMs });
    await new Promise((r) => setTimeout(r, 1500)); // the short ones end while the daemon is down
    const { pingAt, pingMs } = await restartToPing(d);
    // docker ps (one request, answered once every state is known) and every inspect, side by side.
    const listed = d.request('GET', '/containers/json?all=1', { timeoutMs: 120_000 }).then((r) => {
      if (r.status !== 200) throw new Error(`list: ${r.status} ${r.text()}`);
      return performance.now() - pingAt;
    });
    const wrong: string[] = [];
    const states = await inspectAll(d, fleet, wrong);
    const allMs = performance.now() - pingAt;
    const listMs = await listed;
    wrong.push(...(await wrongStates(fleet, states, roundStart)));
    const reconciled = /containers reconciled.*?\bms=(\d+)/.exec(d.output)?.[1];
    const row = {
      pingMs: Math.round(pingMs),
      listMs: Math.round(listMs),
      allMs: Math.round(allMs),
      reconcileMs: reconciled ? Number(reconciled) : null,
      started,
      wrong: wrong.length,
    };
    rows.push(row);
    const running = states.filter((s) => s.Running).length;
    console.log(JSON.stringify({ round, killAfterMs, running, ...row }));
    for (const w of wrong.slice(0, 10)) console.log(`  wrong: ${w}`);
  }
  const all = rows.map((r) => r.allMs).sort((a, b) => a - b);
  const list = rows.map((r) => r.listMs).sort((a, b) => a - b);
  const ping = rows.map((r) => r.pingMs).sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      containers: count,
      rounds: rows.length,
      liveRestore,
      fromPingToListedMs: {
        min: list[0],
        median: pct(list, 50),
        p90: pct(list, 90),
        max: list.at(-1),
        over1s: list.filter((x) => x > 1000).length,
      },
      fromPingToAllInspectedMs: {
        min: all[0],
        median: pct(all, 50),
        p90: pct(all, 90),
        max: all.at(-1),
        over1s: all.filter((x) => x > 1000).length,
      },
      spawnToPingMs: { median: pct(ping, 50), max: ping.at(-1) },
      wrongStates: rows.reduce((n, r) => n + r.wrong, 0),
    }),
  );
} finally {
  await d.cleanup();
}
