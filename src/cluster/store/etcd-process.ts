// The etcd member a manager runs as the cluster's replicated store: flags (data under
// <data-root>/cluster/etcd, client and peer URLs over mutual TLS with the node's certificate from the
// cluster CA), spawn, readiness through /health, log forwarding, restart with backoff after a crash,
// stop on shutdown or when the node leaves. Modelled on supervisor/containerd-process.ts.
// Start-up speed: the founding member of a new cluster starts with short Raft timings (it is alone,
// so it elects itself within ~100 ms instead of up to 2.75 s) and is restarted with the steady ones
// before a second member is added (`settle`), so a grown cluster never runs on the short ones.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import { join } from 'node:path';
import readline from 'node:readline';
import { unavailable } from '../../errors.ts';
import type { Logger, LogLevel } from '../../util/log.ts';
import { memberAnswers, stopStaleMember, type EtcdTls } from './etcd-probes.ts';

export type { EtcdTls } from './etcd-probes.ts';

export interface EtcdMemberOptions {
  /** Member name: the node ID. */
  name: string;
  dataDir: string;
  /** Host (IP) the member listens and advertises on. */
  host: string;
  clientPort: number;
  peerPort: number;
  tls: EtcdTls;
  /** `name=peerURL` pairs of the whole cluster at first start; `new` for init, `existing` for a join. */
  initialCluster: string;
  initialState: 'new' | 'existing';
  /**
   * What "started" means: `health` (serving with a quorum: init) or `serving` (answers /version:
   * a learner just added has no vote to be healthy with until promoted, and a restarted member may
   * wait for its peers; the store answers 503 until the quorum is back).
   */
  waitFor?: 'health' | 'serving';
  /** Makes a one-member cluster out of the data (ForceNewCluster). */
  forceNewCluster?: boolean;
  clusterToken: string;
  log: Logger;
  binary?: string;
  startTimeoutMs?: number;
  /** Called once the process is spawned: work that can overlap etcd's own start-up. */
  onSpawned?: () => void;
}

const BACKOFF_MIN_MS = 200;
const BACKOFF_MAX_MS = 10_000;
const STABLE_AFTER_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;

export const peerUrl = (host: string, port: number): string => `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
export const clientUrl = peerUrl;
/** A manager's etcd ports follow its advertise port: client = port+2, peer = port+3. */
export const etcdPorts = (advertisePort: number) => ({ client: advertisePort + 2, peer: advertisePort + 3 });

/**
 * Raft timings (heartbeat, election timeout, ms). `steady`: machines running the tests are loaded, so
 * a longer election timeout avoids needless elections (the leader also steps down when a quorum has
 * not answered within it). `alone`: a member with no peers has no one to miss; on start it waits a
 * random 1..(election/heartbeat + 1) ticks before electing itself, so short ticks make that ~10-110
 * ms instead of 250-2750 ms. Never used with peers (see EtcdMember.settle).
 */
export const RAFT_TIMINGS = { steady: [250, 2500], alone: [10, 100] } as const;
export type RaftTimings = keyof typeof RAFT_TIMINGS;

/** The command line of an etcd member. */
export function etcdArgs(o: EtcdMemberOptions, timings: RaftTimings = 'steady'): string[] {
  const [heartbeat, election] = RAFT_TIMINGS[timings];
  const client = clientUrl(o.host, o.clientPort);
  const peer = peerUrl(o.host, o.peerPort);
  return [
    '--name',
    o.name,
    '--data-dir',
    o.dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    o.initialCluster,
    '--initial-cluster-state',
    o.initialState,
    '--initial-cluster-token',
    o.clusterToken,
    '--client-cert-auth',
    '--trusted-ca-file',
    o.tls.caFile,
    '--cert-file',
    o.tls.certFile,
    '--key-file',
    o.tls.keyFile,
    '--peer-client-cert-auth',
    '--peer-trusted-ca-file',
    o.tls.caFile,
    '--peer-cert-file',
    o.tls.certFile,
    '--peer-key-file',
    o.tls.keyFile,
    '--heartbeat-interval',
    String(heartbeat),
    '--election-timeout',
    String(election),
    // Keep 10 minutes of history, no more: every heartbeat and task write is a new revision, and
    // without compaction the database grows until etcd's quota refuses all writes.
    '--auto-compaction-mode',
    'periodic',
    '--auto-compaction-retention',
    '10m',
    '--logger',
    'zap',
    '--log-outputs',
    'stderr',
    '--log-level',
    'info',
    ...(o.forceNewCluster ? ['--force-new-cluster'] : []),
  ];
}

/** Maps a zap JSON log line to our level and message. */
export function parseEtcdLine(line: string): { level: LogLevel; msg: string; fields: Record<string, unknown> } {
  try {
    const { level, msg, ts: _ts, caller: _caller, ...fields } = JSON.parse(line) as Record<string, unknown>;
    const lv: LogLevel = level === 'warn' ? 'warn' : level === 'error' || level === 'fatal' || level === 'panic' ? 'error' : 'debug';
    return { level: lv, msg: String(msg ?? ''), fields };
  } catch {
    return { level: 'warn', msg: line, fields: {} };
  }
}

export class EtcdMember extends EventEmitter {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private backoffMs = BACKOFF_MIN_MS;
  private timings: RaftTimings = 'steady';
  private settling: Promise<void> | null = null;
  private startedAt = 0;
  private readonly recent: string[] = [];
  private readonly log: Logger;

  constructor(private readonly opts: EtcdMemberOptions) {
    super();
    this.log = opts.log.child({ module: 'etcd' });
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get endpoint(): string {
    return clientUrl(this.opts.host, this.opts.clientPort);
  }

  async start(): Promise<void> {
    this.stopping = false;
    // The founding member's first start (no data yet, no peers) may use the short timings.
    const alone =
      this.opts.initialState === 'new' && !this.opts.initialCluster.includes(',') && !fs.existsSync(join(this.opts.dataDir, 'member'));
    fs.mkdirSync(this.opts.dataDir, { recursive: true, mode: 0o700 });
    await stopStaleMember(this.opts, this.log);
    await this.spawnAndWait(this.opts.forceNewCluster ?? false, alone ? 'alone' : 'steady');
  }

  /** Whether the running member uses the short timings of a member with no peers. */
  get alone(): boolean {
    return this.timings === 'alone';
  }

  /**
   * Before a second member is added: a member on the short timings is restarted on the steady ones
   * (it elects itself again, within the steady election timeout). Also run, in the background, when
   * the member's log shows a peer added by a path that did not call it first.
   */
  settle(): Promise<void> {
    if (this.timings === 'steady' || this.stopping) return this.settling ?? Promise.resolve();
    this.settling ??= (async () => {
      this.log.info('restarting etcd with the steady Raft timings before the cluster grows');
      await this.stopChild();
      if (this.stopping) return;
      await this.spawnAndWait(false, 'steady');
    })().finally(() => (this.settling = null));
    return this.settling;
  }

  private async spawnAndWait(force: boolean, timings: RaftTimings = 'steady'): Promise<void> {
    this.timings = timings;
    const args = etcdArgs({ ...this.opts, forceNewCluster: force }, timings);
    const child = spawn(this.opts.binary ?? 'etcd', args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true, cwd: '/' });
    this.child = child;
    this.startedAt = Date.now();
    this.opts.onSpawned?.();
    let outcome: string | null = null;
    let ready = false;
    child.once('error', (err) => (outcome = err.message));
    child.once('exit', (code, signal) => {
      outcome = signal ? `killed by ${signal}` : `exit status ${code}`;
      if (this.child !== child) return;
      this.child = null;
      if (ready && !this.stopping) this.onUnexpectedExit(outcome);
    });
    const rl = readline.createInterface({ input: child.stderr!, crlfDelay: Infinity });
    rl.on('line', (line) => {
      this.recent.push(line);
      if (this.recent.length > 10) this.recent.shift();
      const p = parseEtcdLine(line);
      if (this.log.enabled(p.level)) this.log[p.level](p.msg, p.fields);
      if (this.timings === 'alone' && p.msg === 'added member' && p.fields['added-peer-id'] !== p.fields['local-member-id'])
        void this.settle().catch((err: Error) => this.log.error('etcd restart with the steady timings failed', { error: err.message }));
    });
    const timeoutMs = this.opts.startTimeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (outcome !== null) throw unavailable(`etcd failed to start (${outcome})${this.recentLog()}`);
      if (await (this.opts.waitFor === 'serving' ? memberAnswers(this.endpoint, this.opts.tls, '/version') : this.healthy())) {
        ready = true;
        this.log.debug('etcd is up', { pid: child.pid, ms: Date.now() - this.startedAt });
        return;
      }
      // Short: a health check is cheap, and init waits on this (a member alone is up in ~100 ms).
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    throw unavailable(`etcd did not become healthy on ${this.endpoint} within ${timeoutMs} ms${this.recentLog()}`);
  }

  /** GET /health over mutual TLS: true once the member serves with a quorum. */
  healthy(timeoutMs = 2000): Promise<boolean> {
    return memberAnswers(this.endpoint, this.opts.tls, '/health', timeoutMs, (body) => /"health":\s*"true"/.test(body));
  }

  private recentLog(): string {
    return this.recent.length ? `; last output:\n${this.recent.join('\n')}` : '';
  }

  private onUnexpectedExit(reason: string): void {
    if (Date.now() - this.startedAt >= STABLE_AFTER_MS) this.backoffMs = BACKOFF_MIN_MS;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, BACKOFF_MAX_MS);
    this.log.warn('etcd exited unexpectedly, restarting', { reason, restartInMs: delay });
    this.emit('exit', reason);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.spawnAndWait(false).then(
        () => this.emit('restarted'),
        (err: Error) => {
          this.log.error('etcd restart failed', { error: err.message });
          if (!this.stopping && !this.child) this.onUnexpectedExit(`restart failed: ${err.message}`);
        },
      );
    }, delay);
  }

  /** SIGTERM, then SIGKILL after a grace period. */
  async stop(timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.stopChild(timeoutMs);
  }

  private async stopChild(timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      this.log.warn('etcd did not stop in time, killing it', { pid: child.pid });
      child.kill('SIGKILL');
    }, timeoutMs);
    await exited;
    clearTimeout(timer);
  }
}
