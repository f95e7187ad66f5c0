// Debian's dockerd (docker.io 20.10) for comparison: its own data-root, exec-root, socket, pidfile
// and config file in a temp dir, no bridge and no iptables, and the containerd it starts itself.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../../test/helpers/daemon.ts';
import { childNamed, cpuMs, teardownDir } from '../lib/proc.ts';
import { importBusybox, OutputKeeper, startupMarks, waitForPing, type DaemonUnderTest, type StartupMarks } from './daemon.ts';

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Makes sure dockerd is installed (Debian's docker.io, without recommends so apparmor and
 * cgroupfs-mount stay out); returns why it is unavailable, or null when it is there.
 */
export async function ensureDockerd(log: (s: string) => void): Promise<string | null> {
  if (onPath('dockerd')) return null;
  log('dockerd not found: apt-get install -y --no-install-recommends docker.io …');
  const r = await run('apt-get', ['install', '-y', '--no-install-recommends', 'docker.io'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeoutMs: 600_000,
  });
  if (r.code !== 0 || !onPath('dockerd')) return `docker.io could not be installed: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`;
  return null;
}

export class Dockerd implements DaemonUnderTest {
  readonly kind = 'dockerd';
  readonly output = new OutputKeeper();
  exitCode: number | null = null;
  private child!: ChildProcess;
  private exited!: Promise<void>;
  private stopped: Promise<void> | null = null;

  /** `bridge`: an existing bridge for dockerd's default network, iptables on; otherwise no bridge. */
  private constructor(
    readonly dir: string,
    private readonly bridge?: string,
    private readonly extraArgs: string[] = [],
    private readonly release?: () => Promise<void>,
  ) {}

  get socket(): string {
    return join(this.dir, 'docker.sock');
  }
  get pid(): number {
    return this.child.pid!;
  }
  get host(): string {
    return `unix://${this.socket}`;
  }

  private ctrdPid: number | null = null;

  containerdPid(): number | null {
    this.ctrdPid ??= childNamed(this.pid, 'containerd');
    return this.ctrdPid;
  }

  private spawn(): void {
    const args = [
      '--data-root',
      join(this.dir, 'data'),
      '--exec-root',
      join(this.dir, 'exec'),
      '-H',
      `unix://${this.socket}`,
      '--pidfile',
      join(this.dir, 'docker.pid'),
      '--config-file',
      join(this.dir, 'daemon.json'),
      ...(this.bridge ? ['--bridge', this.bridge] : ['--bridge', 'none', '--iptables=false']),
      ...this.extraArgs,
    ];
    this.child = spawn('dockerd', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d) => this.output.push(d));
    this.child.stderr!.on('data', (d) => this.output.push(d));
    this.exited = new Promise((res) =>
      this.child.on('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : -1);
        res();
      }),
    );
  }

  /** `args`: more dockerd arguments; `prepare`: readies `<dir>/data` first and returns its undo (run after the teardown). */
  static async start(
    opts: { bridge?: string; args?: string[]; prepare?: (dataRoot: string) => Promise<() => Promise<void>> } = {},
  ): Promise<{ daemon: Dockerd; readyMs: number; marks: StartupMarks }> {
    const dir = await mkdtemp('/tmp/dockerd-b-');
    await writeFile(join(dir, 'daemon.json'), '{}\n');
    const release = opts.prepare ? await opts.prepare(join(dir, 'data')) : undefined;
    const daemon = new Dockerd(dir, opts.bridge, opts.args, release);
    const spawnEpoch = Date.now();
    const t0 = performance.now();
    try {
      daemon.spawn();
      await waitForPing(daemon.socket, () =>
        daemon.exitCode !== null ? `dockerd exited with ${daemon.exitCode}:\n${daemon.output}` : null,
      );
    } catch (err) {
      await daemon.stop();
      throw err;
    }
    const readyMs = performance.now() - t0;
    const marks = {
      ...startupMarks(daemon.output.head, spawnEpoch, readyMs),
      daemonCpu: cpuMs(daemon.pid),
      containerdCpu: cpuMs(daemon.containerdPid()),
    };
    return { daemon, readyMs, marks };
  }

  /** The same busybox rootfs as our fixture, through `docker import`, tagged busybox:latest. */
  async loadBusybox(): Promise<void> {
    await importBusybox(this.socket, this.dir);
  }

  /** kill -9 (the failure benchmarks): its containerd and containers stay until `stop`. */
  async kill(): Promise<void> {
    if (this.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      if (this.child && this.exitCode === null) {
        this.child.kill('SIGTERM');
        const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
        await this.exited;
        clearTimeout(timer);
      }
      await teardownDir(this.dir);
      await this.release?.();
    })();
    return this.stopped;
  }
}

export async function dockerdVersion(): Promise<string> {
  const r = await run('dockerd', ['--version']);
  return r.stdout.trim();
}
