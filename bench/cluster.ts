// Cluster mode timings on one engined (a single-node cluster, real etcd, real containers): `swarm
// init` until the cluster answers `node ls`; `service create --replicas 20` until the 20 tasks run;
// `service update --image` rolling over the 20 tasks (parallelism 1, no delay, stop signal KILL so
// the figure is the orchestration's, not busybox's ignored SIGTERM) until every task runs the new
// image; `service rm` until the containers are gone. dockerd is not run side by side here. Not part
// of the test suite; nothing asserts. After a build:
//
//   bin/node dist/bench/cluster.js [replicas=20]
import { startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';

interface TaskView {
  DesiredState: string;
  Status: { State: string };
  Spec: { ContainerSpec: { Image: string } };
}

async function docker(d: TestDaemon, args: string[]): Promise<string> {
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

async function running(d: TestDaemon, image: string): Promise<number> {
  const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['bench'] }))}`);
  const ts = r.json() as TaskView[];
  return ts.filter((t) => t.DesiredState === 'running' && t.Status.State === 'running' && t.Spec.ContainerSpec.Image === image).length;
}

async function main(): Promise<void> {
  const replicas = Number(process.argv[2] ?? 20);
  const d = await startDaemon();
  const rows: Array<[string, number]> = [];
  try {
    await loadBusybox(d);
    await docker(d, ['tag', 'busybox:latest', 'busybox:v2']);
    let t0 = performance.now();
    await docker(d, ['swarm', 'init', '--advertise-addr', '127.0.251.1', '--listen-addr', '127.0.251.1:2377']);
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
  } finally {
    await d.cleanup();
  }
  for (const [what, ms] of rows) console.log(`${what.padEnd(55)} ${(ms / 1000).toFixed(2)} s`);
}

await main();
