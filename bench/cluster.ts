// Cluster mode timings on one engined (a single-node cluster, real etcd, real containers): `swarm
// init` until the cluster answers `node ls`; `service create --replicas 20` until the 20 tasks run;
// `service update --image` rolling over the 20 tasks (parallelism 1, no delay, stop signal KILL so
// the figure is the orchestration's, not busybox's ignored SIGTERM) until every task runs the new
// image; `service rm` until the containers are gone. Then the same on Debian's dockerd 20.10 (its
// swarm mode, own roots, no bridge), unless `engined` is given. Not part of the test suite; nothing
// asserts. After a build:
//
//   bin/node dist/bench/cluster.js [replicas=20] [engined|both]
import { join } from 'node:path';
import { httpOverUnix, run, startDaemon, type CommandResult, type HttpResult } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';
import { Dockerd } from './targets/dockerd.ts';

/** What the bench needs of a daemon: the docker CLI against it and raw API requests. */
interface Target {
  docker(args: string[], opts?: { timeoutMs?: number }): Promise<CommandResult>;
  request(method: string, path: string): Promise<HttpResult>;
}

interface TaskView {
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

async function running(d: Target, image: string): Promise<number> {
  const r = await d.request('GET', `/v1.41/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['bench'] }))}`);
  const ts = r.json() as TaskView[];
  return ts.filter((t) => t.DesiredState === 'running' && t.Status.State === 'running' && t.Spec.ContainerSpec.Image === image).length;
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
    await docker(d, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'bench',
      '--replicas',
      String(replicas),
      '--stop-signal',
      'SIGKILL',
      '--update-delay',
      '0s',
      'busybox:latest',
      'sleep',
      '100000',
    ]);
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

async function main(): Promise<void> {
  const replicas = Number(process.argv[2] ?? 20);
  const which = process.argv[3] ?? 'both';
  const results: Array<{ name: string; rows: Array<[string, number]> | string }> = [];
  const e = await startDaemon();
  try {
    await loadBusybox(e);
    results.push({ name: 'engined', rows: await measure(e, replicas, '127.0.251.1') });
  } finally {
    await e.cleanup();
  }
  if (which === 'both') {
    const { daemon } = await Dockerd.start();
    try {
      await daemon.loadBusybox();
      const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: daemon.host, DOCKER_CONFIG: join(daemon.dir, 'docker-config') };
      delete env.DOCKER_CONTEXT;
      const target: Target = {
        docker: (args, opts) => run('docker', args, { env, ...opts }),
        request: (method, path) => httpOverUnix(daemon.socket, method, path),
      };
      results.push({ name: (await run('dockerd', ['--version'])).stdout.trim(), rows: await measure(target, replicas, '127.0.251.2') });
    } catch (err) {
      results.push({ name: 'dockerd', rows: `failed: ${(err as Error).message}` });
    } finally {
      await daemon.stop();
    }
  }
  for (const r of results) {
    console.log(`== ${r.name}`);
    if (typeof r.rows === 'string') console.log(r.rows);
    else for (const [what, ms] of r.rows) console.log(`${what.padEnd(55)} ${(ms / 1000).toFixed(2)} s`);
  }
}

await main();
