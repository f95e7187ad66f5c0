// `npm run bench`: engined against Debian's dockerd 20.10 and the containerd / runc floors, in one
// run, printed side by side (medians, p90, ratios) and written to bench/results/latest.md.
//
//   bin/node dist/bench/run.js [--quick] [--only startup,memory,lifecycle,parallel,list,remove,logs,exec,cp,commit,pull,ping,network,client,soak] [--no-dockerd] [--soak-count N]
//
// `soak` (10 000 sequential lifecycles by default) runs only when named in --only.
//
// Every daemon runs on its own temp dir with its own containerd; all are stopped, their leftovers
// killed and unmounted, and the dirs removed at the end, also after a failure or Ctrl-C.

import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api } from './lib/http.ts';
import { cpuMeter, loadAverage, rssMiB, teardownDir } from './lib/proc.ts';
import { interleave, median, summarize, type Summary } from './lib/stats.ts';
import { num, ratio, table } from './lib/table.ts';
import { apiLifecycle, NETWORK_NONE, type ApiPhases } from './scenarios/api-lifecycle.ts';
import { commitOnce, type CommitRun } from './scenarios/commit.ts';
import { clientCli, clientSection, type ClientResults } from './scenarios/client-cli.ts';
import { PULL_LAYERS, pullOnce, startPullRegistry, type PullRun } from './scenarios/pull.ts';
import { cpOnce, makeCpTree, type CpRun } from './scenarios/cp.ts';
import { captureEnginedSpec } from './scenarios/engined-spec.ts';
import { execTrue, sleeper } from './scenarios/exec.ts';
import { ContainerdFloor, type FloorPhases } from './scenarios/floor.ts';
import { listScenario, type ListResult } from './scenarios/list.ts';
import { removeOnce, removeSection, type RemoveRun } from './scenarios/remove.ts';
import { soak, soakSection, type SoakResult } from './scenarios/soak.ts';
import { networkCases, startDockerdWithBridge, startEnginedWithBridge } from './scenarios/network.ts';
import { LOG_BYTES, logsOnce, type LogsRun } from './scenarios/logs.ts';
import { parallelWall } from './scenarios/parallel.ts';
import { curlTime, PING_PATHS } from './scenarios/ping.ts';
import { RuncRun } from './scenarios/runc-run.ts';
import { spawnTrue } from './scenarios/spawn-cost.ts';
import { startupSamples } from './scenarios/startup.ts';
import type { DaemonUnderTest, StartupMarks } from './targets/daemon.ts';
import { Dockerd, dockerdVersion, ensureDockerd } from './targets/dockerd.ts';
import { Engined } from './targets/engined.ts';

const SCENARIOS = [
  'startup',
  'memory',
  'lifecycle',
  'parallel',
  'list',
  'remove',
  'logs',
  'exec',
  'cp',
  'commit',
  'pull',
  'ping',
  'network',
  'client',
  'soak',
] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Options {
  quick: boolean;
  only: Set<Scenario>;
  dockerd: boolean;
  out: string;
  soakCount: number;
}

const BENCH_DIR = dirname(fileURLToPath(import.meta.url)).replace(/\/dist\/bench$/, '/bench');

function parseOptions(argv: string[]): Options {
  const o: Options = {
    quick: false,
    only: new Set(SCENARIOS.filter((s) => s !== 'soak')),
    dockerd: true,
    out: join(BENCH_DIR, 'results', 'latest.md'),
    soakCount: 10_000,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') o.quick = true;
    else if (a === '--no-dockerd') o.dockerd = false;
    else if (a === '--only' || a.startsWith('--only=')) {
      const list = a.includes('=') ? a.slice(a.indexOf('=') + 1) : (argv[++i] ?? '');
      const names = list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const n of names)
        if (!SCENARIOS.includes(n as Scenario)) throw new Error(`unknown scenario ${n} (have: ${SCENARIOS.join(', ')})`);
      o.only = new Set(names as Scenario[]);
    } else if (a === '--out') o.out = argv[++i] ?? o.out;
    else if (a === '--soak-count') {
      o.soakCount = Number(argv[++i]);
      if (!Number.isInteger(o.soakCount) || o.soakCount < 10) throw new Error('--soak-count needs a whole number ≥ 10');
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(
        `usage: npm run bench -- [--quick] [--only ${SCENARIOS.join(',')}] [--no-dockerd] [--out file.md] [--soak-count N]\n`,
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const progress = (s: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

// ---- the daemons alive right now, for the teardown on failure / signal ------------------------

const alive = new Set<DaemonUnderTest>();
const workDirs = new Set<string>();
let tornDown: Promise<void> | null = null;

function teardownAll(): Promise<void> {
  tornDown ??= (async () => {
    for (const d of [...alive]) await d.stop().catch((e) => progress(`stopping ${d.kind}: ${(e as Error).message}`));
    for (const dir of workDirs) await teardownDir(dir).catch(() => undefined);
  })();
  return tornDown;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    progress(`${sig}: cleaning up`);
    void teardownAll().finally(() => process.exit(130));
  });
}

// ---- results ----------------------------------------------------------------------------------

interface MemoryReading {
  when: string;
  engined?: { daemon: number; containerd: number };
  dockerd?: { daemon: number; containerd: number };
}

interface Results {
  startup: { engined?: StartupMarks[]; dockerd?: StartupMarks[] };
  memory: MemoryReading[];
  lifecycle: {
    enginedNone?: ApiPhases[];
    enginedDefault?: ApiPhases[];
    dockerdNone?: ApiPhases[];
    floor?: FloorPhases[];
    floorEnginedSpec?: FloorPhases[];
    runc?: number[];
    spawn?: number[];
  };
  parallel: { engined?: number[]; dockerd?: number[] };
  list: { engined?: ListResult; dockerd?: ListResult };
  remove: { engined?: RemoveRun[]; dockerd?: RemoveRun[] };
  soak?: SoakResult;
  logs: { engined?: LogsRun[]; dockerd?: LogsRun[] };
  exec: { engined?: number[]; dockerd?: number[] };
  cp: { engined?: CpRun[]; dockerd?: CpRun[] };
  commit: { engined?: CommitRun[]; service?: CommitRun[]; dockerd?: CommitRun[] };
  pull: { engined?: PullRun[]; staged?: PullRun[]; dockerd?: PullRun[]; mb?: number };
  ping: Record<string, number[]>;
  /** Keyed `${kind}{Api,Cli}{None,Bridge}` (see scenarios/network.ts). */
  network: Record<string, number[]>;
  /** The engine CLI vs the docker CLI, both at engined. */
  client?: ClientResults;
  notes: string[];
}

const sum = (xs: number[] | undefined): Summary | undefined => (xs && xs.length ? summarize(xs) : undefined);
const col = <T>(xs: T[] | undefined, f: (x: T) => number) => (xs ? xs.map(f) : undefined);

async function settleAndRead(when: string, engined: Engined | null, dockerd: Dockerd | null): Promise<MemoryReading> {
  await new Promise((r) => setTimeout(r, 3000)); // idle: let timers and GC settle
  const r: MemoryReading = { when };
  if (engined) r.engined = { daemon: rssMiB(engined.pid), containerd: rssMiB(engined.containerdPid()) };
  if (dockerd) r.dockerd = { daemon: rssMiB(dockerd.pid), containerd: rssMiB(dockerd.containerdPid()) };
  return r;
}

// ---- the run ----------------------------------------------------------------------------------

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const want = (s: Scenario) => opts.only.has(s);
  const it = opts.quick
    ? {
        startups: 2,
        n: 5,
        warmups: 1,
        parallelRuns: 1,
        listContainers: 500,
        listScaleTo: 0,
        listN: 5,
        listWarmups: 1,
        logsRuns: 1,
        execN: 20,
        execWarmups: 3,
        cpRuns: 2,
        commitN: 5,
        commitWarmups: 1,
        pullN: 3,
        pullWarmups: 1,
        netN: 5,
        netWarmups: 1,
        clientN: 5,
        clientWarmups: 1,
      }
    : {
        startups: 5,
        n: 20,
        warmups: 3,
        parallelRuns: 3,
        listContainers: 500,
        listScaleTo: 2000,
        listN: 20,
        listWarmups: 3,
        logsRuns: 2,
        execN: 20,
        execWarmups: 3,
        cpRuns: 5,
        commitN: 10,
        commitWarmups: 2,
        pullN: 7,
        pullWarmups: 1,
        netN: 20,
        netWarmups: 3,
        clientN: 20,
        clientWarmups: 3,
      };
  const res: Results = {
    startup: {},
    memory: [],
    lifecycle: {},
    parallel: {},
    list: {},
    remove: {},
    logs: {},
    exec: {},
    cp: {},
    commit: {},
    pull: {},
    ping: {},
    network: {},
    notes: [],
  };
  const started = new Date();
  const loadBefore = loadAverage();

  let useDockerd = opts.dockerd;
  if (useDockerd) {
    const why = await ensureDockerd(progress);
    if (why) {
      res.notes.push(`dockerd skipped: ${why}`);
      useDockerd = false;
    }
  } else res.notes.push('dockerd skipped (--no-dockerd)');
  const versions: string[] = [];

  const startTracked = async <D extends DaemonUnderTest>(start: () => Promise<{ daemon: D; readyMs: number }>) => {
    const r = await start();
    alive.add(r.daemon);
    return r;
  };

  try {
    if (want('startup')) {
      progress(`start-up: ${it.startups}× engined${useDockerd ? ' and dockerd, taking turns' : ''}`);
      const r = await interleave(it.startups, 0, {
        engined: () => startupSamples(1, () => Engined.start(), alive),
        ...(useDockerd ? { dockerd: () => startupSamples(1, () => Dockerd.start(), alive) } : {}),
      } as Record<string, () => Promise<StartupMarks[]>>);
      res.startup = { engined: r.engined!.flat(), ...(r.dockerd ? { dockerd: r.dockerd.flat() } : {}) };
    }

    if ([...opts.only].some((s) => s !== 'startup' && s !== 'network')) {
      progress('starting the daemons under test');
      const engined = (await startTracked(() => Engined.start())).daemon;
      const dockerd = useDockerd ? (await startTracked(() => Dockerd.start())).daemon : null;
      const ev = (await api(engined.socket, 'GET', '/version')).json();
      versions.push(
        `engined ${ev.Version} (API ${ev.ApiVersion}), containerd ${ev.Components?.find((c: any) => c.Name === 'containerd')?.Version ?? '?'}`,
      );
      if (dockerd) {
        const dv = (await api(dockerd.socket, 'GET', '/version')).json();
        versions.push(
          `${await dockerdVersion()} (API ${dv.ApiVersion}), containerd ${dv.Components?.find((c: any) => c.Name === 'containerd')?.Version ?? '?'}`,
        );
      }
      if (want('memory')) res.memory.push(await settleAndRead('after start-up', engined, dockerd));
      await engined.loadBusybox();
      if (dockerd) await dockerd.loadBusybox();

      if (want('lifecycle')) {
        const work = await mkdtemp('/tmp/bench-w-');
        workDirs.add(work);
        const floor = await ContainerdFloor.open(engined.containerdSocket, join(work, 'floor'));
        const runc = await RuncRun.prepare(join(work, 'runc'));
        const enginedSpec = await captureEnginedSpec(engined, join(work, 'engined-spec'));
        progress(
          `single lifecycle, taking turns: engined none/default${dockerd ? ', dockerd none' : ''}, containerd floor (2 specs), runc run (${it.warmups} warm-ups + ${it.n} each)`,
        );
        try {
          const r = await interleave(it.n, it.warmups, {
            enginedNone: () => apiLifecycle(engined, NETWORK_NONE),
            enginedDefault: () => apiLifecycle(engined, {}),
            ...(dockerd ? { dockerdNone: () => apiLifecycle(dockerd, NETWORK_NONE) } : {}),
            floor: () => floor.once(),
            floorEnginedSpec: () => floor.once(enginedSpec),
            runc: () => runc.once(),
            spawn: () => spawnTrue(),
          } as Record<string, () => Promise<unknown>>);
          res.lifecycle = {
            enginedNone: r.enginedNone as ApiPhases[],
            enginedDefault: r.enginedDefault as ApiPhases[],
            ...(r.dockerdNone ? { dockerdNone: r.dockerdNone as ApiPhases[] } : {}),
            floor: r.floor as FloorPhases[],
            floorEnginedSpec: r.floorEnginedSpec as FloorPhases[],
            runc: r.runc as number[],
            spawn: r.spawn as number[],
          };
        } finally {
          floor.close();
        }
      }

      if (want('parallel')) {
        progress(`50 containers, 8 at a time: ${it.parallelRuns}× engined${dockerd ? ' and dockerd, taking turns' : ''}`);
        const r = await interleave(it.parallelRuns, 0, {
          engined: () => parallelWall(engined),
          ...(dockerd ? { dockerd: () => parallelWall(dockerd) } : {}),
        } as Record<string, () => Promise<number>>);
        res.parallel = { engined: r.engined, ...(r.dockerd ? { dockerd: r.dockerd } : {}) };
      }

      if (want('memory') && (want('lifecycle') || want('parallel')))
        res.memory.push(await settleAndRead('after the lifecycle runs', engined, dockerd));

      if (want('list')) {
        progress(`list: ${it.listContainers} created containers, engined`);
        res.list.engined = await listScenario(engined, it.listContainers, it.listN, it.listWarmups, it.listScaleTo);
        if (dockerd) {
          progress(`list: ${it.listContainers} created containers, dockerd`);
          res.list.dockerd = await listScenario(dockerd, it.listContainers, it.listN, it.listWarmups, it.listScaleTo);
        }
      }

      if (want('remove')) {
        // Each count on each daemon in turn (engined first for the small count, dockerd for the large).
        const removeCounts = opts.quick ? [200, 800] : [500, 2000];
        for (const [k, count] of removeCounts.entries()) {
          const order = dockerd && k % 2 ? [dockerd, engined] : dockerd ? [engined, dockerd] : [engined];
          for (const d of order) {
            progress(`remove: ${count} created containers, 8 at a time, ${d.kind}`);
            (res.remove[d.kind as 'engined' | 'dockerd'] ??= []).push(await removeOnce(d, count));
          }
        }
      }

      if (want('logs')) {
        progress(`logs: 256 MiB, ${it.logsRuns}× engined${dockerd ? ' and dockerd, taking turns' : ''}`);
        const r = await interleave(it.logsRuns, 0, {
          engined: () => logsOnce(engined),
          ...(dockerd ? { dockerd: () => logsOnce(dockerd) } : {}),
        } as Record<string, () => Promise<LogsRun>>);
        res.logs = { engined: r.engined, ...(r.dockerd ? { dockerd: r.dockerd } : {}) };
      }

      if (want('soak')) {
        progress(`soak: ${opts.soakCount} sequential lifecycles on engined`);
        res.soak = await soak(engined, opts.soakCount, progress);
      }

      if (want('memory') && (want('list') || want('logs')))
        res.memory.push(await settleAndRead('at the end (after list and logs)', engined, dockerd));

      if (want('exec')) {
        progress(
          `exec of \`true\` in a running sleep container: ${it.execWarmups} warm-ups + ${it.execN}, engined${dockerd ? ' and dockerd, taking turns' : ''}`,
        );
        const se = await sleeper(engined);
        const sd = dockerd ? await sleeper(dockerd) : null;
        try {
          const r = await interleave(it.execN, it.execWarmups, {
            engined: () => execTrue(engined, se.id),
            ...(dockerd && sd ? { dockerd: () => execTrue(dockerd, sd.id) } : {}),
          } as Record<string, () => Promise<number>>);
          res.exec = { engined: r.engined, ...(r.dockerd ? { dockerd: r.dockerd } : {}) };
        } finally {
          await se.remove().catch(() => undefined);
          await sd?.remove().catch(() => undefined);
        }
      }

      if (want('cp')) {
        const tree = await makeCpTree();
        const work = dirname(tree);
        workDirs.add(work);
        progress(`docker cp of 100 MiB in and out: ${it.cpRuns}× engined${dockerd ? ' and dockerd, taking turns' : ''}`);
        const se = await sleeper(engined);
        const sd = dockerd ? await sleeper(dockerd) : null;
        try {
          const r = await interleave(it.cpRuns, 0, {
            engined: () => cpOnce(engined, se.id, tree, join(work, 'out-engined')),
            ...(dockerd && sd ? { dockerd: () => cpOnce(dockerd, sd.id, tree, join(work, 'out-dockerd')) } : {}),
          } as Record<string, () => Promise<CpRun>>);
          res.cp = { engined: r.engined, ...(r.dockerd ? { dockerd: r.dockerd } : {}) };
        } finally {
          await se.remove().catch(() => undefined);
          await sd?.remove().catch(() => undefined);
          await teardownDir(work).catch(() => undefined);
          workDirs.delete(work);
        }
      }

      if (want('ping')) {
        progress(`/_ping and GET /containers/json (no containers): curl time_total, 10 warm-ups + 100 each, taking turns`);
        for (const [name, path] of Object.entries(PING_PATHS)) {
          const r = await interleave(100, 10, {
            engined: () => curlTime(engined, path),
            ...(dockerd ? { dockerd: () => curlTime(dockerd, path) } : {}),
          } as Record<string, () => Promise<number>>);
          res.ping[`engined-${name}`] = r.engined!;
          if (r.dockerd) res.ping[`dockerd-${name}`] = r.dockerd;
          // Daemon CPU per request (load-independent): 200 sequential requests, one daemon at a time.
          for (const d of dockerd ? [engined, dockerd] : [engined]) {
            const cpu = cpuMeter({ daemon: d.pid, containerd: d.containerdPid() });
            for (let i = 0; i < 200; i++) await curlTime(d, path);
            res.ping[`${d.kind}-${name}-cpu`] = [(cpu().daemon / 200) * 1000];
          }
        }
      }

      if (want('commit')) {
        progress(
          `commit of a stopped container that wrote 10 MiB: ${it.commitWarmups} warm-ups + ${it.commitN}, engined${dockerd ? ' and dockerd, taking turns' : ''}`,
        );
        // A second engined kept on containerd's diff service (the path before the overlay fast
        // path) takes turns too: before and after in one run.
        const service = (await startTracked(() => Engined.start({ ...process.env, ENGINE_COMMIT_DIFF: 'service' }))).daemon;
        try {
          await service.loadBusybox();
          const r = await interleave(it.commitN, it.commitWarmups, {
            engined: () => commitOnce(engined),
            service: () => commitOnce(service),
            ...(dockerd ? { dockerd: () => commitOnce(dockerd) } : {}),
          } as Record<string, () => Promise<CommitRun>>);
          res.commit = { engined: r.engined, service: r.service, ...(r.dockerd ? { dockerd: r.dockerd } : {}) };
        } finally {
          await service.stop().catch(() => undefined);
          alive.delete(service);
        }
      }

      if (want('client')) {
        const work = await mkdtemp('/tmp/bench-client-');
        workDirs.add(work);
        progress(`client: engine CLI vs docker CLI at engined, ${it.clientWarmups} warm-ups + ${it.clientN} rounds, taking turns`);
        res.client = await clientCli(engined.socket, work, it.clientN, it.clientWarmups);
      }

      if (want('pull')) {
        progress(`pull: pushing ${PULL_LAYERS} layers of 50 MiB to a local registry`);
        const img = await startPullRegistry();
        res.pull.mb = img.mb;
        progress(`pull of ${img.mb.toFixed(0)} MB: ${it.pullWarmups} warm-ups + ${it.pullN}, taking turns`);
        // A second engined unpacking layers while they download (staged-unpack.ts, opt-in).
        const staged = (await startTracked(() => Engined.start({ ...process.env, ENGINE_PULL_UNPACK: 'staged' }))).daemon;
        try {
          const r = await interleave(it.pullN, it.pullWarmups, {
            engined: () => pullOnce(engined, img),
            staged: () => pullOnce(staged, img),
            ...(dockerd ? { dockerd: () => pullOnce(dockerd, img) } : {}),
          } as Record<string, () => Promise<PullRun>>);
          res.pull = { ...res.pull, engined: r.engined, staged: r.staged, ...(r.dockerd ? { dockerd: r.dockerd } : {}) };
        } finally {
          await staged.stop().catch(() => undefined);
          alive.delete(staged);
          await img.registry.cleanup().catch(() => undefined);
        }
      }
    }

    if (want('network')) {
      // Daemons of their own: each with a bridge (the ones above may have none), stopped afterwards.
      progress('network: starting engined and dockerd with bridges of their own');
      const engined = (await startTracked(() => startEnginedWithBridge())).daemon;
      let dockerdCleanup: (() => Promise<void>) | null = null;
      let dockerd: Dockerd | null = null;
      try {
        if (useDockerd) {
          const r = await startDockerdWithBridge();
          alive.add(r.daemon);
          dockerd = r.daemon;
          dockerdCleanup = r.cleanup;
        }
        await engined.loadBusybox();
        if (dockerd) await dockerd.loadBusybox();
        progress(`network: API lifecycle and docker run --rm, bridge vs none, ${it.netWarmups} warm-ups + ${it.netN}, taking turns`);
        res.network = await interleave(it.netN, it.netWarmups, { ...networkCases(engined), ...(dockerd ? networkCases(dockerd) : {}) });
      } finally {
        await engined.stop();
        alive.delete(engined);
        if (dockerd) {
          await dockerd.stop();
          alive.delete(dockerd);
        }
        await dockerdCleanup?.();
      }
    }
  } finally {
    progress('stopping daemons, cleaning up');
    await teardownAll();
  }

  const report = render(res, { opts, it, started, loadBefore, loadAfter: loadAverage(), versions });
  process.stdout.write(report + '\n');
  await mkdir(dirname(opts.out), { recursive: true });
  await writeFile(opts.out, report + '\n');
  progress(`written to ${opts.out}`);
}

// ---- rendering --------------------------------------------------------------------------------

interface RenderContext {
  opts: Options;
  it: Record<string, number>;
  started: Date;
  loadBefore: string;
  loadAfter: string;
  versions: string[];
}

function render(res: Results, ctx: RenderContext): string {
  const out: string[] = [];
  const { it } = ctx;
  out.push(`# engine benchmark${ctx.opts.quick ? ' (--quick)' : ''}`);
  out.push('');
  out.push(
    `${ctx.started.toISOString()} · ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB · kernel ${os.release()} · load average before ${ctx.loadBefore}, after ${ctx.loadAfter}`,
  );
  for (const v of ctx.versions) out.push(`- ${v}`);
  out.push(
    `- iterations: lifecycle ${it.warmups} warm-ups + ${it.n}; start-ups ${it.startups}; parallel runs ${it.parallelRuns}; list ${it.listWarmups} + ${it.listN}; logs runs ${it.logsRuns}; exec ${it.execWarmups} + ${it.execN}; cp runs ${it.cpRuns}; commit ${it.commitWarmups} + ${it.commitN}; pull ${it.pullWarmups} + ${it.pullN}; network ${it.netWarmups} + ${it.netN}`,
  );
  for (const n of res.notes) out.push(`- ${n}`);
  out.push('');

  // The side-by-side summary.
  const rows: string[][] = [];
  const row = (label: string, unit: 'ms' | 's' | '×' | 'µs', ours?: number[], theirs?: number[]) => {
    const k = unit === 's' ? 1 / 1000 : 1;
    const a = sum(ours);
    const b = sum(theirs);
    if (!a && !b) return;
    rows.push([
      `${label} (${unit})`,
      num(a && a.median * k),
      num(a && a.p90 * k),
      num(b && b.median * k),
      num(b && b.p90 * k),
      ratio(a?.median, b?.median),
    ]);
  };
  row(
    'start-up: spawn → /_ping 200, containerd included',
    'ms',
    col(res.startup.engined, (m) => m.ping),
    col(res.startup.dockerd, (m) => m.ping),
  );
  row(
    'lifecycle of `true`, network none: create→start→wait→delete',
    'ms',
    col(res.lifecycle.enginedNone, (p) => p.total),
    col(res.lifecycle.dockerdNone, (p) => p.total),
  );
  row(
    'lifecycle of `true`, default network (ours: own netns, lo only)',
    'ms',
    col(res.lifecycle.enginedDefault, (p) => p.total),
    undefined,
  );
  row('50 lifecycles, 8 at a time: wall', 'ms', res.parallel.engined, res.parallel.dockerd);
  const le = res.list.engined;
  const ld = res.list.dockerd;
  row(`create ${it.listContainers} containers, 8 at a time: wall`, 'ms', le && [le.createAllMs], ld && [ld.createAllMs]);
  row(`GET /containers/json?all=1 with ${it.listContainers} containers`, 'ms', le?.listMs, ld?.listMs);
  if (le?.scale || ld?.scale) {
    row(`GET /containers/json?all=1 with ${it.listScaleTo} containers`, 'ms', le?.scale?.listMs, ld?.scale?.listMs);
    // Medians' difference over the containers added: the cost of one more container, and 10 000 from it.
    const slope = (l?: ListResult) =>
      l?.scale && ((median(l.scale.listMs) - median(l.listMs)) / (l.scale.containers - (it.listContainers ?? 0))) * 1000;
    const at10k = (l?: ListResult) => l?.scale && median(l.scale.listMs) + (slope(l)! / 1000) * (10_000 - l.scale.containers);
    row('  per container, from the two medians', 'µs', le?.scale && [slope(le)!], ld?.scale && [slope(ld)!]);
    row('  projected for 10 000 containers', 'ms', le?.scale && [at10k(le)!], ld?.scale && [at10k(ld)!]);
  }
  row(`remove them all (${it.listScaleTo || it.listContainers}), 8 at a time: wall`, 'ms', le && [le.removeAllMs], ld && [ld.removeAllMs]);
  row(
    `${LOG_BYTES / 2 ** 20} MiB to stdout: start → exit`,
    's',
    col(res.logs.engined, (r) => r.writeMs),
    col(res.logs.dockerd, (r) => r.writeMs),
  );
  row(
    `  floor: the same writer to a file in the container, start → exit`,
    's',
    col(res.logs.engined, (r) => r.floorMs),
    col(res.logs.dockerd, (r) => r.floorMs),
  );
  row(
    `  to stdout ÷ its floor (same daemon, same run)`,
    '×',
    col(res.logs.engined, (r) => r.writeMs / r.floorMs),
    col(res.logs.dockerd, (r) => r.writeMs / r.floorMs),
  );
  row(
    `${LOG_BYTES / 2 ** 20} MiB of logs read back (GET logs, whole stream)`,
    's',
    col(res.logs.engined, (r) => r.readMs),
    col(res.logs.dockerd, (r) => r.readMs),
  );
  row(
    '  daemon CPU while the container writes them',
    's',
    col(res.logs.engined, (r) => r.writeCpu),
    col(res.logs.dockerd, (r) => r.writeCpu),
  );
  row(
    '  daemon CPU while they are read back',
    's',
    col(res.logs.engined, (r) => r.readCpu),
    col(res.logs.dockerd, (r) => r.readCpu),
  );
  row('exec of `true` in a running container: create → start (hijacked) → inspect', 'ms', res.exec.engined, res.exec.dockerd);
  row(
    'docker cp of 100 MiB (300 files) into a running container',
    'ms',
    col(res.cp.engined, (r) => r.inMs),
    col(res.cp.dockerd, (r) => r.inMs),
  );
  row(
    'docker cp of the same 100 MiB back out',
    'ms',
    col(res.cp.engined, (r) => r.outMs),
    col(res.cp.dockerd, (r) => r.outMs),
  );
  row(
    'commit of a stopped container that wrote 10 MiB (POST /commit)',
    'ms',
    col(res.commit.engined, (r) => r.ms),
    col(res.commit.dockerd, (r) => r.ms),
  );
  row(
    '  CPU of the daemon + its containerd during the commit',
    'ms',
    col(res.commit.engined, (r) => r.cpu.daemon + r.cpu.containerd),
    col(res.commit.dockerd, (r) => r.cpu.daemon + r.cpu.containerd),
  );
  row(
    '    of which its containerd',
    'ms',
    col(res.commit.engined, (r) => r.cpu.containerd),
    col(res.commit.dockerd, (r) => r.cpu.containerd),
  );
  row(
    "  the same, engined on containerd's diff service (ENGINE_COMMIT_DIFF=service, the path before)",
    'ms',
    col(res.commit.service, (r) => r.ms),
    col(res.commit.dockerd, (r) => r.ms),
  );
  row(
    '    its CPU (daemon + its containerd)',
    'ms',
    col(res.commit.service, (r) => r.cpu.daemon + r.cpu.containerd),
    col(res.commit.dockerd, (r) => r.cpu.daemon + r.cpu.containerd),
  );
  const mb = res.pull.mb?.toFixed(0) ?? '?';
  row(
    `pull ${mb} MB in ${PULL_LAYERS} layers from a local registry (POST /images/create)`,
    'ms',
    col(res.pull.engined, (r) => r.ms),
    col(res.pull.dockerd, (r) => r.ms),
  );
  row(
    '  CPU of the daemon + its containerd during the pull',
    'ms',
    col(res.pull.engined, (r) => r.cpu.daemon + r.cpu.containerd),
    col(res.pull.dockerd, (r) => r.cpu.daemon + r.cpu.containerd),
  );
  row(
    '  the same, engined unpacking layers while they download (ENGINE_PULL_UNPACK=staged)',
    'ms',
    col(res.pull.staged, (r) => r.ms),
    col(res.pull.dockerd, (r) => r.ms),
  );
  row(
    '    its CPU (daemon + its containerd)',
    'ms',
    col(res.pull.staged, (r) => r.cpu.daemon + r.cpu.containerd),
    col(res.pull.dockerd, (r) => r.cpu.daemon + r.cpu.containerd),
  );
  row('GET /_ping, curl time_total over the unix socket', 'ms', res.ping['engined-ping'], res.ping['dockerd-ping']);
  row('GET /containers/json with no containers, curl time_total', 'ms', res.ping['engined-list'], res.ping['dockerd-list']);
  row('  daemon CPU per /_ping (mean of 200)', 'µs', res.ping['engined-ping-cpu'], res.ping['dockerd-ping-cpu']);
  row('  daemon CPU per GET /containers/json (mean of 200)', 'µs', res.ping['engined-list-cpu'], res.ping['dockerd-list-cpu']);
  const net = res.network;
  row('network: API lifecycle of `true`, network none', 'ms', net.enginedApiNone, net.dockerdApiNone);
  row('network: API lifecycle of `true`, default bridge', 'ms', net.enginedApiBridge, net.dockerdApiBridge);
  row('network: `docker run --rm --network none busybox true`', 'ms', net.enginedCliNone, net.dockerdCliNone);
  row('network: `docker run --rm busybox true` (default bridge)', 'ms', net.enginedCliBridge, net.dockerdCliBridge);
  if (rows.length) {
    out.push('## Side by side');
    out.push('');
    out.push(table(['', 'engined median', 'p90', 'dockerd median', 'p90', 'ours/dockerd'], rows));
    out.push('');
  }

  if (res.startup.engined) {
    const mark = (xs: StartupMarks[] | undefined, k: keyof StartupMarks) =>
      num(sum(xs?.map((m) => m[k]).filter((v): v is number => v !== undefined))?.median);
    out.push("### Start-up milestones, ms after spawn (median; from the daemons' own log timestamps), and CPU used");
    out.push('');
    out.push(
      table(
        ['milestone', 'engined', 'dockerd'],
        (
          [
            ['"Starting up" logged (runtime up, code loaded)', 'startingUp'],
            ['its containerd "successfully booted"', 'containerdBooted'],
            ['"Daemon has completed initialization"', 'initialized'],
            ['/_ping answers 200', 'ping'],
            ['CPU ms used by then: the daemon', 'daemonCpu'],
            ['CPU ms used by then: its containerd', 'containerdCpu'],
          ] as const
        ).map(([label, k]) => [label, mark(res.startup.engined, k), mark(res.startup.dockerd, k)]),
      ),
    );
    out.push('');
  }

  // Single lifecycle against the floors.
  const lc = res.lifecycle;
  if (lc.enginedNone) {
    const ours = sum(col(lc.enginedNone, (p) => p.total))!;
    const floorRows: [string, Summary | undefined][] = [
      ['engined, network none', ours],
      ['engined, default network', sum(col(lc.enginedDefault, (p) => p.total))],
      ['dockerd 20.10, network none', sum(col(lc.dockerdNone, (p) => p.total))],
      ['bare containerd lifecycle from Node (floor; lifecycle-test spec)', sum(col(lc.floor, (p) => p.total))],
      ["the same floor with engined's own spec (seccomp, masks, cgroupns, /etc binds)", sum(col(lc.floorEnginedSpec, (p) => p.total))],
      ['`runc run` (spawned from Node)', sum(lc.runc)],
      ['for scale: one helper process from Node (execFile true)', sum(lc.spawn)],
    ];
    out.push('## Single lifecycle of `true` in busybox (ms)');
    out.push('');
    out.push(
      table(
        ['', 'median', 'p90', 'min', 'engined (none) ÷ this'],
        floorRows.filter(([, s]) => s).map(([l, s]) => [l, num(s!.median), num(s!.p90), num(s!.min), ratio(ours.median, s!.median)]),
      ),
    );
    const floor = sum(col(lc.floor, (p) => p.total));
    if (floor) {
      const r = ours.median / floor.median;
      const shown = r.toFixed(2);
      out.push('');
      out.push(
        `Target (within 1.2× of the bare containerd lifecycle): engined (network none) / floor = ${shown}× → ${Number(shown) <= 1.2 ? 'met' : 'NOT met'}; ${num(ours.median - floor.median)} ms above the floor.`,
      );
      const same = sum(col(lc.floorEnginedSpec, (p) => p.total));
      if (same)
        out.push(
          `With engined's own spec in the floor (so only the daemon's own work differs): ${(ours.median / same.median).toFixed(2)}×, ${num(ours.median - same.median)} ms above it.`,
        );
    }
    out.push('');

    const phase = (xs: ApiPhases[] | undefined, k: Exclude<keyof ApiPhases, 'cpu'>) => num(sum(col(xs, (p) => p[k]))?.median);
    const cpuMean = (xs: ApiPhases[] | undefined, k: 'daemon' | 'containerd') => num(sum(col(xs, (p) => p.cpu[k]))?.mean, 1);
    out.push('### Where the time goes: API calls, median ms');
    out.push('');
    out.push(
      table(
        ['call', 'engined none', 'engined default', 'dockerd none'],
        (['create', 'start', 'wait', 'delete', 'total'] as const)
          .map((k) => [
            k === 'total'
              ? 'total'
              : `${k === 'delete' ? 'DELETE /containers/{id}' : `POST ${k === 'create' ? '/containers/create' : `/containers/{id}/${k}`}`}`,
            phase(lc.enginedNone, k),
            phase(lc.enginedDefault, k),
            phase(lc.dockerdNone, k),
          ])
          .concat([
            [
              'CPU ms used by the daemon per lifecycle (mean)',
              cpuMean(lc.enginedNone, 'daemon'),
              cpuMean(lc.enginedDefault, 'daemon'),
              cpuMean(lc.dockerdNone, 'daemon'),
            ],
            [
              'CPU ms used by its containerd per lifecycle (mean)',
              cpuMean(lc.enginedNone, 'containerd'),
              cpuMean(lc.enginedDefault, 'containerd'),
              cpuMean(lc.dockerdNone, 'containerd'),
            ],
          ]),
      ),
    );
    out.push('');
    if (lc.floor) {
      const f = (xs: FloorPhases[] | undefined, k: keyof FloorPhases) => num(sum(col(xs, (p) => p[k]))?.median);
      out.push("### The floor's phases, median ms");
      out.push('');
      out.push(
        table(
          ['phase', 'lifecycle-test spec', "engined's spec"],
          (
            [
              ['Snapshots.Prepare + Containers.Create', 'prepareAndCreate'],
              ['mkfifo (execFile) + open readers', 'fifos'],
              ['Tasks.Create', 'taskCreate'],
              ['Tasks.Start', 'start'],
              ['Tasks.Wait + output EOF', 'wait'],
              ['Tasks.Delete + Containers.Delete + Snapshots.Remove + rm FIFOs', 'cleanup'],
              ['total', 'total'],
            ] as const
          ).map(([label, k]) => [label, f(lc.floor, k), f(lc.floorEnginedSpec, k)]),
        ),
      );
      out.push('');
    }
  }

  if (res.remove.engined || res.remove.dockerd) {
    out.push('## Removing created containers: per container, at two counts');
    out.push('');
    out.push(removeSection(res.remove));
    out.push('');
  }
  if (res.soak) {
    out.push('## Soak: sequential lifecycles, first vs last');
    out.push('');
    out.push(soakSection(res.soak));
    out.push('');
  }
  if (res.client) {
    out.push('## The engine CLI vs the docker CLI 28, both at engined');
    out.push('');
    out.push(clientSection(res.client, it.clientN!, it.clientWarmups!));
    out.push('');
  }

  if (res.memory.length) {
    out.push('## Idle resident memory (VmRSS, MiB)');
    out.push('');
    out.push(
      table(
        ['when', 'engined', '+ its containerd', '= total', 'dockerd', '+ its containerd', '= total', 'ours/dockerd'],
        res.memory.map((m) => {
          const et = m.engined && m.engined.daemon + m.engined.containerd;
          const dt = m.dockerd && m.dockerd.daemon + m.dockerd.containerd;
          return [
            m.when,
            num(m.engined?.daemon, 1),
            num(m.engined?.containerd, 1),
            num(et, 1),
            num(m.dockerd?.daemon, 1),
            num(m.dockerd?.containerd, 1),
            num(dt, 1),
            ratio(et, dt),
          ];
        }),
      ),
    );
    out.push('');
  }

  const le2 = res.list.engined;
  if (res.logs.engined || le2) {
    out.push('## Details');
    out.push('');
    for (const [name, runs] of [
      ['engined', res.logs.engined],
      ['dockerd', res.logs.dockerd],
    ] as const) {
      if (runs)
        out.push(
          `- logs, ${name}: ${runs.map((r) => `write ${(r.writeMs / 1000).toFixed(2)} s, read ${(r.readMs / 1000).toFixed(2)} s (${(r.readBytes / 2 ** 20).toFixed(1)} MiB on the wire, ${(r.readBytes / 2 ** 20 / (r.readMs / 1000)).toFixed(0)} MiB/s)`).join('; ')}`,
        );
    }
    for (const [name, l] of [
      ['engined', res.list.engined],
      ['dockerd', res.list.dockerd],
    ] as const) {
      if (l)
        out.push(
          `- list, ${name}: ${l.listed} containers listed; create all ${(l.createAllMs / 1000).toFixed(1)} s (${(l.createAllMs / (it.listContainers ?? 1)).toFixed(1)} ms each at 8 in flight), remove all ${(l.removeAllMs / 1000).toFixed(1)} s`,
        );
    }
    out.push('');
  }
  out.push(
    'Medians and p90 (nearest rank) over the recorded iterations; ratios are of medians. Other work on the machine shows up as noise: compare within one run.',
  );
  return out.join('\n');
}

main().catch(async (err) => {
  progress(`FAILED: ${(err as Error).stack ?? err}`);
  await teardownAll();
  process.exit(1);
});
