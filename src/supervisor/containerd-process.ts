// The containerd the daemon starts itself (no --supervisor address): config file, restart on
// crash, stop, release (live-restore), and adopting one a previous daemon left running. Its parts:
// the child process and its readiness (containerd-launch.ts), its stderr (containerd-log.ts), a
// containerd that is not our child (host-process.ts).

import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger, LogLevel } from '../util/log.ts';
import { unavailable } from '../errors.ts';
import { clientModule, ContainerdLauncher, type ReadyClient } from './containerd-launch.ts';
import { findStaleContainerd, terminateProcess, watchExit } from './host-process.ts';

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

export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | null {
  for (const dir of envPath.split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here (ENOENT) or not executable (EACCES): the next directory of PATH
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

export class ManagedContainerd extends EventEmitter {
  readonly configPath: string;
  readonly address: string;
  readonly pidFile: string;
  /** containerd's state directory (under the exec-root). */
  readonly stateDir: string;
  private readonly log: Logger;
  private readonly opts: ManagedContainerdOptions;
  /** Our child containerd: spawned, awaited, stopped. */
  private readonly launcher: ContainerdLauncher;
  private adoptedPid: number | null = null;
  private adoptedTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private released = false;
  private backoffMs = RESTART_BACKOFF_MIN_MS;
  private startedAt = 0;
  /**
   * The client whose Version call found containerd ready at the first start, with that answer:
   * handed to the supervisor (takeReadyClient) so it does not dial and ask again.
   */
  private readyClient: ReadyClient | null = null;
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
    const { configPath, pidFile, address, log } = this;
    this.launcher = new ContainerdLauncher({ binary, configPath, pidFile, address, log, startTimeoutMs: opts.startTimeoutMs });
  }

  get pid(): number | null {
    return this.launcher.child?.pid ?? this.adoptedPid;
  }

  /** Milliseconds from spawn to the first Version answer, for the last start. */
  get lastStartMs(): number {
    return this.launcher.lastStartMs;
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
    const stale = findStaleContainerd(this.pidFile, this.configPath);
    if (stale !== null) {
      const sameConfig = fs.existsSync(this.configPath) && fs.readFileSync(this.configPath, 'utf8') === config;
      if (sameConfig && (await answers(this.address, 3000))) {
        this.log.info('reusing running containerd from a previous daemon', { pid: stale });
        this.adopt(stale);
        return;
      }
      this.log.info('stopping stale containerd from a previous daemon', {
        pid: stale,
        reason: sameConfig ? 'not answering' : 'config changed',
      });
      await terminateProcess(stale, STOP_TIMEOUT_MS, this.log);
    }
    fs.writeFileSync(this.configPath, config, { mode: 0o600 });
    await this.spawnAndWait();
  }

  private adopt(pid: number): void {
    fs.writeFileSync(this.pidFile, `${pid}\n`); // it may have been found by command line only
    this.adopted = true;
    this.adoptedPid = pid;
    this.startedAt = Date.now();
    this.adoptedTimer = watchExit(pid, ADOPTED_POLL_MS, () => {
      this.adoptedTimer = null;
      this.adoptedPid = null;
      this.onUnexpectedExit(`containerd (pid ${pid}, adopted) is gone`);
    });
  }

  private spawnAndWait(): Promise<void> {
    this.startedAt = Date.now();
    const keep = (ready: ReadyClient): boolean => {
      if (this.handedOff || this.readyClient) return false;
      this.readyClient = ready;
      return true;
    };
    return this.launcher.launch(keep, (reason) => {
      if (!this.stopping) this.onUnexpectedExit(reason);
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
          this.log.info('containerd restarted', { pid: this.launcher.child?.pid, ms: Math.round(this.lastStartMs) });
          this.emit('restarted', { pid: this.launcher.child?.pid, reason });
        },
        (err) => {
          this.log.error('containerd restart failed', { error: err });
          if (!this.stopping && !this.launcher.child) this.onUnexpectedExit(`restart failed: ${err.message}`);
        },
      );
    }, delay);
  }

  /**
   * The connected client of the first start and containerd's Version answer (once; null after, or
   * when the start adopted a running containerd). The caller owns it: close() ends its channel.
   */
  takeReadyClient(): ReadyClient | null {
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
    this.launcher.detach();
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
    const adopted = this.adoptedPid;
    this.adoptedPid = null;
    if (this.launcher.child) await this.launcher.stop(timeoutMs);
    else if (adopted) await terminateProcess(adopted, timeoutMs, this.log);
    await fs.promises.rm(this.pidFile, { force: true });
  }
}

/** Whether a containerd answers on the socket within timeoutMs. */
async function answers(address: string, timeoutMs: number): Promise<boolean> {
  if (!fs.existsSync(address)) return false;
  const { SupervisorClient } = await clientModule();
  const probe = new SupervisorClient(address, { namespace: '' });
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
