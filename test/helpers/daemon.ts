// Starts the built engined as a child process on temporary data-root, exec-root, socket and pidfile,
// and gives tests raw HTTP and docker-CLI access to it. Every test daemon has its own containerd.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endShim, findShims } from '../../src/supervisor/shims.ts';
import { ENGINE_CLI, engineEnv, engineTable, missingFromEngine, recordEngineCall, recordFallback, testClient } from './cli-client.ts';
import { forwardDrop } from './forward-policy.ts';
import { removeDaemonNetworking } from './network-teardown.ts';

export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
export const ENGINED = join(REPO_ROOT, 'bin/engined');

export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text(): string;
  json<T = any>(): T;
}

export interface RequestOptions {
  body?: unknown; //  object → JSON; Buffer/string sent as is
  headers?: Record<string, string>;
  socketPath?: string;
  timeoutMs?: number;
}

export function httpOverUnix(socketPath: string, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
  return new Promise((resolvePromise, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      if (Buffer.isBuffer(opts.body)) payload = opts.body;
      else if (typeof opts.body === 'string') payload = Buffer.from(opts.body);
      else {
        payload = Buffer.from(JSON.stringify(opts.body));
        headers['Content-Type'] ??= 'application/json';
      }
      headers['Content-Length'] = String(payload.length);
    }
    const req = httpRequest({ socketPath, method, path, headers, timeout: opts.timeoutMs ?? 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolvePromise({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          text: () => body.toString('utf8'),
          json: () => JSON.parse(body.toString('utf8')),
        });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`request ${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end. `holdStdin` keeps its stdin open (and empty) until it exits: `script`
 * turns an early EOF on its stdin into the terminal's EOF character typed into the session, which a
 * raw-mode program then sees (and echoes) as input.
 */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string | Buffer; timeoutMs?: number; cwd?: string; holdStdin?: boolean } = {},
): Promise<CommandResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    if (opts.holdStdin) child.on('exit', () => child.stdin.end());
    else child.stdin.end(opts.input);
  });
}

export interface DaemonStartOptions {
  /** Extra daemon arguments (the harness already sets data-root, exec-root, -H, pidfile, config-file). */
  args?: string[];
  /** Written as the daemon's config file; when absent the daemon gets a path with no file. */
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Skip the default -H unix socket (the test gives its own -H). */
  noDefaultHost?: boolean;
  /** Reuse an existing directory (restart on the same state). */
  dir?: string;
  waitReady?: boolean;
  /** How long a start (and a restart) waits for the daemon to answer; 30 s unless given. */
  readyTimeoutMs?: number;
  /** Runs the daemon inside this named network namespace (its own links, firewall and /sys/class/net). */
  netns?: string;
}

export class TestDaemon {
  child!: ChildProcess;
  output = '';
  exitCode: number | null = null;
  /** It answered /_ping since its last spawn. */
  private wasReady = false;
  exited!: Promise<number | null>;

  constructor(
    readonly dir: string,
    private readonly opts: DaemonStartOptions,
  ) {}

  get socket(): string {
    return join(this.dir, 'engine.sock');
  }
  get host(): string {
    return `unix://${this.socket}`;
  }
  get dataRoot(): string {
    return join(this.dir, 'data');
  }
  get execRoot(): string {
    return join(this.dir, 'exec');
  }
  get pidfile(): string {
    return join(this.dir, 'engine.pid');
  }
  get configFile(): string {
    return join(this.dir, 'daemon.json');
  }
  get pid(): number {
    return this.child.pid!;
  }

  baseArgs(): string[] {
    return [
      '--data-root',
      this.dataRoot,
      '--exec-root',
      this.execRoot,
      '--pidfile',
      this.pidfile,
      ...(this.opts.config ? ['--config-file', this.configFile] : []),
      ...(this.opts.noDefaultHost ? [] : ['-H', this.host]),
      ...(this.opts.args ?? []),
    ];
  }

  async spawn(): Promise<void> {
    if (this.opts.config) await writeFile(this.configFile, JSON.stringify(this.opts.config, null, 2));
    // Every daemon runs as on a fresh host: forwarding's FORWARD policy DROP (forward-policy.ts).
    await forwardDrop(this.opts.netns);
    this.output = '';
    this.exitCode = null;
    this.wasReady = false;
    // Not `ip netns exec`: its fresh /sys lacks the cgroup mounts runc needs. The daemon enters the
    // namespace and, in a mount namespace of its own, sees the namespace's links in /sys/class/net.
    const sysNet =
      'd=$(mktemp -d) && mount -t sysfs sysfs "$d" && mount --bind "$d/class/net" /sys/class/net && ' +
      'mount --bind "$d/devices/virtual/net" /sys/devices/virtual/net && umount -l "$d" && rmdir "$d" && exec "$0" "$@"';
    const [cmd, args] = this.opts.netns
      ? [
          'nsenter',
          [
            `--net=/run/netns/${this.opts.netns}`,
            'unshare',
            '-m',
            '--propagation',
            'slave',
            'sh',
            '-c',
            sysNet,
            ENGINED,
            ...this.baseArgs(),
          ],
        ]
      : [ENGINED, this.baseArgs()];
    const child = spawn(cmd, args, { env: { ...process.env, ...this.opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout!.on('data', (d) => (this.output += d));
    child.stderr!.on('data', (d) => (this.output += d));
    this.exited = new Promise((res) =>
      child.on('exit', (code, signal) => {
        const exitCode = code ?? (signal ? 128 : null);
        // A daemon that was up and ended on its own (a crash, an uncaught exception): its last
        // words on stderr, since the test then fails with little more than a refused connection.
        if (this.wasReady && !child.killed && signal !== 'SIGKILL' && (code !== 0 || signal))
          process.stderr.write(
            `engined (pid ${child.pid}) ended by itself: code ${code}, signal ${signal}; its last output:\n${this.output.slice(-4000)}\n`,
          );
        // The exit of a child a restart already replaced (a kill -9 not awaited) is not the new one's.
        if (this.child === child) this.exitCode = exitCode;
        res(exitCode);
      }),
    );
  }

  async waitReady(timeoutMs = this.opts.readyTimeoutMs ?? 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exitCode !== null) throw new Error(`daemon exited with ${this.exitCode} before it was ready:\n${this.output}`);
      try {
        const r = await httpOverUnix(this.socket, 'GET', '/_ping', { timeoutMs: 2000 });
        // The unix socket may answer before a later -H tcp:// listener is bound: wait for those too.
        if (r.status === 200 && (await this.tcpListenersUp())) {
          this.wasReady = true;
          return;
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`daemon not ready after ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Whether every `-H tcp://host:port` of the arguments accepts connections. */
  private async tcpListenersUp(): Promise<boolean> {
    const args = this.opts.args ?? [];
    const hosts = args.filter((a, i) => i > 0 && ['-H', '--host'].includes(args[i - 1]!) && a.startsWith('tcp://'));
    for (const h of hosts) {
      const u = new URL(h);
      const up = await new Promise<boolean>((done) => {
        const sock = connect({ host: u.hostname, port: Number(u.port) }, () => {
          sock.destroy();
          done(true);
        });
        sock.on('error', () => done(false));
      });
      if (!up) return false;
    }
    return true;
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
    return httpOverUnix(opts.socketPath ?? this.socket, method, path, opts);
  }

  /**
   * Runs the test client against this daemon: the docker CLI (28.x on PATH), or with
   * ENGINE_TEST_CLI=engine the `engine` CLI on the same arguments and the same environment (its
   * ENGINE_* twins set), except a call engine's command table lacks a command or flag of, which the
   * docker CLI runs and cli-client.ts records (test/e2e/twin/ runs files this way).
   */
  async docker(
    args: string[],
    opts: { env?: NodeJS.ProcessEnv; input?: string | Buffer; timeoutMs?: number } = {},
  ): Promise<CommandResult> {
    const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: this.host, DOCKER_CONFIG: join(this.dir, 'docker-config'), ...opts.env };
    delete env.DOCKER_CONTEXT;
    if (testClient() === 'engine') {
      const missing = missingFromEngine(args, await engineTable());
      if (missing === undefined) {
        recordEngineCall();
        return run(ENGINE_CLI, args, { ...opts, env: engineEnv(env) });
      }
      recordFallback(missing, args);
    }
    return run('docker', args, { ...opts, env });
  }

  /** Always the docker CLI, whichever client the run tests (a test's reference answer). */
  dockerCli(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string | Buffer; timeoutMs?: number } = {}): Promise<CommandResult> {
    const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: this.host, DOCKER_CONFIG: join(this.dir, 'docker-config'), ...opts.env };
    delete env.DOCKER_CONTEXT;
    return run('docker', args, { ...opts, env });
  }

  async waitForOutput(pattern: RegExp, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.output)) {
      if (Date.now() > deadline) throw new Error(`daemon output did not match ${pattern} within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Graceful stop (SIGTERM); resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<number | null> {
    if (this.exitCode !== null) return this.exitCode;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  /** kill -9 of engined alone; its containerd (and containers) keep running. */
  async kill9(): Promise<void> {
    if (this.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Starts engined again on the same directories. */
  async restart(): Promise<void> {
    // A child sent SIGKILL (kill9 not awaited) is waited for: its pidfile and socket go first.
    if (this.child.killed && this.child.exitCode === null && this.child.signalCode === null) await this.exited;
    await this.spawn();
    if (this.opts.waitReady !== false) await this.waitReady();
  }

  /** Stops the daemon, kills any containerd it left (after kill -9), removes the directory. */
  async cleanup(): Promise<void> {
    await this.stop().catch(() => undefined);
    await killStrayContainerd(this.execRoot);
    await killStrayEtcd(this.dataRoot);
    // Shims outlive a containerd killed -9, and their containers with them.
    await killShims(this.execRoot);
    await unmountUnder(this.dir);
    // A daemon killed -9 (or stopped with live-restore) leaves its bridge and firewall chains.
    await removeDaemonNetworking(this.execRoot).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Lazily unmounts whatever a test left mounted below `dir` (deepest first), so rm can proceed. */
export async function unmountUnder(dir: string): Promise<void> {
  const mounts = (await readFile('/proc/mounts', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m === dir || m.startsWith(dir + '/'));
  for (const m of mounts.sort().reverse()) await run('umount', ['-l', m]).catch(() => undefined);
}

/** Ends every shim (and its container) serving the test daemon's containerd. */
export async function killShims(execRoot: string): Promise<void> {
  const address = join(execRoot, 'containerd', 'containerd.sock');
  const quiet = { info() {}, warn() {}, debug() {} };
  for (const shim of await findShims(address)) {
    await endShim(shim, { address, runcRoot: join(execRoot, 'runc'), log: quiet }).catch(() => undefined); // best effort, as the rest of cleanup
  }
}

/** A containerd started for a test daemon is found by its config path under the exec-root. */
export async function killStrayContainerd(execRoot: string): Promise<void> {
  await run('pkill', ['-9', '-f', `containerd --config ${execRoot}/`]).catch(() => undefined);
}

/** The etcd of a cluster manager outlives a daemon killed -9: found by its data-dir, killed by pid. */
export async function killStrayEtcd(dataRoot: string): Promise<void> {
  const { readdir } = await import('node:fs/promises');
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!(pid > 0)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!cmd.includes(`\0--data-dir\0${dataRoot}/`)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

export async function startDaemon(opts: DaemonStartOptions = {}): Promise<TestDaemon> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'engine-t-')));
  const d = new TestDaemon(dir, opts);
  await d.spawn();
  if (opts.waitReady !== false) {
    try {
      await d.waitReady();
    } catch (err) {
      await d.cleanup();
      throw err;
    }
  }
  return d;
}
