// Our daemon under test: the built bin/engined on a temp data-root/exec-root/socket, started the
// way the e2e harness does (TestDaemon), with its own containerd.

import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { TestDaemon } from '../../test/helpers/daemon.ts';
import { loadBusybox } from '../../test/helpers/images.ts';
import { childNamed, cpuMs, pidFromFile, teardownDir } from '../lib/proc.ts';
import { importBusybox, startupMarks, waitForPing, type DaemonUnderTest, type StartupMarks } from './daemon.ts';

export class Engined implements DaemonUnderTest {
  readonly kind = 'engined';
  private stopped: Promise<void> | null = null;

  /** `release`: undoes what `prepare` set up for the data root (a loop filesystem), after the teardown. */
  private constructor(
    readonly td: TestDaemon,
    private readonly release?: () => Promise<void>,
  ) {}

  get dir(): string {
    return this.td.dir;
  }
  get socket(): string {
    return this.td.socket;
  }
  get host(): string {
    return this.td.host;
  }
  get pid(): number {
    return this.td.pid;
  }
  get execRoot(): string {
    return this.td.execRoot;
  }
  get containerdSocket(): string {
    return join(this.td.execRoot, 'containerd', 'containerd.sock');
  }

  containerdPid(): number | null {
    return pidFromFile(join(this.td.execRoot, 'containerd', 'containerd.pid')) ?? childNamed(this.pid, 'containerd');
  }

  /**
   * Spawns engined on a fresh temp dir; `readyMs` runs from spawn to the first 200 from /_ping.
   * `prepare` readies the data root `<dir>/data` first (e.g. mounts a filesystem there) and returns its undo.
   */
  static async start(
    env?: NodeJS.ProcessEnv,
    args?: string[],
    prepare?: (dataRoot: string) => Promise<() => Promise<void>>,
  ): Promise<{ daemon: Engined; readyMs: number; marks: StartupMarks }> {
    const dir = await mkdtemp('/tmp/engine-b-');
    const td = new TestDaemon(dir, { waitReady: false, ...(env ? { env } : {}), ...(args ? { args } : {}) });
    const release = prepare ? await prepare(td.dataRoot) : undefined;
    const daemon = new Engined(td, release);
    const spawnEpoch = Date.now();
    const t0 = performance.now();
    try {
      await td.spawn();
      await waitForPing(td.socket, () => (td.exitCode !== null ? `engined exited with ${td.exitCode}:\n${td.output.slice(-4000)}` : null));
    } catch (err) {
      await daemon.stop();
      throw err;
    }
    const readyMs = performance.now() - t0;
    const marks = {
      ...startupMarks(td.output, spawnEpoch, readyMs),
      daemonCpu: cpuMs(daemon.pid),
      containerdCpu: cpuMs(daemon.containerdPid()),
    };
    return { daemon, readyMs, marks };
  }

  /** The busybox rootfs through `docker import`, as dockerd gets it: any storage driver. */
  async importBusybox(): Promise<void> {
    await importBusybox(this.socket, this.dir);
  }

  /** Puts the busybox fixture image in (straight into containerd's overlayfs snapshotter, as the e2e tests do). */
  async loadBusybox(): Promise<void> {
    await loadBusybox(this.td);
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      await this.td.stop('SIGTERM', 20_000).catch(() => undefined);
      await teardownDir(this.td.dir);
      await this.release?.();
    })();
    return this.stopped;
  }
}
