// Cluster mode at scale, by simulation: real engined managers (1, or 3 forming one etcd cluster:
// init + 2 joins as managers, on loopback addresses 127.0.0.1-3, port 42377) and N fake worker
// nodes (lib/cluster-fake-node.ts) that speak the real protocol over mutual TLS — join, heartbeat,
// agent sync, overlay poll — spread over the managers as real workers pick them (worker.ts
// `firstManager`). The managers are drained so every task goes to the fake nodes; services are
// created through the first manager. Measured per manager and per etcd member: CPU, resident
// memory, the database size, watch fan-out (watchers held, events sent: etcd's metrics), the
// heartbeat, sync and overlay-poll load each manager serves (calls/s, JSON bytes), and the
// convergence: time until all tasks of S services run, create → agent latency, sync round trips;
// then the same load idle (heartbeats, long polls, polls only), and a rolling update of one
// service. Every figure is printed with the 1-minute load average. Not part of the test suite;
// nothing asserts. Everything it starts is stopped at the end, on failure and on SIGINT/SIGTERM.
// After a build:
//
//   bin/node dist/bench/cluster-scale.js [nodes=100] [tasks=10000] [services=100] [idle s=30] [--managers 1|3]
import { loadavg, tmpdir } from 'node:os';
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { etcdPorts } from '../src/cluster/manager/manager.ts';
import { ClusterStore } from '../src/cluster/store/store.ts';
import { TestDaemon } from '../test/helpers/daemon.ts';
import { findEtcd } from '../test/helpers/cluster-nodes.ts';
import { FakeNode, newFakeStats, total, type FakeStats, type Traffic } from './lib/cluster-fake-node.ts';
import { etcdFacts, managerTls, type EtcdFacts } from './lib/etcd-metrics.ts';

// BENCH_ADDR_BASE=n: managers on 127.0.0.(n+1)…, for a second run beside one on the defaults.
const PORT = 42377;
const BASE = Number(process.env.BENCH_ADDR_BASE ?? 0);
const addrOf = (i: number) => `127.0.0.${BASE + i + 1}`;

function cpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8') as string;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks (100 Hz)
  } catch {
    return NaN;
  }
}

function mem(pid: number | undefined): { rss: number; peak: number } {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8') as string;
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(s)?.[1] ?? NaN) / 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return { rss: NaN, peak: NaN };
  }
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg()[0]!.toFixed(2);
const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

async function json<T>(d: TestDaemon, method: string, path: string, body?: unknown): Promise<T> {
  const r = await d.request(method, path, { ...(body === undefined ? {} : { body }), timeoutMs: 180_000 });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text()}`);
  return (r.body.length ? r.json() : undefined) as T;
}

/** Running tasks (-1: the manager could not say now, e.g. its member had no leader for a moment). */
async function running(d: TestDaemon): Promise<number> {
  try {
    const ss = await json<Array<{ ServiceStatus: { RunningTasks: number } }>>(d, 'GET', '/v1.51/services?status=true');
    return ss.reduce((a, s) => a + s.ServiceStatus.RunningTasks, 0);
  } catch (err) {
    console.log(`  (status: ${(err as Error).message.slice(0, 120)})`);
    return -1;
  }
}

/** One manager: its daemon, etcd pid, address, TLS for etcd's metrics. */
interface Mgr {
  d: TestDaemon;
  addr: string;
  etcd?: number;
  tls?: ReturnType<typeof managerTls>;
}

/** What is sampled at each phase boundary. */
interface Sample {
  at: number;
  cpu: Array<{ m: number; e: number }>;
  etcd: EtcdFacts[];
  beats: Map<string, Traffic>;
  syncs: Map<string, Traffic>;
  overlay: Map<string, Traffic>;
}

const copy = (m: Map<string, Traffic>) => new Map([...m].map(([k, v]) => [k, { ...v }]));

async function sample(ms: Mgr[], stats: FakeStats): Promise<Sample> {
  const etcd = await Promise.all(ms.map((m) => etcdFacts(m.addr, etcdPorts(PORT).client, m.tls!)));
  return {
    at: performance.now(),
    cpu: ms.map((m) => ({ m: cpuSeconds(m.d.pid), e: cpuSeconds(m.etcd) })),
    etcd,
    beats: copy(stats.beats),
    syncs: copy(stats.syncs),
    overlay: copy(stats.overlay),
  };
}

/** Rows of per-manager deltas between two samples (`rate`: per second, else totals). */
function perManager(ms: Mgr[], a: Sample, b: Sample, rate: boolean, row: (k: string, v: string) => void): void {
  const s = (b.at - a.at) / 1000;
  const f = (x: number, digits = 1) => (rate ? (x / s).toFixed(digits) : x.toFixed(digits));
  const cols = (fn: (i: number) => string) => ms.map((_, i) => fn(i)).join(' | ');
  const unit = rate ? '/s' : '';
  const tr = (key: 'beats' | 'syncs' | 'overlay', i: number) => {
    const x = b[key].get(`${ms[i]!.addr}:${PORT}`) ?? { calls: 0, bytesOut: 0, bytesIn: 0 };
    const y = a[key].get(`${ms[i]!.addr}:${PORT}`) ?? { calls: 0, bytesOut: 0, bytesIn: 0 };
    return `${f(x.calls - y.calls)} calls, ${f((x.bytesIn + x.bytesOut - y.bytesIn - y.bytesOut) / 1024)} KiB`;
  };
  if (rate) {
    row(
      '  manager CPU, % of a core',
      cols((i) => ((100 * (b.cpu[i]!.m - a.cpu[i]!.m)) / s).toFixed(1)),
    );
    row(
      '  etcd CPU, % of a core',
      cols((i) => ((100 * (b.cpu[i]!.e - a.cpu[i]!.e)) / s).toFixed(1)),
    );
  } else {
    row(
      '  manager CPU s',
      cols((i) => (b.cpu[i]!.m - a.cpu[i]!.m).toFixed(1)),
    );
    row(
      '  etcd CPU s',
      cols((i) => (b.cpu[i]!.e - a.cpu[i]!.e).toFixed(1)),
    );
  }
  row(
    `  heartbeats served${unit} (JSON bytes)`,
    cols((i) => tr('beats', i)),
  );
  row(
    `  agent syncs served${unit} (JSON bytes)`,
    cols((i) => tr('syncs', i)),
  );
  row(
    `  overlay polls served${unit} (JSON bytes)`,
    cols((i) => tr('overlay', i)),
  );
  row(
    '  etcd leader changes seen',
    cols((i) => String(b.etcd[i]!.leaderChanges - a.etcd[i]!.leaderChanges)),
  );
  row(
    `  etcd watch events sent${unit}`,
    cols((i) => f(b.etcd[i]!.events - a.etcd[i]!.events, 0)),
  );
  row(
    `  etcd proposals committed${unit}, WAL fsyncs${unit}`,
    cols((i) => `${f(b.etcd[i]!.proposals - a.etcd[i]!.proposals, 1)}, ${f(b.etcd[i]!.fsyncs - a.etcd[i]!.fsyncs, 1)}`),
  );
  row(
    `  etcd gRPC calls${unit} (Range/Txn/Put/LeaseKeepAlive)`,
    cols((i) =>
      ['Range', 'Txn', 'Put', 'LeaseKeepAlive'].map((k) => f((b.etcd[i]!.calls[k] ?? 0) - (a.etcd[i]!.calls[k] ?? 0), 0)).join('/'),
    ),
  );
  row(
    `  etcd client bytes in/out${unit}, peer out${unit} (KiB)`,
    cols(
      (i) =>
        `${f((b.etcd[i]!.clientBytesIn - a.etcd[i]!.clientBytesIn) / 1024, 0)}/${f((b.etcd[i]!.clientBytesOut - a.etcd[i]!.clientBytesOut) / 1024, 0)}, ${f((b.etcd[i]!.peerBytesOut - a.etcd[i]!.peerBytesOut) / 1024, 0)}`,
    ),
  );
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const mi = argv.indexOf('--managers');
  const managers = mi >= 0 ? Number(argv.splice(mi, 2)[1]) : 1;
  if (managers !== 1 && managers !== 3) throw new Error('--managers: 1 or 3');
  const [nodes, tasks, services, idleS] = [100, 10_000, 100, 30].map((def, i) => Number(argv[i] ?? def)) as [
    number,
    number,
    number,
    number,
  ];
  const per = Math.ceil(tasks / services);
  const ms: Mgr[] = [];
  const fakes: FakeNode[] = [];
  const starting: TestDaemon[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await Promise.race([Promise.all(fakes.map((f) => f.stop())), sleep(20_000)]);
      await Promise.all(starting.map((d) => d.cleanup().catch((e: Error) => console.error(`cleanup: ${e.message}`))));
    })());
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      console.log(`${sig}: stopping everything`);
      void cleanup().finally(() => process.exit(130));
    });
  const row = (k: string, v: string) => console.log(`${k.padEnd(62)} ${v}   [load ${load()}]`);
  console.log(`cluster-scale: ${managers} manager(s), ${nodes} fake nodes, ${tasks} tasks in ${services} services, idle ${idleS} s`);
  try {
    // BENCH_PROF=<dir>: CPU profiles of the managers (written when they stop).
    const env = process.env.BENCH_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROF}` } : undefined;
    for (let i = 0; i < managers; i++) {
      // Known to the clean-up before it is ready: a SIGINT while it starts stops it too.
      const d = new TestDaemon(await mkdtemp(join(tmpdir(), 'engine-t-')), env ? { env } : {});
      starting.push(d);
      await d.spawn();
      await d.waitReady();
      ms.push({ d, addr: addrOf(i) });
    }
    const [m0] = ms as [Mgr];
    const hp = (m: Mgr) => `${m.addr}:${PORT}`;
    await json(m0.d, 'POST', '/v1.51/swarm/init', { ListenAddr: hp(m0), AdvertiseAddr: hp(m0) });
    const tokens = (await json<{ JoinTokens: { Worker: string; Manager: string } }>(m0.d, 'GET', '/v1.51/swarm')).JoinTokens;
    for (const m of ms.slice(1))
      await json(m.d, 'POST', '/v1.51/swarm/join', {
        ListenAddr: hp(m),
        AdvertiseAddr: hp(m),
        RemoteAddrs: [hp(m0)],
        JoinToken: tokens.Manager,
      });
    for (const m of ms) {
      const self = (await json<{ Swarm: { NodeID: string } }>(m.d, 'GET', '/v1.51/info')).Swarm.NodeID;
      const me = await json<{ Version: { Index: number }; Spec: object }>(m0.d, 'GET', `/v1.51/nodes/${self}`);
      await json(m0.d, 'POST', `/v1.51/nodes/${self}/update?version=${me.Version.Index}`, { ...me.Spec, Availability: 'drain' });
      m.etcd = findEtcd(m.d.dataRoot);
      m.tls = managerTls(m.d.dataRoot, m.d.execRoot);
    }
    const stats = newFakeStats();
    let t0 = performance.now();
    for (let i = 0; i < nodes; i += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, nodes - i) }, async (_, k) => {
          const f = new FakeNode(i + k, stats);
          // A join the loaded store did not answer in time (503) is tried again, as a user would.
          for (let attempt = 1; ; attempt++) {
            try {
              await f.join(hp(m0), tokens.Worker);
              break;
            } catch (err) {
              if (attempt === 5) throw err;
              console.log(`  (join of fake ${i + k} failed, again: ${(err as Error).message.slice(0, 80)})`);
              await sleep(2000);
            }
          }
          fakes.push(f);
          f.start();
        }),
      );
    row(`${nodes} fake nodes joined (certificates signed)`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (;;) {
      const ns = await json<Array<{ Status: { State: string } }>>(m0.d, 'GET', '/v1.51/nodes').catch(() => []);
      const ready = ns.filter((n) => n.Status.State === 'ready').length;
      if (ready >= nodes + managers) break;
      if (performance.now() - t0 > 600_000) throw new Error(`only ${ready} of ${nodes + managers} nodes ready`);
      if (Math.round((performance.now() - t0) / 500) % 20 === 0) console.log(`  (${ready} of ${nodes + managers} nodes ready)`);
      await sleep(500);
    }
    let s0 = await sample(ms, stats);
    const spread = ms.map((m) => fakes.filter((f) => f.manager === hp(m)).length);
    console.log(
      `managers: ${ms.map((m, i) => `m${i + 1} ${hp(m)}${s0.etcd[i]!.isLeader ? ' (etcd leader)' : ''}: ${spread[i]} fake nodes`).join('; ')}`,
    );
    const db = (m: Mgr) => statSync(join(m.d.dataRoot, 'cluster', 'etcd', 'member', 'snap', 'db')).size;
    const db0 = ms.map(db);

    t0 = performance.now();
    let retried = 0;
    for (let s = 0; s < services; s++)
      for (let attempt = 1; ; attempt++) {
        const body = {
          Name: `s${s}`,
          Mode: { Replicated: { Replicas: Math.min(per, tasks - s * per) } },
          TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Args: ['sleep', '1d'] } },
        };
        const r = await m0.d.request('POST', '/v1.51/services/create', { body, timeoutMs: 180_000 });
        // A 503 (the store's deadline passed on the loaded machine) is tried again; a 409 then means
        // the first attempt was written after all.
        if (r.status < 300 || (r.status === 409 && attempt > 1)) break;
        if (r.status !== 503 || attempt === 10) throw new Error(`create s${s}: ${r.status} ${r.text()}`);
        retried++;
        await sleep(1000);
      }
    if (retried) console.log(`  (${retried} service creates answered 503 and were tried again)`);
    row(`${services} services created through m1 (${tasks} tasks)`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (;;) {
      const r = await running(m0.d);
      if (r >= tasks) break;
      if (performance.now() - t0 > 900_000) throw new Error(`timed out: ${r}/${tasks} running`);
      await sleep(1000);
    }
    const tAll = (performance.now() - t0) / 1000;
    let s1 = await sample(ms, stats);
    row(`all ${tasks} tasks running (from the first create)`, `${tAll.toFixed(1)} s`);
    row(
      '  assignment latency p50 / p95 / max (create → agent)',
      `${pct(stats.assign, 50)} / ${pct(stats.assign, 95)} / ${pct(stats.assign, 100)} ms`,
    );
    row(
      '  sync round trip with reports p50 / p95 / max',
      `${pct(stats.syncRtt, 50).toFixed(0)} / ${pct(stats.syncRtt, 95).toFixed(0)} / ${pct(stats.syncRtt, 100).toFixed(0)} ms`,
    );
    const syncs = total(stats.syncs);
    row('  syncs answered, JSON bytes to agents', `${syncs.calls}, ${mib(syncs.bytesIn)}`);
    console.log(`per manager (${ms.map((_, i) => `m${i + 1}`).join(' | ')}), from the first create until all run:`);
    perManager(ms, s0, s1, false, row);

    // Idle: heartbeats, long polls and overlay polls only.
    s0 = await sample(ms, stats);
    await sleep(idleS * 1000);
    s1 = await sample(ms, stats);
    console.log(`per manager, idle ${idleS} s with ${nodes} nodes and ${tasks} tasks:`);
    perManager(ms, s0, s1, true, row);

    // A rolling update of one service (parallelism 10).
    const svc = await json<{ ID: string; Version: { Index: number }; Spec: Record<string, unknown> }>(m0.d, 'GET', '/v1.51/services/s0');
    const spec = structuredClone(svc.Spec) as { TaskTemplate: { ContainerSpec: { Env?: string[] } }; UpdateConfig?: object };
    spec.TaskTemplate.ContainerSpec.Env = ['V=2'];
    spec.UpdateConfig = { Parallelism: 10, Order: 'stop-first' };
    t0 = performance.now();
    await json(m0.d, 'POST', `/v1.51/services/${svc.ID}/update?version=${svc.Version.Index}`, spec);
    for (;;) {
      const s = await json<{ UpdateStatus?: { State: string } }>(m0.d, 'GET', `/v1.51/services/${svc.ID}`).catch(() => undefined);
      if (s?.UpdateStatus?.State === 'completed') break;
      if (performance.now() - t0 > 300_000) throw new Error(`update timed out: ${s?.UpdateStatus?.State}`);
      await sleep(250);
    }
    row(`rolling update of ${per} tasks (parallelism 10) completed`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const end = await sample(ms, stats);
    const cols = (fn: (m: Mgr, i: number) => string) => ms.map((m, i) => fn(m, i)).join(' | ');
    console.log(`per manager (${ms.map((_, i) => `m${i + 1}${end.etcd[i]!.isLeader ? ' leader' : ''}`).join(' | ')}), at the end:`);
    row(
      '  manager RSS now / peak (MiB)',
      cols((m) => `${mem(m.d.pid).rss.toFixed(0)} / ${mem(m.d.pid).peak.toFixed(0)}`),
    );
    row(
      '  etcd RSS now / peak (MiB)',
      cols((m) => `${mem(m.etcd).rss.toFixed(0)} / ${mem(m.etcd).peak.toFixed(0)}`),
    );
    row(
      '  etcd db file before services / now (MiB)',
      cols((m, i) => `${(db0[i]! / 2 ** 20).toFixed(1)} / ${(db(m) / 2 ** 20).toFixed(1)}`),
    );
    row(
      '  etcd db in use (MiB)',
      cols((_, i) => (end.etcd[i]!.dbInUseBytes / 2 ** 20).toFixed(1)),
    );
    row(
      '  etcd watchers / watch streams held',
      cols((_, i) => `${end.etcd[i]!.watchers} / ${end.etcd[i]!.watchStreams}`),
    );
    const all = await json<Array<{ DesiredState: string }>>(m0.d, 'GET', '/v1.51/tasks');
    row(
      `task records (${tasks} wanted, ${per} replaced by the update)`,
      `${all.length} (${all.filter((t) => t.DesiredState === 'running').length} desired running)`,
    );
    // Bytes per record as stored (key + JSON value), read from m1's etcd member.
    const store = await ClusterStore.open([`https://${m0.addr}:${etcdPorts(PORT).client}`], {
      caPem: m0.tls!.ca.toString(),
      certPem: m0.tls!.cert.toString(),
      keyPem: m0.tls!.key.toString(),
    });
    try {
      for (const prefix of ['nodes/', 'heartbeats/', 'agents/', 'services/', 'tasks/', 'networks/', 'endpoints/']) {
        const items = await store.list<unknown>(prefix);
        const bytes = items.reduce((a, x) => a + 8 + x.key.length + JSON.stringify(x.value).length, 0);
        row(
          `  store: ${prefix.padEnd(12)} records, bytes each (mean), total`,
          `${items.length}, ${items.length ? Math.round(bytes / items.length) : 0} B, ${mib(bytes)}`,
        );
      }
    } finally {
      store.close();
    }
  } catch (err) {
    console.log(`failed: ${(err as Error).message}`);
    for (const [i, m] of ms.entries()) {
      const notable = m.d.output.split('\n').filter((l) => /level=(warning|error)/.test(l) && !/took too long/.test(l));
      console.log(`-- m${i + 1}'s warnings (last 20):\n${notable.slice(-20).join('\n')}`);
    }
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

await main();
// The test harness's helper shells would keep the process alive.
process.exit(process.exitCode ?? 0);
