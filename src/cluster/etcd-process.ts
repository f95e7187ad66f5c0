// The etcd member a manager runs as the cluster's replicated store: flags (data under
// <data-root>/cluster/etcd, client and peer URLs over mutual TLS with the node's certificate from the
// cluster CA), spawn, readiness through /health, log forwarding, restart with backoff after a crash,
// stop on shutdown or when the node leaves. Modelled on supervisor/containerd-process.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import { request } from 'node:https';
import readline from 'node:readline';
import { unavailable } from '../errors.ts';
import type { Logger, LogLevel } from '../util/log.ts';

export interface EtcdTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

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
}

const BACKOFF_MIN_MS = 200;
const BACKOFF_MAX_MS = 10_000;
const STABLE_AFTER_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;

export const peerUrl = (host: string, port: number): string => `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
export const clientUrl = peerUrl;

/** The command line of an etcd member. */
export function etcdArgs(o: EtcdMemberOptions): string[] {
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
    // Machines running the tests are loaded: a longer election timeout avoids needless elections.
    '--heartbeat-interval',
    '250',
    '--election-timeout',
    '2500',
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

/** Whether a process is gone (or a zombie nobody reaped yet). */
function gone(pid: number): boolean {
  try {
    return / Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/s, ')'));
  } catch {
    return true;
  }
}

export class EtcdMember extends EventEmitter {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private backoffMs = BACKOFF_MIN_MS;
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
    fs.mkdirSync(this.opts.dataDir, { recursive: true, mode: 0o700 });
    await this.stopStale();
    await this.spawnAndWait(this.opts.forceNewCluster ?? false);
  }

  private async spawnAndWait(force: boolean): Promise<void> {
    const args = etcdArgs({ ...this.opts, forceNewCluster: force });
    const child = spawn(this.opts.binary ?? 'etcd', args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true, cwd: '/' });
    this.child = child;
    this.startedAt = Date.now();
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
    });
    const timeoutMs = this.opts.startTimeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (outcome !== null) throw unavailable(`etcd failed to start (${outcome})${this.recentLog()}`);
      if (await (this.opts.waitFor === 'serving' ? this.answers('/version') : this.healthy())) {
        ready = true;
        this.log.debug('etcd is up', { pid: child.pid, ms: Date.now() - this.startedAt });
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGKILL');
    throw unavailable(`etcd did not become healthy on ${this.endpoint} within ${timeoutMs} ms${this.recentLog()}`);
  }

  /**
   * After `kill -9` of the daemon its etcd (own session) keeps running and holds the ports; etcd
   * is crash-safe, so it is killed and started again under this daemon's watch.
   */
  private async stopStale(): Promise<void> {
    for (const entry of fs.readdirSync('/proc')) {
      const pid = Number(entry);
      if (!(pid > 0) || pid === process.pid) continue;
      let cmd: string[];
      try {
        cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      } catch {
        continue; // gone meanwhile
      }
      const i = cmd.indexOf('--data-dir');
      if (i < 0 || cmd[i + 1] !== this.opts.dataDir) continue;
      this.log.info('stopping the etcd a previous daemon left running', { pid });
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        continue; // already gone
      }
      while (!gone(pid)) await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** GET /health over mutual TLS: true once the member serves with a quorum. */
  healthy(timeoutMs = 2000): Promise<boolean> {
    return this.answers('/health', timeoutMs, (body) => /"health":\s*"true"/.test(body));
  }

  private answers(path: string, timeoutMs = 2000, ok: (body: string) => boolean = () => true): Promise<boolean> {
    const { tls } = this.opts;
    return new Promise((resolve) => {
      const req = request(
        `${this.endpoint}${path}`,
        {
          ca: fs.readFileSync(tls.caFile),
          cert: fs.readFileSync(tls.certFile),
          key: fs.readFileSync(tls.keyFile),
          timeout: timeoutMs,
        },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve(res.statusCode === 200 && ok(body)));
          res.on('error', () => resolve(false));
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false)); // not listening yet, or no quorum: the caller retries
      req.end();
    });
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
