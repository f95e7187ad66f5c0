// The containerd the daemon starts itself (no --supervisor address): config file, process, log
// forwarding, readiness, restart on crash, stop, and finding one a previous daemon left running.

import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { Logger, LogLevel } from '../util/log.ts';
import { unavailable } from '../errors.ts';
import { startupMark } from '../util/startup-trace.ts';
// The gRPC client (grpc-js, protobufjs: ~75 ms to load) is imported only once containerd has been
// spawned, so that the daemon can start containerd before it loads the rest of itself.
type ClientModule = typeof import('./client.ts');
const clientModule = (): Promise<ClientModule> => import('./client.ts');

export interface ManagedContainerdOptions {
  dataRoot: string;
  execRoot: string;
  log: Logger;
  /** Keep containerd's CRI plugin (--cri-supervisor). */
  cri?: boolean;
  /** containerd's log level; defaults to the daemon logger's level when started. */
  logLevel?: LogLevel;
  /** Binary to run; default: `containerd` found on PATH. */
  binary?: string;
  /** How long to wait for the first Version answer. */
  startTimeoutMs?: number;
  /** A snapshotter served over gRPC (the fuse-overlayfs driver's): containerd's proxy plugin. */
  proxySnapshotter?: ProxySnapshotter;
}

export interface ProxySnapshotter {
  name: string;
  address: string;
}

export const RESTART_BACKOFF_MIN_MS = 100;
export const RESTART_BACKOFF_MAX_MS = 5000;
/** A containerd that ran this long before dying restarts without delay growth. */
const STABLE_AFTER_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;
const ADOPTED_POLL_MS = 500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | null {
  for (const dir of envPath.split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

const toml = (s: string) => JSON.stringify(s); // a JSON string is a valid TOML basic string

export function containerdConfig(o: {
  dataRoot: string;
  execRoot: string;
  cri: boolean;
  level: string;
  proxySnapshotter?: ProxySnapshotter | undefined;
}): string {
  const root = path.join(o.dataRoot, 'containerd');
  const state = path.join(o.execRoot, 'containerd');
  // containerd dials a proxy plugin on its first call to it, not at start-up.
  const proxy = o.proxySnapshotter
    ? [`[proxy_plugins.${toml(o.proxySnapshotter.name)}]`, '  type = "snapshot"', `  address = ${toml(o.proxySnapshotter.address)}`, '']
    : [];
  return [
    'version = 2',
    `root = ${toml(root)}`,
    `state = ${toml(state)}`,
    `disabled_plugins = [${o.cri ? '' : toml('io.containerd.grpc.v1.cri')}]`,
    '',
    '[grpc]',
    `  address = ${toml(path.join(state, 'containerd.sock'))}`,
    '',
    '[debug]',
    `  level = ${toml(o.level)}`,
    '',
    // Without this the opt plugin creates /opt/containerd (global, shared by every containerd).
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${toml(path.join(root, 'opt'))}`,
    '',
    ...proxy,
  ].join('\n');
}

// ---- containerd's stderr (logrus text format) → our logger ----------------------------------------

export interface ParsedLogLine {
  level: string;
  msg: string;
  fields: Record<string, string>;
}

/** Parses a logfmt line: key=value or key="quoted \"value\""; null if it has no level. */
export function parseLogfmt(line: string): ParsedLogLine | null {
  const fields: Record<string, string> = {};
  const re = /([A-Za-z0-9_.\-]+)=("(?:[^"\\]|\\.)*"|\S*)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) {
    let v = m[2]!;
    if (v.startsWith('"')) {
      try {
        v = JSON.parse(v);
      } catch {
        v = v.slice(1, -1); // Go's %q escapes that JSON lacks (\x..); keep them verbatim
      }
    }
    fields[m[1]!] = v;
  }
  if (!fields.level) return null;
  const { level, msg = '', time: _time, ...rest } = fields;
  return { level, msg, fields: rest };
}

// Warnings containerd 1.6 prints in normal operation (notes §1, §4).
const NOISY_WARNINGS = [
  /devmapper not configured/,
  /could not use snapshotter devmapper/,
  /cleaning up after shim disconnected/,
  /cleanup warnings/,
  /failed to load plugin io\.containerd\.snapshotter\.v1\.(aufs|btrfs|zfs)/,
];

export function mapLevel(parsed: ParsedLogLine): LogLevel {
  switch (parsed.level) {
    case 'trace':
    case 'debug':
      return 'debug';
    // containerd narrates every plugin it loads and every shim it starts at info level; at our
    // info level that would drown the daemon's own lines, so only its start/serve lines stay info.
    case 'info':
      return /containerd successfully booted|serving\.\.\.|starting containerd/.test(parsed.msg) ? 'info' : 'debug';
    case 'warning':
    case 'warn': {
      const text = `${parsed.msg} ${parsed.fields.error ?? ''}`;
      return NOISY_WARNINGS.some((re) => re.test(text)) ? 'debug' : 'warn';
    }
    default:
      return 'error'; // error, fatal, panic: containerd's fatal is not ours
  }
}

// ---- process bookkeeping ------------------------------------------------------------------------

function cmdlineOf(pid: number): string[] | null {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    // ENOENT: the process is gone
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    // A zombie (dead, not yet reaped by whoever inherited it) counts as gone.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // ENOENT: the process is gone
    return false;
  }
}

export class ManagedContainerd extends EventEmitter {
  readonly configPath: string;
  readonly address: string;
  readonly pidFile: string;
  /** containerd's state directory (under the exec-root). */
  readonly stateDir: string;
  private readonly log: Logger;
  private readonly binary: string;
  private readonly opts: ManagedContainerdOptions;
  private child: ChildProcess | null = null;
  private adoptedPid: number | null = null;
  private adoptedTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private released = false;
  private backoffMs = RESTART_BACKOFF_MIN_MS;
  private startedAt = 0;
  private readonly recentLines: string[] = [];
  /** Milliseconds from spawn to the first Version answer, for the last start. */
  lastStartMs = 0;
  /**
   * The client whose Version call found containerd ready at the first start, with that answer:
   * handed to the supervisor (takeReadyClient) so it does not dial and ask again.
   */
  private readyClient: { client: InstanceType<ClientModule['SupervisorClient']>; version: { version: string; revision: string } } | null =
    null;
  private handedOff = false;
  /** Whether start() took over a containerd left running by a previous daemon. */
  adopted = false;
  /**
   * Whether the last start() found no state of an earlier containerd of ours (no config file under
   * the exec-root): then no shim of an earlier run can be serving our socket.
   */
  freshState = false;

  constructor(opts: ManagedContainerdOptions) {
    super();
    this.opts = opts;
    this.log = opts.log.child({ module: 'supervisor' });
    this.stateDir = path.join(opts.execRoot, 'containerd');
    this.configPath = path.join(this.stateDir, 'containerd.toml');
    this.address = path.join(this.stateDir, 'containerd.sock');
    this.pidFile = path.join(this.stateDir, 'containerd.pid');
    const binary = opts.binary ?? findOnPath('containerd');
    if (!binary) throw unavailable('containerd not found on PATH');
    this.binary = binary;
  }

  get pid(): number | null {
    return this.child?.pid ?? this.adoptedPid;
  }

  private configText(): string {
    const level = this.opts.logLevel ?? this.opts.log.level;
    return containerdConfig({
      dataRoot: this.opts.dataRoot,
      execRoot: this.opts.execRoot,
      cri: !!this.opts.cri,
      level: level === 'warn' ? 'warning' : level,
      proxySnapshotter: this.opts.proxySnapshotter,
    });
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.released = false;
    // Synchronous up to the spawn on the usual path: the daemon calls this just before it loads
    // its modules, which holds the event loop for ~0.4 s, and an await here would put the spawn
    // after that (measured: containerd started 0.5 s after node instead of 0.2 s).
    fs.mkdirSync(this.stateDir, { recursive: true, mode: 0o711 });
    fs.mkdirSync(path.join(this.opts.dataRoot, 'containerd'), { recursive: true, mode: 0o711 });
    const config = this.configText();
    this.freshState = !fs.existsSync(this.configPath);

    // After `kill -9` of the daemon, the containerd it started keeps running (Node cannot ask the
    // kernel for a parent-death signal). If it still answers on our socket and runs with the same
    // config, we keep it. Containers would survive a containerd restart too (their shims are
    // separate processes), but keeping it means no outage at all: every task, Wait and exit event
    // stays where it was while the new daemon restores its containers (live-restore). The price:
    // its stderr went to the dead daemon, so its log lines are lost until it is next restarted.
    // With a changed config (e.g. log level, CRI) we stop it and start a fresh one.
    const stale = this.findStale();
    if (stale !== null) {
      const sameConfig = fs.existsSync(this.configPath) && fs.readFileSync(this.configPath, 'utf8') === config;
      if (sameConfig && (await this.answers(3000))) {
        this.log.info('reusing running containerd from a previous daemon', { pid: stale });
        this.adopt(stale);
        return;
      }
      this.log.info('stopping stale containerd from a previous daemon', {
        pid: stale,
        reason: sameConfig ? 'not answering' : 'config changed',
      });
      await this.terminate(stale, STOP_TIMEOUT_MS);
    }
    fs.writeFileSync(this.configPath, config, { mode: 0o600 });
    await this.spawnAndWait();
  }

  /** The containerd a previous daemon started with our config, if it is still running. */
  private findStale(): number | null {
    const isOurs = (pid: number) => {
      const cmd = cmdlineOf(pid);
      return !!cmd && isAlive(pid) && path.basename(cmd[0] ?? '') === 'containerd' && cmd.includes(this.configPath);
    };
    try {
      const pid = Number(fs.readFileSync(this.pidFile, 'utf8').trim());
      if (pid > 0 && isOurs(pid)) return pid;
    } catch {
      // no pidfile
    }
    // The pidfile may be gone (exec-root on tmpfs cleaned, …): look for our config on a command line.
    for (const entry of fs.readdirSync('/proc')) {
      const pid = Number(entry);
      if (pid > 0 && pid !== process.pid && isOurs(pid)) return pid;
    }
    return null;
  }

  private adopt(pid: number): void {
    fs.writeFileSync(this.pidFile, `${pid}\n`); // it may have been found by command line only
    this.adopted = true;
    this.adoptedPid = pid;
    this.startedAt = Date.now();
    // Not our child, so no 'exit' event: poll for it instead.
    this.adoptedTimer = setInterval(() => {
      if (isAlive(pid)) return;
      clearInterval(this.adoptedTimer!);
      this.adoptedTimer = null;
      this.adoptedPid = null;
      this.onUnexpectedExit(`containerd (pid ${pid}, adopted) is gone`);
    }, ADOPTED_POLL_MS);
    this.adoptedTimer.unref();
  }

  private async answers(timeoutMs: number): Promise<boolean> {
    if (!fs.existsSync(this.address)) return false;
    const { SupervisorClient } = await clientModule();
    const probe = new SupervisorClient(this.address, { namespace: '' });
    try {
      await probe.version({ deadlineMs: timeoutMs, waitForReady: true });
      return true;
    } catch {
      // no answer before the deadline: not up
      return false;
    } finally {
      probe.close();
    }
  }

  private async spawnAndWait(): Promise<void> {
    const t0 = performance.now();
    // Sync, so that the spawn below happens in the caller's turn (see start()).
    fs.rmSync(this.address, { force: true }); // so "socket exists" means "this containerd listens"
    // Own session (detached): a Ctrl-C meant for the daemon must not reach containerd directly; the
    // daemon decides when containerd stops.
    const child = spawn(this.binary, ['--config', this.configPath], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
      cwd: '/',
      // ENGINE_DISABLE_PIGZ (spec §8): containerd decompresses layers; its own switch does the same.
      env: process.env.ENGINE_DISABLE_PIGZ ? { ...process.env, CONTAINERD_DISABLE_PIGZ: '1' } : process.env,
    });
    this.child = child;
    startupMark('containerd-spawn');
    this.startedAt = Date.now();
    const exited = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => resolve(signal ? `killed by ${signal}` : `exit status ${code}`));
      child.once('error', (err) => resolve(err.message));
    });
    if (child.pid) await fs.promises.writeFile(this.pidFile, `${child.pid}\n`);
    this.forwardLogs(child);
    let ready = false;
    child.once('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      // Before it was ready, the failure is reported by this function's promise instead.
      if (ready && !this.stopping)
        this.onUnexpectedExit(signal ? `containerd killed by ${signal}` : `containerd exited with status ${code}`);
    });

    // Load the client and parse the protos while containerd boots, not after.
    const [{ SupervisorClient }, { loadProtos }] = await Promise.all([clientModule(), import('./protos.ts')]);
    startupMark('containerd-client-loaded');
    loadProtos();
    startupMark('protos-loaded');

    const timeoutMs = this.opts.startTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    let outcome: string | null = null;
    void exited.then((why) => (outcome = why));
    let probe: InstanceType<ClientModule['SupervisorClient']> | null = null;
    try {
      while (Date.now() < deadline) {
        if (outcome !== null) {
          if (this.child === child) this.child = null;
          throw unavailable(`containerd failed to start (${outcome})${this.recentLog()}`);
        }
        // containerd creates its socket only after loading its plugins; until then there is nothing to dial.
        if (fs.existsSync(this.address)) {
          probe ??= new SupervisorClient(this.address, { namespace: '' });
          try {
            const version = await probe.version({ deadlineMs: Math.min(1000, Math.max(1, deadline - Date.now())), waitForReady: true });
            ready = true;
            if (!this.handedOff && !this.readyClient) {
              this.readyClient = { client: probe, version };
              probe = null; // kept open for the supervisor
            }
            this.lastStartMs = performance.now() - t0;
            startupMark('containerd-answers');
            this.log.debug('containerd is up', { pid: child.pid, ms: Math.round(this.lastStartMs) });
            return;
          } catch {
            // not yet
          }
        }
        await sleep(3); // an existsSync is cheap; containerd's socket appears ~60 ms after the spawn
      }
      this.child = null;
      child.kill('SIGKILL');
      throw unavailable(`containerd did not answer on ${this.address} within ${timeoutMs} ms${this.recentLog()}`);
    } finally {
      probe?.close();
    }
  }

  private recentLog(): string {
    return this.recentLines.length ? `; last output:\n${this.recentLines.join('\n')}` : '';
  }

  private forwardLogs(child: ChildProcess): void {
    const rl = readline.createInterface({ input: child.stderr!, crlfDelay: Infinity });
    rl.on('line', (line) => {
      this.recentLines.push(line);
      if (this.recentLines.length > 10) this.recentLines.shift();
      const parsed = parseLogfmt(line);
      if (!parsed) {
        this.log.warn(line); // panics and other raw output
        return;
      }
      const level = mapLevel(parsed);
      if (this.log.enabled(level)) this.log[level](parsed.msg, parsed.fields);
    });
  }

  private onUnexpectedExit(reason: string): void {
    const ranMs = Date.now() - this.startedAt;
    if (ranMs >= STABLE_AFTER_MS) this.backoffMs = RESTART_BACKOFF_MIN_MS;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, RESTART_BACKOFF_MAX_MS);
    this.log.warn('containerd exited unexpectedly, restarting', { reason, ranMs, restartInMs: delay });
    this.emit('exit', reason);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.adopted = false;
      this.spawnAndWait().then(
        () => {
          this.log.info('containerd restarted', { pid: this.child?.pid, ms: Math.round(this.lastStartMs) });
          this.emit('restarted', { pid: this.child?.pid, reason });
        },
        (err) => {
          this.log.error('containerd restart failed', { error: err });
          if (!this.stopping && !this.child) this.onUnexpectedExit(`restart failed: ${err.message}`);
        },
      );
    }, delay);
  }

  /**
   * The connected client of the first start and containerd's Version answer (once; null after, or
   * when the start adopted a running containerd). The caller owns it: close() ends its channel.
   */
  takeReadyClient(): { client: InstanceType<ClientModule['SupervisorClient']>; version: { version: string; revision: string } } | null {
    const ready = this.readyClient;
    this.readyClient = null;
    this.handedOff = true;
    return ready;
  }

  /**
   * Lets go of containerd without stopping it (live-restore shutdown): running containers keep
   * their shims, Wait calls and exit events, and the next daemon adopts it (see start()). The
   * pidfile stays for that.
   */
  release(): void {
    this.released = true;
    this.stopping = true;
    this.takeReadyClient()?.client.close();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.adoptedTimer) clearInterval(this.adoptedTimer);
    this.restartTimer = this.adoptedTimer = null;
    this.child?.unref();
    this.child = null;
    this.adoptedPid = null;
  }

  /** SIGTERM, up to 10 s for a clean exit, then SIGKILL. Containers (shims) keep running. */
  async stop(timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
    if (this.released) return; // let go of on purpose: the next daemon adopts it
    this.stopping = true;
    this.takeReadyClient()?.client.close();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.adoptedTimer) clearInterval(this.adoptedTimer);
    this.restartTimer = this.adoptedTimer = null;
    const child = this.child;
    const pid = child?.pid ?? this.adoptedPid;
    this.adoptedPid = null;
    if (pid) {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          this.log.warn('containerd did not stop in time, killing it', { pid, timeoutMs });
          child.kill('SIGKILL');
        }, timeoutMs);
        await exited;
        clearTimeout(timer);
      } else if (!child) {
        await this.terminate(pid, timeoutMs);
      }
    }
    this.child = null;
    await fs.promises.rm(this.pidFile, { force: true });
  }

  /** Stops a containerd that is not our child (no exit event: poll /proc). */
  private async terminate(pid: number, timeoutMs: number): Promise<void> {
    const signal = (sig: NodeJS.Signals) => {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    };
    signal('SIGTERM');
    const deadline = Date.now() + timeoutMs;
    while (isAlive(pid) && Date.now() < deadline) await sleep(20);
    if (isAlive(pid)) {
      this.log.warn('containerd did not stop in time, killing it', { pid, timeoutMs });
      signal('SIGKILL');
      while (isAlive(pid)) await sleep(20);
    }
  }
}

/** A managed containerd and the promise of its start (settles when it answers, or has failed). */
export interface ManagedStart {
  managed: ManagedContainerd;
  started: Promise<void>;
}

/** Creates and starts the daemon's own containerd; stop `managed` if the start is abandoned. */
export function startManagedContainerd(opts: ManagedContainerdOptions): ManagedStart {
  const managed = new ManagedContainerd(opts);
  const started = managed.start();
  started.catch(() => undefined); // awaited by Supervisor.start; never an unhandled rejection meanwhile
  return { managed, started };
}
