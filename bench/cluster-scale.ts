// Cluster mode at scale, by simulation: one real engined manager (real etcd) and N fake worker nodes
// that speak the real protocol over mutual TLS — each joins with the worker token (GET /ca, POST
// /join: a certificate of its own), heartbeats (POST /heartbeat) and runs an agent loop (POST
// /agent/sync long polls with `known`/`since`, reporting each task it is given as running, or shut
// down when told to stop) without containers. The manager is drained so every task goes to the fake
// nodes. Measured: time until all tasks of S services run; manager (engined) and etcd CPU seconds
// and resident memory; etcd's database size; how long a task takes from creation to its node's
// agent (assignment latency) and the round trip of syncs that carry reports; then the same load
// idle for a while (heartbeats and long polls only), and a rolling update of one service. Not part
// of the test suite; nothing asserts. After a build:
//
//   bin/node dist/bench/cluster-scale.js [nodes=100] [tasks=10000] [services=100] [idle seconds=30]
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { newKeyPair } from '../src/cluster/ca.ts';
import { callManager, type JoinResponse } from '../src/cluster/endpoint.ts';
import type { NodeCerts } from '../src/cluster/local-state.ts';
import type { AgentSyncRequest, SyncAnswer } from '../src/cluster/services-api.ts';
import type { TaskRecord, TaskStatus } from '../src/cluster/tasks.ts';
import { startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { childNamed } from './lib/proc.ts';

const ADDR = '127.0.0.1';
const PORT = 42377;

interface Stats {
  assign: number[];
  syncRtt: number[];
  syncs: number;
  bytesIn: number;
}

/** One fake node: identity, heartbeats, an agent loop that "runs" what it is given. */
class FakeNode {
  private certs!: NodeCerts;
  private caPem = '';
  nodeId = '';
  private stopped = false;
  private known: string | undefined;
  private since: number | undefined;
  private tasks = new Map<string, TaskRecord>();
  /** Tasks reported (state per task) and not yet seen back. */
  private readonly pending = new Map<string, TaskStatus>();
  private readonly seen = new Set<string>();
  private loops: Promise<void>[] = [];

  constructor(
    private readonly i: number,
    private readonly stats: Stats,
  ) {}

  async join(token: string): Promise<void> {
    const manager = `${ADDR}:${PORT}`;
    this.caPem = (await callManager<{ caPem: string }>(manager, 'GET', '/ca', undefined, {})).caPem;
    const keys = newKeyPair();
    const res = await callManager<JoinResponse>(
      manager,
      'POST',
      '/join',
      {
        token,
        publicKeyPem: keys.publicKeyPem,
        advertiseAddr: `127.0.0.1:${20000 + this.i}`,
        listenAddr: `127.0.0.1:${20000 + this.i}`,
        dataPathAddr: '',
        description: {
          Hostname: `fake-${this.i}`,
          Platform: { Architecture: 'x86_64', OS: 'linux' },
          Resources: { NanoCPUs: 4e9, MemoryBytes: 8 * 2 ** 30 },
          Engine: { EngineVersion: 'fake', Labels: {}, Plugins: [] },
        },
      },
      { caPem: this.caPem, timeoutMs: 60_000 },
    );
    this.nodeId = res.nodeId;
    this.certs = { caPem: this.caPem, certPem: res.certPem, keyPem: keys.keyPem };
  }

  private call<T>(path: string, body: unknown, timeoutMs = 15_000): Promise<T> {
    return callManager<T>(`${ADDR}:${PORT}`, 'POST', path, body, { caPem: this.caPem, certs: this.certs, timeoutMs });
  }

  start(): void {
    this.loops.push(this.beats(), this.agent());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async beats(): Promise<void> {
    while (!this.stopped) {
      let period = 5;
      try {
        period = (await this.call<{ periodSeconds: number }>('/heartbeat', {})).periodSeconds || 5;
      } catch {
        // the manager is busy or restarting: try again
      }
      for (let waited = 0; waited < period * 1000 && !this.stopped; waited += 250) await new Promise((r) => setTimeout(r, 250));
    }
  }

  private async agent(): Promise<void> {
    while (!this.stopped) {
      const reports = [...this.pending].map(([id, status]) => ({ id, status }));
      const req: AgentSyncRequest = { reports, ...(this.since !== undefined ? { since: this.since } : {}) };
      if (!reports.length && this.known !== undefined) req.known = this.known;
      const t0 = performance.now();
      let a: SyncAnswer;
      try {
        a = await this.call<SyncAnswer>('/agent/sync', req, 30_000);
      } catch {
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const now = Date.now();
      this.stats.syncs++;
      this.stats.bytesIn += JSON.stringify(a).length;
      if (reports.length) this.stats.syncRtt.push(performance.now() - t0);
      for (const r of reports) if (this.pending.get(r.id) === r.status) this.pending.delete(r.id);
      this.known = a.digest;
      this.since = a.rev;
      if (!a.ids) this.tasks = new Map(a.tasks.map((t) => [t.ID, t]));
      else {
        const next = new Map<string, TaskRecord>();
        for (const id of a.ids) if (this.tasks.has(id)) next.set(id, this.tasks.get(id)!);
        for (const t of a.tasks) next.set(t.ID, t);
        this.tasks = next;
      }
      for (const t of this.tasks.values()) {
        if (!this.seen.has(t.ID)) {
          this.seen.add(t.ID);
          this.stats.assign.push(now - Date.parse(t.CreatedAt));
        }
        const st = (this.pending.get(t.ID) ?? t.Status).State;
        const stamp = new Date().toISOString();
        if (t.DesiredState === 'running' && (st === 'assigned' || st === 'accepted'))
          this.pending.set(t.ID, {
            Timestamp: stamp,
            State: 'running',
            Message: 'started',
            ContainerStatus: { ContainerID: `fake${t.ID}`, PID: 1, ExitCode: 0 },
          });
        else if (t.DesiredState !== 'running' && ['assigned', 'accepted', 'preparing', 'starting', 'running'].includes(st))
          this.pending.set(t.ID, { Timestamp: stamp, State: 'shutdown', Message: 'shutdown' });
      }
    }
  }
}

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks (100 Hz)
}

function mem(pid: number): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(s)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function json<T>(d: TestDaemon, method: string, path: string, body?: unknown): Promise<T> {
  const r = await d.request(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text()}`);
  return (r.body.length ? r.json() : undefined) as T;
}

async function running(d: TestDaemon): Promise<{ running: number; desired: number }> {
  const ss = await json<Array<{ ServiceStatus: { RunningTasks: number; DesiredTasks: number } }>>(d, 'GET', '/v1.51/services?status=true');
  return ss.reduce((a, s) => ({ running: a.running + s.ServiceStatus.RunningTasks, desired: a.desired + s.ServiceStatus.DesiredTasks }), {
    running: 0,
    desired: 0,
  });
}

async function main(): Promise<void> {
  const [nodes, tasks, services, idleS] = [100, 10_000, 100, 30].map((def, i) => Number(process.argv[2 + i] ?? def)) as [
    number,
    number,
    number,
    number,
  ];
  const per = Math.ceil(tasks / services);
  // BENCH_PROF=<dir>: a CPU profile of the manager (written when it stops).
  const d = await startDaemon(
    process.env.BENCH_PROF ? { env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROF}` } } : {},
  );
  const fakes: FakeNode[] = [];
  const rows: Array<[string, string]> = [];
  const row = (k: string, v: string) => {
    rows.push([k, v]);
    console.log(`${k.padEnd(60)} ${v}`);
  };
  try {
    await json(d, 'POST', '/v1.51/swarm/init', { ListenAddr: `${ADDR}:${PORT}`, AdvertiseAddr: `${ADDR}:${PORT}` });
    const self = (await json<{ Swarm: { NodeID: string } }>(d, 'GET', '/v1.51/info')).Swarm.NodeID;
    const me = await json<{ Version: { Index: number }; Spec: object }>(d, 'GET', `/v1.51/nodes/${self}`);
    await json(d, 'POST', `/v1.51/nodes/${self}/update?version=${me.Version.Index}`, { ...me.Spec, Availability: 'drain' });
    const token = (await json<{ JoinTokens: { Worker: string } }>(d, 'GET', '/v1.51/swarm')).JoinTokens.Worker;
    const etcdPid = childNamed(d.pid, 'etcd');
    const db = join(d.dataRoot, 'cluster', 'etcd', 'member', 'snap', 'db');
    const stats: Stats = { assign: [], syncRtt: [], syncs: 0, bytesIn: 0 };

    let t0 = performance.now();
    for (let i = 0; i < nodes; i += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, nodes - i) }, async (_, k) => {
          const f = new FakeNode(i + k, stats);
          await f.join(token);
          fakes.push(f);
          f.start();
        }),
      );
    row(`${nodes} fake nodes joined (certificates signed)`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (;;) {
      const ns = await json<Array<{ Status: { State: string } }>>(d, 'GET', '/v1.51/nodes');
      if (ns.filter((n) => n.Status.State === 'ready').length >= nodes + 1) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const cpu0 = { m: cpuSeconds(d.pid), e: etcdPid ? cpuSeconds(etcdPid) : NaN };
    const db0 = statSync(db).size;

    t0 = performance.now();
    for (let s = 0; s < services; s++)
      await json(d, 'POST', '/v1.51/services/create', {
        Name: `s${s}`,
        Mode: { Replicated: { Replicas: Math.min(per, tasks - s * per) } },
        TaskTemplate: { ContainerSpec: { Image: 'busybox:latest', Args: ['sleep', '1d'] } },
      });
    row(`${services} services created (${tasks} tasks)`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (;;) {
      const r = await running(d);
      if (r.running >= tasks) break;
      if (performance.now() - t0 > 900_000) throw new Error(`timed out: ${r.running}/${tasks} running`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const tAll = (performance.now() - t0) / 1000;
    const cpu1 = { m: cpuSeconds(d.pid), e: etcdPid ? cpuSeconds(etcdPid) : NaN };
    row(`all ${tasks} tasks running (from the first create)`, `${tAll.toFixed(1)} s`);
    row('  manager CPU / etcd CPU during it', `${(cpu1.m - cpu0.m).toFixed(1)} s / ${(cpu1.e - cpu0.e).toFixed(1)} s`);
    row(
      '  assignment latency p50 / p95 / max (create → agent)',
      `${pct(stats.assign, 50)} / ${pct(stats.assign, 95)} / ${pct(stats.assign, 100)} ms`,
    );
    row(
      '  sync round trip with reports p50 / p95 / max',
      `${pct(stats.syncRtt, 50).toFixed(0)} / ${pct(stats.syncRtt, 95).toFixed(0)} / ${pct(stats.syncRtt, 100).toFixed(0)} ms`,
    );
    row('  syncs answered, bytes sent to agents', `${stats.syncs}, ${(stats.bytesIn / 2 ** 20).toFixed(1)} MiB`);

    // Idle: heartbeats and long polls only.
    const s0 = stats.syncs;
    const b0 = stats.bytesIn;
    const cpu2 = { m: cpuSeconds(d.pid), e: etcdPid ? cpuSeconds(etcdPid) : NaN };
    await new Promise((r) => setTimeout(r, idleS * 1000));
    const cpu3 = { m: cpuSeconds(d.pid), e: etcdPid ? cpuSeconds(etcdPid) : NaN };
    row(
      `idle ${idleS} s: manager CPU / etcd CPU`,
      `${(((cpu3.m - cpu2.m) / idleS) * 100).toFixed(1)} % / ${(((cpu3.e - cpu2.e) / idleS) * 100).toFixed(1)} % of a core`,
    );
    row(`idle ${idleS} s: syncs answered, bytes sent`, `${stats.syncs - s0}, ${((stats.bytesIn - b0) / 1024).toFixed(0)} KiB`);

    // A rolling update of one service (parallelism 10).
    const svc = await json<{ ID: string; Version: { Index: number }; Spec: Record<string, unknown> }>(d, 'GET', '/v1.51/services/s0');
    const spec = structuredClone(svc.Spec) as { TaskTemplate: { ContainerSpec: { Env?: string[] } }; UpdateConfig?: object };
    spec.TaskTemplate.ContainerSpec.Env = ['V=2'];
    spec.UpdateConfig = { Parallelism: 10, Order: 'stop-first' };
    t0 = performance.now();
    await json(d, 'POST', `/v1.51/services/${svc.ID}/update?version=${svc.Version.Index}`, spec);
    for (;;) {
      const s = await json<{ UpdateStatus?: { State: string } }>(d, 'GET', `/v1.51/services/${svc.ID}`);
      if (s.UpdateStatus?.State === 'completed') break;
      if (performance.now() - t0 > 300_000) throw new Error(`update timed out: ${s.UpdateStatus?.State}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    row(`rolling update of ${per} tasks (parallelism 10) completed`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const m = mem(d.pid);
    const e = etcdPid ? mem(etcdPid) : { rss: NaN, peak: NaN };
    row('manager RSS now / peak', `${m.rss.toFixed(0)} / ${m.peak.toFixed(0)} MiB`);
    row('etcd RSS now / peak', `${e.rss.toFixed(0)} / ${e.peak.toFixed(0)} MiB`);
    const all = await json<unknown[]>(d, 'GET', '/v1.51/tasks');
    row('etcd db file before services / now', `${(db0 / 2 ** 20).toFixed(1)} / ${(statSync(db).size / 2 ** 20).toFixed(1)} MiB`);
    if (process.env.BENCH_LOG)
      console.log(
        d.output
          .split('\n')
          .filter((l) => l.includes(process.env.BENCH_LOG!))
          .slice(-40)
          .join('\n'),
      );
    row(`task records (${all.length}) as JSON`, `${(JSON.stringify(all).length / 2 ** 20).toFixed(1)} MiB`);
  } catch (err) {
    const notable = d.output.split('\n').filter((l) => /level=(warning|error)/.test(l) && !/took too long/.test(l));
    console.log(`failed: ${(err as Error).message}\n-- the manager's warnings (last 30):\n${notable.slice(-30).join('\n')}`);
    process.exitCode = 1;
  } finally {
    await Promise.all(fakes.map((f) => f.stop()));
    await d.cleanup();
  }
}

await main();
