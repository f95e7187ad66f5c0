// A fake worker node of the cluster scale bench: it speaks the real protocol over mutual TLS — joins
// with the worker token (GET /ca, POST /join: a certificate of its own), heartbeats (POST /heartbeat)
// runs an agent loop (POST /agent/sync long polls with `known`/`since`, reporting each task it is
// given as running, or shut down when told to stop) and polls the overlay state every 2 s (POST
// /overlay/state, as worker-networks.ts) — without containers. It talks to the manager a
// real worker would pick from the join answer's managers (worker.ts `firstManager`), and counts its
// calls and bytes per manager.
import { newKeyPair } from '../../src/cluster/ca/ca.ts';
import { callManager, type HeartbeatResponse, type JoinResponse } from '../../src/cluster/node/endpoint.ts';
import type { NodeCerts, RemoteManager } from '../../src/cluster/node/local-state.ts';
import type { AgentSyncRequest, SyncAnswer } from '../../src/cluster/manager/services-api.ts';
import type { TaskRecord, TaskStatus } from '../../src/cluster/manager/tasks.ts';
import { firstManager } from '../../src/cluster/node/worker.ts';

/** Calls and bytes (request bodies out, answers in) of one kind to one manager. */
export interface Traffic {
  calls: number;
  bytesOut: number;
  bytesIn: number;
}

export interface FakeStats {
  /** create → the node's agent has the task (ms) */
  assign: number[];
  /** round trips of syncs that carried reports (ms) */
  syncRtt: number[];
  /** by manager address */
  beats: Map<string, Traffic>;
  syncs: Map<string, Traffic>;
  overlay: Map<string, Traffic>;
}

export const newFakeStats = (): FakeStats => ({ assign: [], syncRtt: [], beats: new Map(), syncs: new Map(), overlay: new Map() });

function count(m: Map<string, Traffic>, addr: string, out: number, inn: number): void {
  const t = m.get(addr) ?? { calls: 0, bytesOut: 0, bytesIn: 0 };
  t.calls++;
  t.bytesOut += out;
  t.bytesIn += inn;
  m.set(addr, t);
}

/** The sum of a traffic map (all managers). */
export function total(m: Map<string, Traffic>): Traffic {
  const t = { calls: 0, bytesOut: 0, bytesIn: 0 };
  for (const v of m.values()) ((t.calls += v.calls), (t.bytesOut += v.bytesOut), (t.bytesIn += v.bytesIn));
  return t;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FakeNode {
  private certs!: NodeCerts;
  private caPem = '';
  nodeId = '';
  /** The manager this node talks to (host:port). */
  manager = '';
  private managers: RemoteManager[] = [];
  private stopped = false;
  private known: string | undefined;
  private since: number | undefined;
  private tasks = new Map<string, TaskRecord>();
  /** Tasks reported (state per task) and not yet seen back. */
  private readonly pending = new Map<string, TaskStatus>();
  private readonly seen = new Set<string>();
  private loops: Promise<void>[] = [];
  private overlayKnown: string | undefined;

  constructor(
    private readonly i: number,
    private readonly stats: FakeStats,
  ) {}

  /** Joins through `via` (host:port of a manager). */
  async join(via: string, token: string): Promise<void> {
    this.caPem = (await callManager<{ caPem: string }>(via, 'GET', '/ca', undefined, {})).caPem;
    const keys = newKeyPair();
    const res = await callManager<JoinResponse>(
      via,
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
    this.managers = res.managers;
    this.manager = this.managers[firstManager(this.nodeId, this.managers.length)]!.Addr;
  }

  private async call<T>(path: string, body: unknown, into: Map<string, Traffic>, timeoutMs = 15_000): Promise<T> {
    const addr = this.manager;
    const a = await callManager<T>(addr, 'POST', path, body, { caPem: this.caPem, certs: this.certs, timeoutMs });
    count(into, addr, JSON.stringify(body).length, JSON.stringify(a).length);
    return a;
  }

  start(): void {
    this.loops.push(this.beats(), this.agent(), this.overlayPoll());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async beats(): Promise<void> {
    while (!this.stopped) {
      let period = 5;
      try {
        period = (await this.call<HeartbeatResponse>('/heartbeat', {}, this.stats.beats)).periodSeconds || 5;
      } catch {
        // the manager is busy or restarting: try again
      }
      for (let waited = 0; waited < period * 1000 && !this.stopped; waited += 250) await sleep(250);
    }
  }

  /** As worker-networks.ts: the networks and endpoints every 2 s. */
  private async overlayPoll(): Promise<void> {
    while (!this.stopped) {
      const a = await this.call<{ digest?: string }>(
        '/overlay/state',
        this.overlayKnown ? { known: this.overlayKnown } : {},
        this.stats.overlay,
      ).catch(() => undefined);
      if (a?.digest) this.overlayKnown = a.digest;
      for (let waited = 0; waited < 2000 && !this.stopped; waited += 250) await sleep(250);
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
        a = await this.call<SyncAnswer>('/agent/sync', req, this.stats.syncs, 30_000);
      } catch {
        await sleep(1000);
        continue;
      }
      const now = Date.now();
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
