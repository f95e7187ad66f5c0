// Cluster mode timings on one engined (a single-node cluster, real etcd, real containers): `swarm
// init` until the cluster answers `node ls`; `service create --replicas 20` until the 20 tasks run;
// `service update --image` rolling over the 20 tasks (parallelism 1, no delay, stop signal KILL so
// the figure is the orchestration's, not busybox's ignored SIGTERM) until every task runs the new
// image; `service rm` until the containers are gone. Then the same on Debian's dockerd 20.10 (its
// swarm mode, own roots, no bridge), unless `engined` is given. Then task rescheduling after a worker
// is killed: two daemons of each kind (a manager and a worker, each with its own roots and loopback
// address, heartbeat period 5 s on both), the replicas spread over both, `kill -9` of the worker
// daemon, time until the manager shows the worker down and until all replicas run again on the
// manager. Not part of the test suite; nothing asserts. Prints the load average. After a build:
//
//   bin/node dist/bench/cluster.js [replicas=20] [engined|both]
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { httpOverUnix, run, startDaemon, type CommandResult, type HttpResult } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';
import { loadAverage } from './lib/proc.ts';
import { Dockerd } from './targets/dockerd.ts';

/** What the bench needs of a daemon: the docker CLI against it and raw API requests. */
interface Target {
  docker(args: string[], opts?: { timeoutMs?: number }): Promise<CommandResult>;
  request(method: string, path: string): Promise<HttpResult>;
}

interface TaskView {
  NodeID?: string;
  DesiredState: string;
  Status: { State: string };
  Spec: { ContainerSpec: { Image: string } };
}

async function docker(d: Target, args: string[]): Promise<string> {
  const r = await d.docker(args, { timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function runningTasks(d: Target, image: string): Promise<TaskView[]> {
  const r = await d.request('GET', `/v1.41/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['bench'] }))}`);
  const ts = r.json() as TaskView[];
  return ts.filter((t) => t.DesiredState === 'running' && t.Status.State === 'running' && t.Spec.ContainerSpec.Image === image);
}

async function running(d: Target, image: string): Promise<number> {
  return (await runningTasks(d, image)).length;
}

const CREATE_ARGS = ['--detach', '--no-resolve-image', '--name', 'bench', '--stop-signal', 'SIGKILL', '--update-delay', '0s'];

/**
 * A manager (`addrs[0]`) and a worker (`addrs[1]`) in one cluster, heartbeat period 5 s; the
 * replicas spread over both; the worker daemon killed -9 (its containers keep running, as after a
 * host's daemon crash); the time until the manager shows it down and until every replica runs again
 * on the manager.
 */
async function measureReschedule(
  m: Target,
  w: Target & { kill(): Promise<void> },
  replicas: number,
  addrs: [string, string],
): Promise<Array<[string, number]>> {
  const [ma, wa] = addrs;
  await docker(m, ['swarm', 'init', '--advertise-addr', ma, '--listen-addr', `${ma}:2377`, '--dispatcher-heartbeat', '5s']);
  const token = (await docker(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
  await docker(w, ['swarm', 'join', '--token', token, '--advertise-addr', wa, '--listen-addr', `${wa}:2377`, `${ma}:2377`]);
  const workerId = JSON.parse(await docker(w, ['info', '--format', '{{json .Swarm.NodeID}}'])) as string;
  const nodeState = async () => {
    const ns = (await m.request('GET', '/v1.41/nodes')).json() as Array<{ ID: string; Status: { State: string } }>;
    return ns.find((n) => n.ID === workerId)?.Status.State;
  };
  await waitFor('the worker ready', async () => (await nodeState()) === 'ready');
  await docker(m, ['service', 'create', ...CREATE_ARGS, '--replicas', String(replicas), 'busybox:latest', 'sleep', '100000']);
  await waitFor(`${replicas} tasks running`, async () => (await running(m, 'busybox:latest')) === replicas);
  const onWorker = (await runningTasks(m, 'busybox:latest')).filter((t) => t.NodeID === workerId).length;
  if (onWorker === 0) throw new Error('no task was placed on the worker');
  const t0 = performance.now();
  await w.kill();
  let downMs = NaN;
  await waitFor(`${replicas} tasks running on the manager`, async () => {
    if (Number.isNaN(downMs) && (await nodeState()) === 'down') downMs = performance.now() - t0;
    const ts = await runningTasks(m, 'busybox:latest');
    return ts.length === replicas && ts.every((t) => t.NodeID !== workerId);
  });
  const allMs = performance.now() - t0;
  return [
    [`worker killed -9 (${onWorker} of ${replicas} tasks) → node down`, downMs],
    [`worker killed -9 → all ${replicas} running on the manager`, allMs],
  ];
}

async function measure(d: Target, replicas: number, addr: string): Promise<Array<[string, number]>> {
  const rows: Array<[string, number]> = [];
  {
    await docker(d, ['tag', 'busybox:latest', 'busybox:v2']);
    let t0 = performance.now();
    await docker(d, ['swarm', 'init', '--advertise-addr', addr, '--listen-addr', `${addr}:2377`]);
    await waitFor('node ls', async () => (await d.docker(['node', 'ls'])).code === 0);
    rows.push(['swarm init → node ls answers', performance.now() - t0]);

    t0 = performance.now();
    await docker(d, ['service', 'create', ...CREATE_ARGS, '--replicas', String(replicas), 'busybox:latest', 'sleep', '100000']);
    await waitFor(`${replicas} tasks running`, async () => (await running(d, 'busybox:latest')) === replicas);
    rows.push([`service create --replicas ${replicas} → all running`, performance.now() - t0]);

    t0 = performance.now();
    await docker(d, ['service', 'update', '--detach', '--image', 'busybox:v2', 'bench']);
    await waitFor('every task on the new image', async () => (await running(d, 'busybox:v2')) === replicas);
    rows.push([`service update --image (parallelism 1) over ${replicas} tasks`, performance.now() - t0]);

    t0 = performance.now();
    await docker(d, ['service', 'rm', 'bench']);
    await waitFor(
      'containers removed',
      async () => (await docker(d, ['ps', '-aq', '--filter', 'label=com.docker.swarm.service.name=bench'])).trim() === '',
    );
    rows.push(['service rm → containers gone', performance.now() - t0]);
  }
  return rows;
}

function dockerdTarget(daemon: Dockerd): Target {
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: daemon.host, DOCKER_CONFIG: join(daemon.dir, 'docker-config') };
  delete env.DOCKER_CONTEXT;
  return {
    docker: (args, opts) => run('docker', args, { env, ...opts }),
    request: (method, path) => httpOverUnix(daemon.socket, method, path),
  };
}

async function main(): Promise<void> {
  const replicas = Number(process.argv[2] ?? 20);
  const which = process.argv[3] ?? 'both';
  const results: Array<{ name: string; rows: Array<[string, number]> | string }> = [];
  const load0 = loadAverage();
  const e = await startDaemon();
  try {
    await loadBusybox(e);
    results.push({ name: 'engined', rows: await measure(e, replicas, '127.0.251.1') });
  } finally {
    await e.cleanup();
  }
  {
    const [m, w] = await Promise.all([startDaemon(), startDaemon()]);
    try {
      await Promise.all([loadBusybox(m), loadBusybox(w)]);
      const worker = Object.assign(w, { kill: () => w.kill9() });
      results.push({
        name: 'engined: manager + worker',
        rows: await measureReschedule(m, worker, replicas, ['127.0.251.5', '127.0.251.6']),
      });
    } catch (err) {
      results.push({ name: 'engined: manager + worker', rows: `failed: ${(err as Error).message}` });
    } finally {
      await Promise.all([m.cleanup(), w.cleanup()]);
    }
  }
  if (which === 'both') {
    const { daemon } = await Dockerd.start();
    try {
      await daemon.loadBusybox();
      const target = dockerdTarget(daemon);
      results.push({ name: (await run('dockerd', ['--version'])).stdout.trim(), rows: await measure(target, replicas, '127.0.251.2') });
    } catch (err) {
      results.push({ name: 'dockerd', rows: `failed: ${(err as Error).message}` });
    } finally {
      await daemon.stop();
    }
  }
  if (which === 'both') {
    const daemons: Dockerd[] = [];
    try {
      for (let i = 0; i < 2; i++) daemons.push((await Dockerd.start()).daemon);
      await Promise.all(daemons.map((d) => d.loadBusybox()));
      const [m, w] = daemons.map(dockerdTarget) as [Target, Target];
      const worker = Object.assign(w, { kill: () => daemons[1]!.kill() });
      results.push({
        name: 'dockerd: manager + worker',
        rows: await measureReschedule(m, worker, replicas, ['127.0.251.7', '127.0.251.8']),
      });
    } catch (err) {
      results.push({ name: 'dockerd: manager + worker', rows: `failed: ${(err as Error).message}` });
    } finally {
      await Promise.all(daemons.map((d) => d.stop()));
    }
  }
  // dockerd's swarm mode makes docker_gwbridge (for its ingress sandbox) and leaves it behind;
  // removed unless something is still attached to it.
  if (
    which === 'both' &&
    existsSync('/sys/class/net/docker_gwbridge/brif') &&
    readdirSync('/sys/class/net/docker_gwbridge/brif').length === 0
  )
    await run('ip', ['link', 'del', 'docker_gwbridge']);
  console.log(`load average before: ${load0}, after: ${loadAverage()}`);
  for (const r of results) {
    console.log(`== ${r.name}`);
    if (typeof r.rows === 'string') console.log(r.rows);
    else for (const [what, ms] of r.rows) console.log(`${what.padEnd(55)} ${(ms / 1000).toFixed(2)} s`);
  }
}

await main();
