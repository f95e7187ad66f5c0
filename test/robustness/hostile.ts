// `npm run hostile`: the hostile-input tool by hand. Starts a daemon of this tree on temporary
// roots (or uses --socket), loads busybox, creates a container, network and volume for the cases
// to hit, sends N seeded hostile requests and prints what it found.
//   npm run hostile -- --count 20000 --seed 7 [--socket /run/x.sock] [--concurrency 4]
//   npm run hostile -- --seed 7 --cases 269,390   (replays those cases and prints each answer)
//   npm run hostile -- --cluster ...   (the daemon is first made a one-node cluster with a service,
//   a secret, a config and an overlay network named `hostile`, so the cluster routes run for real)
//   npm run hostile -- --console ...   (the daemon also serves its web console on a loopback port,
//   and about a quarter of the cases go to that listener: hostile-console.ts)
import { parseArgs } from 'node:util';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { consoleSession, type ConsoleTarget } from './hostile-console.ts';
import { runHostile } from './hostile-run.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '2000' },
    seed: { type: 'string', default: String(Date.now() % 100_000) },
    socket: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    cases: { type: 'string' },
    cluster: { type: 'boolean', default: false },
    console: { type: 'boolean', default: false },
  },
});

let d: TestDaemon | undefined;
const consolePort = values.console && !values.socket ? await freePort() : undefined;
const socketPath =
  values.socket ?? (d = await startDaemon(consolePort ? { args: ['--console-addr', `127.0.0.1:${consolePort}`] } : {})).socket;
try {
  const console_: ConsoleTarget | undefined = consolePort ? await consoleSession('127.0.0.1', consolePort) : undefined;
  if (d) {
    await loadBusybox(d);
    await d.docker(['run', '-d', '--name', 'hostile', 'busybox', 'sleep', '3600']);
    await d.docker(['network', 'create', 'hostile']);
    await d.docker(['volume', 'create', 'hostile']);
    if (values.cluster) {
      for (const args of [
        // A port of its own: another daemon on this machine may hold the default 2377.
        ['swarm', 'init', '--advertise-addr', '127.0.0.1', '--listen-addr', `127.0.0.1:${await freePort()}`],
        ['network', 'create', '-d', 'overlay', '--attachable', 'hostile-ov'],
        ['service', 'create', '--detach', '--name', 'hostile', '--replicas', '2', '--no-resolve-image', 'busybox', 'sleep', '3600'],
      ]) {
        const r = await d.docker(args);
        if (r.code !== 0) throw new Error(`docker ${args.join(' ')}: ${r.stderr}`);
      }
      for (const kind of ['secret', 'config']) {
        const r = await d.docker([kind, 'create', 'hostile', '-'], { input: 'hostile data\n' });
        if (r.code !== 0) throw new Error(`docker ${kind} create: ${r.stderr}`);
      }
    }
  }
  const only = values.cases?.split(',').map(Number);
  const count = only?.length ?? Number(values.count);
  let last = 0;
  const report = await runHostile({
    socketPath,
    seed: Number(values.seed),
    count,
    concurrency: Number(values.concurrency),
    keepCluster: values.cluster,
    ...(console_ ? { console: console_ } : {}),
    ...(d ? { alive: () => d!.exitCode === null } : {}),
    ...(only
      ? {
          only,
          onOutcome: (i, c, o) =>
            console.log(
              `#${i} ${c.name}: ${o.hang ? 'hang' : (o.status ?? 'closed')} ${o.contentType ?? ''} ${o.ms} ms ${JSON.stringify(o.body.slice(0, 300))}`,
            ),
        }
      : {}),
    onProgress: (n) => {
      if (n - last >= 1000) {
        last = n;
        process.stderr.write(`  ${n}/${count}\n`);
      }
    },
  });
  console.log(
    JSON.stringify(
      {
        seed: report.seed,
        requests: report.requests,
        seconds: report.durationMs / 1000,
        counts: report.counts,
        notes: report.notes,
        worstPingMs: report.worstPingMs,
        byStatus: report.byStatus,
      },
      null,
      2,
    ),
  );
  // One line per kind of finding: how often, and the first case to replay it with.
  const kinds = new Map<string, { n: number; first: (typeof report.findings)[number] }>();
  for (const f of report.findings) {
    const k = `${f.problem}: ${f.name}`;
    const e = kinds.get(k);
    if (e) e.n++;
    else kinds.set(k, { n: 1, first: f });
  }
  for (const [k, e] of kinds) console.log(`${String(e.n).padStart(5)} × ${k} (first #${e.first.index}: ${e.first.detail.slice(0, 160)})`);
  if ((report.counts.crash || report.counts.stall) && d) console.log(`the daemon's last words:\n${d.output.slice(-4000)}`);
  process.exitCode = report.findings.length ? 1 : 0;
} finally {
  await d?.cleanup();
}
