// The SIGKILL harness: a mixed workload (containers created, started, stopped and removed; lines
// appended to a volume through containers; image tags added and removed) runs against a daemon
// that is killed with -9 at a random moment, then started again. Everything the daemon had
// acknowledged before the kill must still be there and readable afterwards; what was in flight may
// have happened or not. Each round counts lost and corrupt objects, failed starts, the time to the
// first /_ping, and shims left for containers the daemon no longer knows.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeLoopFs } from '../helpers/loop-fs.ts';
import { Rng } from './hostile-gen.ts';

const pexec = promisify(execFile);

/**
 * A daemon on `driver`: overlay2 and fuse-overlayfs on the host's filesystem, btrfs on a loop
 * filesystem made at its data root; `release` (after the daemon's cleanup) unmounts and detaches it.
 */
export async function startOnDriver(driver: string): Promise<{ daemon: TestDaemon; release: () => Promise<void> }> {
  if (driver === 'overlay2') return { daemon: await startDaemon(), release: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), 'engine-t-'));
  const fs = driver === 'btrfs' ? await makeLoopFs('btrfs', join(dir, 'data'), 2048) : undefined;
  try {
    const daemon = await startDaemon({ dir, args: ['--storage-driver', driver] });
    return { daemon, release: async () => fs?.release() };
  } catch (err) {
    await fs?.release();
    throw err;
  }
}

/** What the daemon acknowledged about one object; `pending` while a request about it is in flight. */
interface Fact {
  kind: 'container' | 'tag' | 'image';
  exists: boolean;
  running?: boolean;
  pending: boolean;
}

export interface RoundResult {
  round: number;
  acknowledged: number;
  lost: string[];
  corrupt: string[];
  failedStart?: string;
  restartMs: number;
  runningAtKill: number;
  orphanShims: number;
}

export class CrashWorkload {
  private readonly facts = new Map<string, Fact>();
  /** Sequence numbers of lines acknowledged as written to the volume. */
  private readonly lines = new Set<number>();
  private seq = 0;
  private stopped = false;
  acknowledged = 0;
  /** Commits acknowledged (with `commits`). */
  committed = 0;

  /**
   * `commits`: also commit containers to images and remove them (layers made and removed in the
   * storage driver's snapshotter while the daemon may die); off, the random sequence of a seed is
   * the one it always was.
   */
  constructor(
    private readonly d: TestDaemon,
    private readonly rng: Rng,
    private readonly tag: string,
    private readonly opts: { commits?: boolean } = {},
  ) {}

  /** Runs `workers` loops of random operations until stop(); errors from the dying daemon are expected. */
  async run(workers: number): Promise<void> {
    this.stopped = false;
    await Promise.all(Array.from({ length: workers }, () => this.loop()));
  }

  stop(): void {
    this.stopped = true;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.step();
      } catch {
        // The daemon died under this request: its effect is unknown, the fact stays pending.
        if (this.stopped) return;
      }
    }
  }

  private req(method: string, path: string, body?: unknown) {
    return this.d.request(method, path, { ...(body !== undefined ? { body } : {}), timeoutMs: 30_000 });
  }

  private async step(): Promise<void> {
    if (this.opts.commits && this.rng.int(3) === 0) return this.imageStep();
    const r = this.rng.int(10);
    const containers = [...this.facts].filter(([, f]) => f.kind === 'container' && !f.pending);
    const tags = [...this.facts].filter(([, f]) => f.kind === 'tag' && !f.pending);
    if (r < 3 || containers.length === 0) {
      const name = `${this.tag}-c${this.seq++}`;
      const fact: Fact = { kind: 'container', exists: false, pending: true };
      this.facts.set(name, fact);
      const detached = this.rng.int(2) === 0;
      const res = await this.req('POST', `/containers/create?name=${name}`, {
        Image: 'busybox',
        Cmd: ['sleep', '600'],
        Labels: { crash: this.tag, name },
        StopTimeout: 1,
      });
      if (res.status !== 201) throw new Error(`create ${res.status}`);
      this.ack(fact, { exists: true, running: false });
      if (detached) {
        fact.pending = true;
        const s = await this.req('POST', `/containers/${name}/start`);
        if (s.status !== 204) throw new Error(`start ${s.status}`);
        this.ack(fact, { exists: true, running: true });
      }
    } else if (r < 5) {
      const [name, fact] = this.rng.pick(containers);
      if (!fact.exists) return;
      fact.pending = true;
      const res = await this.req('DELETE', `/containers/${name}?force=1`);
      if (res.status !== 204) throw new Error(`remove ${res.status}`);
      this.ack(fact, { exists: false });
    } else if (r < 6) {
      const [name, fact] = this.rng.pick(containers);
      if (!fact.exists || !fact.running) return;
      fact.pending = true;
      const res = await this.req('POST', `/containers/${name}/stop?t=1`);
      if (res.status !== 204 && res.status !== 304) throw new Error(`stop ${res.status}`);
      this.ack(fact, { exists: true, running: false });
    } else if (r < 8) {
      // A line appended to the volume through a container: acknowledged once it exited 0.
      const n = this.seq++;
      const c = await this.req('POST', '/containers/create', {
        Image: 'busybox',
        Cmd: ['sh', '-c', `echo ${n} >> /data/lines`],
        HostConfig: { Binds: [`${this.tag}-vol:/data`], AutoRemove: true },
      });
      if (c.status !== 201) throw new Error(`writer create ${c.status}`);
      const id = (c.json() as { Id: string }).Id;
      const wait = this.req('POST', `/containers/${id}/wait?condition=removed`);
      // If the start fails (the daemon died) nobody awaits the wait: its rejection is expected.
      wait.catch(() => undefined);
      const s = await this.req('POST', `/containers/${id}/start`);
      if (s.status !== 204) throw new Error(`writer start ${s.status}`);
      const w = await wait;
      if (w.status === 200 && (w.json() as { StatusCode: number }).StatusCode === 0) {
        this.lines.add(n);
        this.acknowledged++;
      }
    } else if (r < 9 || tags.length === 0) {
      const name = `${this.tag}-t${this.seq++}`;
      const fact: Fact = { kind: 'tag', exists: false, pending: true };
      this.facts.set(name, fact);
      const res = await this.req('POST', `/images/busybox/tag?repo=crash&tag=${name}`);
      if (res.status !== 201) throw new Error(`tag ${res.status}`);
      this.ack(fact, { exists: true });
    } else {
      const [name, fact] = this.rng.pick(tags);
      if (!fact.exists) return;
      fact.pending = true;
      const res = await this.req('DELETE', `/images/crash:${name}`);
      if (res.status !== 200) throw new Error(`untag ${res.status}`);
      this.ack(fact, { exists: false });
    }
  }

  /** A container committed to a new image, or a committed image removed (its layer with it). */
  private async imageStep(): Promise<void> {
    const containers = [...this.facts].filter(([, f]) => f.kind === 'container' && !f.pending && f.exists);
    const images = [...this.facts].filter(([, f]) => f.kind === 'image' && !f.pending && f.exists);
    if (images.length && (this.rng.int(2) === 0 || !containers.length)) {
      const [name, fact] = this.rng.pick(images);
      fact.pending = true;
      const res = await this.req('DELETE', `/images/crashimg:${name}`);
      if (res.status !== 200) throw new Error(`rmi ${res.status}`);
      this.ack(fact, { exists: false });
      return;
    }
    if (!containers.length) return;
    const [container] = this.rng.pick(containers);
    const name = `${this.tag}-i${this.seq++}`;
    const fact: Fact = { kind: 'image', exists: false, pending: true };
    this.facts.set(name, fact);
    const res = await this.req('POST', `/commit?container=${container}&repo=crashimg&tag=${name}`);
    if (res.status !== 201) throw new Error(`commit ${res.status}`);
    this.ack(fact, { exists: true });
    this.committed++;
  }

  private ack(fact: Fact, state: { exists: boolean; running?: boolean }): void {
    fact.exists = state.exists;
    if (state.running !== undefined) fact.running = state.running;
    else delete fact.running;
    fact.pending = false;
    this.acknowledged++;
  }

  runningCount(): number {
    return [...this.facts.values()].filter((f) => f.kind === 'container' && f.exists && f.running).length;
  }

  /**
   * After the restart: every settled fact must hold, and every object must read back whole. A
   * pending fact takes whatever the daemon says now (the interrupted request may or may not have
   * happened), so later rounds check it from there on.
   */
  async verify(): Promise<{ lost: string[]; corrupt: string[] }> {
    const lost: string[] = [];
    const corrupt: string[] = [];
    for (const [name, fact] of this.facts) {
      const path =
        fact.kind === 'container'
          ? `/containers/${name}/json`
          : fact.kind === 'image'
            ? `/images/crashimg:${name}/json`
            : `/images/crash:${name}/json`;
      const res = await this.req('GET', path);
      let present = res.status === 200;
      if (res.status !== 200 && res.status !== 404) corrupt.push(`${name}: inspect answered ${res.status} ${res.text().slice(0, 120)}`);
      if (present && fact.kind === 'container') {
        try {
          const j = res.json() as { Name: string; Config: { Labels: Record<string, string> }; State: { Status: string } };
          if (j.Name !== `/${name}` || j.Config.Labels.name !== name)
            corrupt.push(`${name}: inspect shows ${j.Name} / ${JSON.stringify(j.Config.Labels)}`);
          if (j.State.Status === 'removing') present = false;
        } catch (err) {
          corrupt.push(`${name}: inspect is not JSON: ${(err as Error).message}`);
        }
      }
      if (present && fact.kind === 'image') {
        const layers = (res.json() as { RootFS?: { Layers?: string[] } }).RootFS?.Layers ?? [];
        if (layers.length !== 2) corrupt.push(`${name}: the committed image has ${layers.length} layers, not busybox's and its own`);
      }
      if (fact.pending) {
        fact.exists = present;
        fact.pending = false;
        delete fact.running;
        continue;
      }
      if (fact.exists && !present) lost.push(`${fact.kind} ${name} (acknowledged, gone)`);
      if (!fact.exists && present) lost.push(`${fact.kind} ${name} (removal acknowledged, back)`);
      // Without live-restore the containers stop with the daemon: none is running any more.
      if (fact.kind === 'container') fact.running = false;
    }
    if (this.lines.size) {
      const c = await this.req('POST', '/containers/create', {
        Image: 'busybox',
        Cmd: ['cat', '/data/lines'],
        HostConfig: { Binds: [`${this.tag}-vol:/data`] },
      });
      if (c.status === 201) {
        const id = (c.json() as { Id: string }).Id;
        await this.req('POST', `/containers/${id}/start`);
        await this.req('POST', `/containers/${id}/wait`);
        const logs = await this.req('GET', `/containers/${id}/logs?stdout=1`);
        const text = demux(logs.body);
        const seen = new Set(text.split('\n').filter(Boolean).map(Number));
        for (const n of this.lines) if (!seen.has(n)) lost.push(`volume line ${n}`);
        await this.req('DELETE', `/containers/${id}?force=1`);
      } else {
        corrupt.push(`could not read the volume back: create answered ${c.status}`);
      }
    }
    // A committed image still runs: its chain of snapshots mounts (the newest one acknowledged).
    const image = [...this.facts].filter(([, f]) => f.kind === 'image' && f.exists).at(-1)?.[0];
    if (image) {
      const c = await this.req('POST', '/containers/create', {
        Image: `crashimg:${image}`,
        Cmd: ['true'],
        HostConfig: { AutoRemove: true },
      });
      const id = c.status === 201 ? (c.json() as { Id: string }).Id : undefined;
      const wait = id ? this.req('POST', `/containers/${id}/wait?condition=removed`) : undefined;
      wait?.catch(() => undefined); // not awaited when the start fails: that failure is the one reported
      const s = id ? await this.req('POST', `/containers/${id}/start`) : undefined;
      const w = s?.status === 204 ? await wait : undefined;
      if (!w || w.status !== 200 || (w.json() as { StatusCode: number }).StatusCode !== 0)
        corrupt.push(
          `crashimg:${image} does not run: create ${c.status} ${c.text().slice(0, 200)}, start ${s?.status} ${s?.text().slice(0, 200)}`,
        );
    }
    const ps = await this.req('GET', '/containers/json?all=1');
    if (ps.status !== 200) corrupt.push(`docker ps -a answered ${ps.status}`);
    return { lost, corrupt };
  }
}

function demux(buf: Buffer): string {
  let out = '';
  for (let o = 0; o + 8 <= buf.length;) {
    const size = buf.readUInt32BE(o + 4);
    out += buf.subarray(o + 8, o + 8 + size).toString('utf8');
    o += 8 + size;
  }
  return out;
}

/** containerd-shim-runc-v2 processes of this daemon's containerd, by container ID. */
export async function shimsOf(execRoot: string): Promise<string[]> {
  const { stdout } = await pexec('ps', ['-eo', 'args']).catch(() => ({ stdout: '' }));
  const ids: string[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.includes('containerd-shim') || !line.includes(`${execRoot}/`)) continue;
    const id = / -id (\S+)/.exec(line)?.[1];
    if (id) ids.push(id);
  }
  return ids;
}

/** Shims whose container the daemon does not list (an orphan keeps a container's resources alive). */
export async function orphanShims(d: TestDaemon): Promise<string[]> {
  const res = await d.request('GET', '/containers/json?all=1');
  const known = new Set(res.status === 200 ? (res.json() as Array<{ Id: string }>).map((c) => c.Id) : []);
  return (await shimsOf(d.execRoot)).filter((id) => !known.has(id));
}

/** One round: run the workload, kill -9 at a random moment, start again, verify. */
export async function crashRound(
  d: TestDaemon,
  w: CrashWorkload,
  rng: Rng,
  round: number,
  opts: { workers: number; maxRunMs: number; minAcks?: number },
): Promise<RoundResult> {
  const ackedBefore = w.acknowledged;
  const running = w.run(opts.workers);
  await new Promise((r) => setTimeout(r, 200 + rng.int(opts.maxRunMs)));
  // On a loaded host the random moment may come before anything was acknowledged: with minAcks,
  // the kill waits (up to 60 s) until the round has done that much.
  for (const deadline = Date.now() + 60_000; w.acknowledged - ackedBefore < (opts.minAcks ?? 0) && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const runningAtKill = w.runningCount();
  await d.kill9();
  w.stop();
  await running;
  const started = Date.now();
  let failedStart: string | undefined;
  try {
    await d.restart();
  } catch (err) {
    failedStart = (err as Error).message.slice(0, 2000);
  }
  const restartMs = Date.now() - started;
  if (failedStart)
    return { round, acknowledged: w.acknowledged, lost: [], corrupt: [], failedStart, restartMs, runningAtKill, orphanShims: 0 };
  const { lost, corrupt } = await w.verify();
  // Shims of containers stopped at start-up take a moment to exit: give them that, not more.
  let orphans = await orphanShims(d);
  for (let i = 0; i < 30 && orphans.length; i++) {
    await new Promise((r) => setTimeout(r, 100));
    orphans = await orphanShims(d);
  }
  return { round, acknowledged: w.acknowledged, lost, corrupt, restartMs, runningAtKill, orphanShims: orphans.length };
}
