// The cost of sealing the store's records at rest (autolock, cluster/record-seal.ts): one real
// engined manager per mode (plain `swarm init`, then `swarm init --autolock`), real task containers.
// Both run at once, their rounds interleaved. Per round: `docker service create --detach --replicas 20` (the call), the time until all 20 tasks
// run, `docker service ls` and GET /services + GET /tasks (median of 15 each, with the round's 20
// tasks in the store), `docker service rm`. Then `swarm update --autolock` both ways on the first
// daemon (the rewrite of every record, as logged). First, the codec alone: CPU per task-sized record
// (process CPU time, less sensitive to a busy machine than wall time). Not part of the test suite; nothing asserts.
// After a build:
//
//   bin/node dist/bench/cluster-autolock.js [rounds=3]
import { RecordSeal } from '../src/cluster/ca/record-seal.ts';
import { newDataKey } from '../src/cluster/ca/secret-crypto.ts';
import { startDaemon, type TestDaemon } from '../test/helpers/daemon.ts';
import { loadBusybox } from '../test/helpers/images.ts';

const rounds = Number(process.argv[2] ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function ok(d: TestDaemon, args: string[]): Promise<string> {
  const r = await d.docker(args);
  if (r.code !== 0) throw new Error(`docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function running(d: TestDaemon, name: string): Promise<number> {
  const r = await d.request(
    'GET',
    `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: [name], 'desired-state': ['running'] }))}`,
  );
  return (r.json() as Array<{ Status: { State: string } }>).filter((t) => t.Status.State === 'running').length;
}

async function gone(d: TestDaemon, name: string): Promise<void> {
  for (;;) {
    const out = await ok(d, ['ps', '-aq', '--filter', `label=com.docker.swarm.service.name=${name}`]);
    if (!out.trim()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

type Results = Record<'create' | 'converge' | 'cliLs' | 'apiServices' | 'apiTasks', number[]>;

async function cluster(autolock: boolean, ip: string): Promise<TestDaemon> {
  const d = await startDaemon();
  await loadBusybox(d);
  await ok(d, ['swarm', 'init', ...(autolock ? ['--autolock'] : []), '--advertise-addr', ip, '--listen-addr', `${ip}:2377`]);
  return d;
}

async function round(d: TestDaemon, res: Results, i: number): Promise<void> {
  const name = `bench${i}`;
  const t0 = performance.now();
  res.create.push(
    await timed(() =>
      ok(d, ['service', 'create', '--detach', '--no-resolve-image', '--replicas', '20', '--name', name, 'busybox', 'sleep', '3600']),
    ),
  );
  while ((await running(d, name)) < 20) await new Promise((r) => setTimeout(r, 100));
  res.converge.push(performance.now() - t0);
  const ls: number[] = [];
  const svc: number[] = [];
  const tasks: number[] = [];
  for (let j = 0; j < 15; j++) {
    ls.push(await timed(() => ok(d, ['service', 'ls'])));
    svc.push(await timed(() => d.request('GET', '/v1.51/services?status=true')));
    tasks.push(await timed(() => d.request('GET', '/v1.51/tasks')));
  }
  res.cliLs.push(median(ls));
  res.apiServices.push(median(svc));
  res.apiTasks.push(median(tasks));
  await ok(d, ['service', 'rm', name]);
  await gone(d, name);
}

function report(label: string, res: Results): void {
  const f = (xs: number[]) => `${xs.map((x) => x.toFixed(0)).join('/')} ms (median ${median(xs).toFixed(0)})`;
  console.log(`\n${label} (${rounds} rounds):`);
  console.log(`  service create --detach --replicas 20: ${f(res.create)}`);
  console.log(`  until 20 tasks run:                    ${f(res.converge)}`);
  console.log(`  docker service ls (median of 15):      ${f(res.cliLs)}`);
  console.log(`  GET /services?status=true:             ${f(res.apiServices)}`);
  console.log(`  GET /tasks:                            ${f(res.apiTasks)}`);
}

{
  const task = {
    ID: 'x'.repeat(25),
    ServiceID: 'y'.repeat(25),
    ServiceName: 'bench0',
    Slot: 3,
    NodeID: 'n'.repeat(25),
    SpecVersion: 1,
    DesiredState: 'running',
    Spec: { ContainerSpec: { Image: 'busybox:latest', Args: ['sleep', '3600'] }, RestartPolicy: { Condition: 'any', Delay: 5e9 } },
    Status: {
      Timestamp: new Date().toISOString(),
      State: 'running',
      Message: 'started',
      ContainerStatus: { ContainerID: 'c'.repeat(64), PID: 1 },
    },
  };
  const n = 20_000;
  const cpu = (fn: () => void) => {
    for (let i = 0; i < 2000; i++) fn();
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const c = process.cpuUsage(c0);
    return ((c.user + c.system) / n).toFixed(1);
  };
  for (const sealing of [false, true]) {
    const s = new RecordSeal();
    s.set(sealing, newDataKey());
    const raw = Buffer.from(s.encode('tasks/a', task));
    const enc = cpu(() => s.encode('tasks/a', task));
    const dec = cpu(() => s.decode('tasks/a', raw));
    console.log(`codec ${sealing ? 'sealed' : 'clear '}: ${raw.length} bytes stored; CPU per record: encode ${enc} µs, decode ${dec} µs`);
  }
}

// Both clusters up at once and their rounds interleaved, so a busy machine weighs on both alike.
const [plain, locked] = await Promise.all([cluster(false, '127.0.97.9'), cluster(true, '127.0.98.9')]);
const empty = (): Results => ({ create: [], converge: [], cliLs: [], apiServices: [], apiTasks: [] });
const rp = empty();
const rl = empty();
for (let i = 0; i < rounds; i++) {
  if (i % 2) {
    await round(locked, rl, i);
    await round(plain, rp, i);
  } else {
    await round(plain, rp, i);
    await round(locked, rl, i);
  }
}
report('plain', rp);
report('autolock', rl);
await locked.cleanup();
// Switching: the rewrite of every record (services, tasks, nodes…) as the daemon logs it.
await ok(plain, ['service', 'create', '--detach', '--no-resolve-image', '--replicas', '20', '--name', 'kept', 'busybox', 'sleep', '3600']);
while ((await running(plain, 'kept')) < 20) await new Promise((r) => setTimeout(r, 100));
const on = await timed(() => ok(plain, ['swarm', 'update', '--autolock=true']));
const off = await timed(() => ok(plain, ['swarm', 'update', '--autolock=false']));
console.log(`\nswarm update --autolock=true: ${on.toFixed(0)} ms, --autolock=false: ${off.toFixed(0)} ms`);
for (const l of plain.output.split('\n').filter((l) => /records rewritten/.test(l))) console.log(`  ${l.trim()}`);
await ok(plain, ['service', 'rm', 'kept']);
await gone(plain, 'kept');
await plain.cleanup();
