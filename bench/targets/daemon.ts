// What every scenario needs from a daemon under test, whichever it is.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildBusyboxLayer } from '../../test/fixtures/busybox-image.ts';
import { httpOverUnix, run } from '../../test/helpers/daemon.ts';

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The busybox rootfs of the test fixture through `docker import` (any daemon, any storage driver), tagged busybox:latest. */
export async function importBusybox(socket: string, dir: string): Promise<void> {
  const { tar } = await buildBusyboxLayer();
  const tarPath = join(dir, 'busybox.tar');
  await writeFile(tarPath, tar);
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: join(dir, 'docker-config') };
  delete env.DOCKER_CONTEXT;
  const r = await run('docker', ['import', '--change', `ENV ${PATH_ENV}`, '--change', 'CMD ["sh"]', tarPath, 'busybox:latest'], { env });
  if (r.code !== 0) throw new Error(`docker import failed: ${r.stderr}`);
}

export interface DaemonUnderTest {
  kind: 'engined' | 'dockerd';
  dir: string;
  socket: string;
  pid: number;
  /** The containerd this daemon started for itself. */
  containerdPid(): number | null;
  /** Graceful stop, then kill leftovers, unmount and remove the temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

/** Polls /_ping every `everyMs` until it answers 200; throws if `exited()` or on timeout. */
export async function waitForPing(socket: string, exited: () => string | null, timeoutMs = 60_000, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gone = exited();
    if (gone !== null) throw new Error(gone);
    try {
      const r = await httpOverUnix(socket, 'GET', '/_ping', { timeoutMs: 2000 });
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no /_ping answer on ${socket} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Keeps a child's first `headMax` characters (start-up lines) and its last `tailMax` (errors). */
export class OutputKeeper {
  head = '';
  private tail = '';
  constructor(
    private readonly headMax = 256_000,
    private readonly tailMax = 8000,
  ) {}
  push(chunk: Buffer | string): void {
    const s = String(chunk);
    if (this.head.length < this.headMax) this.head += s.slice(0, this.headMax - this.head.length);
    this.tail += s;
    if (this.tail.length > this.tailMax * 2) this.tail = this.tail.slice(-this.tailMax);
  }
  toString(): string {
    return this.tail.slice(-this.tailMax);
  }
}

/** Start-up milestones both daemons log (logrus text format), as ms after the spawn. */
export interface StartupMarks {
  /** Process running and its code loaded: "Starting up". */
  startingUp?: number;
  /** Its containerd answered: containerd's own "successfully booted" line, relayed. */
  containerdBooted?: number;
  /** "Daemon has completed initialization". */
  initialized?: number;
  /** The first 200 from /_ping (what readyMs measures). */
  ping: number;
  /** CPU ms the daemon and its containerd had used by then (load-independent, unlike the wall times). */
  daemonCpu?: number;
  containerdCpu?: number;
}

export function startupMarks(output: string, spawnEpochMs: number, readyMs: number): StartupMarks {
  const at = (msg: RegExp): number | undefined => {
    for (const line of output.split('\n')) {
      if (!msg.test(line)) continue;
      const m = /time="(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)"/.exec(line);
      if (!m) return undefined;
      const frac = (m[2] ?? '.0').slice(0, 4).padEnd(4, '0'); // ms precision is plenty
      return Date.parse(`${m[1]}${frac}${m[3]}`) - spawnEpochMs;
    }
    return undefined;
  };
  return {
    startingUp: at(/msg="Starting up"/),
    containerdBooted: at(/msg="containerd successfully booted/),
    initialized: at(/msg="Daemon has completed initialization"/),
    ping: readyMs,
  };
}
