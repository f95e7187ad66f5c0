// The daemon's own containerd process: spawned in a session of its own with its config, its pid
// written to the pidfile, its stderr forwarded to the logger, and awaited until a Version call
// answers on its socket (the client that got the answer may be kept, so that the supervisor does
// not dial and ask again); stopped with SIGTERM, then SIGKILL after a timeout.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { Logger } from '../util/log.ts';
import { unavailable } from '../errors.ts';
import { startupMark } from '../util/startup-trace.ts';
import { ContainerdStderr } from './containerd-log.ts';
// The gRPC client (grpc-js, protobufjs: ~75 ms to load) is imported only once containerd has been
// spawned, so that the daemon can start containerd before it loads the rest of itself.
type ClientModule = typeof import('./client.ts');
export const clientModule = (): Promise<ClientModule> => import('./client.ts');

/** A client whose Version call found containerd ready, with that answer. */
export interface ReadyClient {
  client: InstanceType<ClientModule['SupervisorClient']>;
  version: { version: string; revision: string };
}

export interface LaunchOptions {
  binary: string;
  configPath: string;
  pidFile: string;
  /** containerd's socket. */
  address: string;
  log: Logger;
  /** How long to wait for the first Version answer. */
  startTimeoutMs?: number | undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ContainerdLauncher {
  /** The running containerd (null before a launch, and after its exit or stop). */
  child: ChildProcess | null = null;
  /** Milliseconds from spawn to the first Version answer, for the last launch. */
  lastStartMs = 0;
  private readonly stderr: ContainerdStderr;

  constructor(private readonly o: LaunchOptions) {
    this.stderr = new ContainerdStderr(o.log);
  }

  /**
   * Spawns containerd (synchronously, in the caller's turn) and waits until it answers. After
   * that, an exit calls onExit with its reason. The answering client is offered to keep, which
   * returns whether it took it (else it is closed).
   */
  async launch(keep: (ready: ReadyClient) => boolean, onExit: (reason: string) => void): Promise<void> {
    const t0 = performance.now();
    // Sync, so that the spawn below happens in the caller's turn (see ManagedContainerd.start()).
    fs.rmSync(this.o.address, { force: true }); // so "socket exists" means "this containerd listens"
    // Own session (detached): a Ctrl-C meant for the daemon must not reach containerd directly; the
    // daemon decides when containerd stops.
    const child = spawn(this.o.binary, ['--config', this.o.configPath], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
      cwd: '/',
      env: containerdEnv(process.env),
    });
    this.child = child;
    startupMark('containerd-spawn');
    const exited = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) => resolve(signal ? `killed by ${signal}` : `exit status ${code}`));
      child.once('error', (err) => resolve(err.message));
    });
    if (child.pid) await fs.promises.writeFile(this.o.pidFile, `${child.pid}\n`);
    this.stderr.forward(child);
    let ready = false;
    child.once('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      // Before it was ready, the failure is reported by this function's promise instead.
      if (ready) onExit(signal ? `containerd killed by ${signal}` : `containerd exited with status ${code}`);
    });

    // Load the client and parse the protos while containerd boots, not after.
    const [{ SupervisorClient }, { loadProtos }] = await Promise.all([clientModule(), import('./protos.ts')]);
    startupMark('containerd-client-loaded');
    loadProtos();
    startupMark('protos-loaded');

    const timeoutMs = this.o.startTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    let outcome: string | null = null;
    void exited.then((why) => (outcome = why));
    let probe: InstanceType<ClientModule['SupervisorClient']> | null = null;
    try {
      while (Date.now() < deadline) {
        if (outcome !== null) {
          if (this.child === child) this.child = null;
          throw unavailable(`containerd failed to start (${outcome})${this.stderr.recent()}`);
        }
        // containerd creates its socket only after loading its plugins; until then there is nothing to dial.
        if (fs.existsSync(this.o.address)) {
          probe ??= new SupervisorClient(this.o.address, { namespace: '' });
          try {
            const version = await probe.version({ deadlineMs: Math.min(1000, Math.max(1, deadline - Date.now())), waitForReady: true });
            ready = true;
            if (keep({ client: probe, version })) probe = null; // kept open for the supervisor
            this.lastStartMs = performance.now() - t0;
            startupMark('containerd-answers');
            this.o.log.debug('containerd is up', { pid: child.pid, ms: Math.round(this.lastStartMs) });
            return;
          } catch {
            // no answer yet (UNAVAILABLE, or this probe's deadline) while containerd boots: poll again
          }
        }
        await sleep(3); // an existsSync is cheap; containerd's socket appears ~60 ms after the spawn
      }
      this.child = null;
      child.kill('SIGKILL');
      throw unavailable(`containerd did not answer on ${this.o.address} within ${timeoutMs} ms${this.stderr.recent()}`);
    } finally {
      probe?.close();
    }
  }

  /** SIGTERM to the running containerd, SIGKILL after timeoutMs; resolves once it has exited. */
  async stop(timeoutMs: number): Promise<void> {
    const child = this.child;
    if (child?.pid && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        this.o.log.warn('containerd did not stop in time, killing it', { pid: child.pid, timeoutMs });
        child.kill('SIGKILL');
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
    }
    this.child = null;
  }

  /** Lets go of the running containerd: it keeps running after the daemon exits. */
  detach(): void {
    this.child?.unref();
    this.child = null;
  }
}

/**
 * containerd's environment: the daemon's, with ENGINE_DISABLE_PIGZ (spec §8: containerd decompresses
 * layers; its own switch does the same) translated, and GOGC. Our containerd also serves the content
 * store, snapshots, leases and garbage collection, which dockerd keeps to itself, and its Go heap
 * grows with that work: at GOGC 50 (collect when the heap has grown half its live size, not all of
 * it) it held 46.5 instead of 50.9 MiB after every benchmark group, with no change in its CPU per
 * container lifecycle or removal that the benchmark could see. ENGINE_CONTAINERD_GOGC, else a GOGC
 * the daemon was given, overrides it.
 */
export function containerdEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const asked = env.ENGINE_CONTAINERD_GOGC;
  const gogc = asked && /^\d+$/.test(asked) ? asked : (env.GOGC ?? CONTAINERD_GOGC);
  return { ...env, ...(env.ENGINE_DISABLE_PIGZ ? { CONTAINERD_DISABLE_PIGZ: '1' } : {}), GOGC: gogc };
}

const CONTAINERD_GOGC = '50';
