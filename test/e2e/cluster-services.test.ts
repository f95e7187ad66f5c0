// Services and tasks in cluster mode through the docker CLI 28: on one node, create --replicas 3,
// scale, rolling update of image and env, rollback, restart policy, logs, events, rm removing the
// containers; on three daemons (a manager and two workers), tasks spread across the nodes, drain
// moves them off a node, and a killed worker's tasks are rescheduled after the heartbeat period.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

// A block of loopback addresses per test process (cluster.test.ts uses 20..219 by pid; these
// start above it).
const base = 220 + (process.pid % 7) * 5;
const ip = (i: number) => `127.0.${base + i}.1`;

interface TaskView {
  ID: string;
  Slot?: number;
  NodeID?: string;
  DesiredState: string;
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
  Spec: { ContainerSpec: { Image: string; Env?: string[] } };
}

async function tasks(d: TestDaemon, service: string): Promise<TaskView[]> {
  const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: [service] }))}`);
  assert.equal(r.status, 200, r.body.toString());
  return r.json() as TaskView[];
}

const runningOf = (ts: TaskView[]) => ts.filter((t) => t.DesiredState === 'running' && t.Status.State === 'running');

async function waitRunning(d: TestDaemon, service: string, n: number, test?: (ts: TaskView[]) => boolean): Promise<TaskView[]> {
  return until(
    `${n} running tasks of ${service}`,
    async () => {
      const ts = await tasks(d, service);
      const run = runningOf(ts);
      const live = ts.filter((t) => t.DesiredState === 'running');
      return run.length === n && live.length === n && (!test || test(run)) ? run : undefined;
    },
    90_000,
    300,
  );
}

async function ok(d: TestDaemon, args: string[]): Promise<string> {
  const r = await d.docker(args);
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function taskContainers(d: TestDaemon, service: string): Promise<string[]> {
  const out = await ok(d, ['ps', '-a', '--filter', `label=com.docker.swarm.service.name=${service}`, '--format', '{{.Names}}']);
  return out.split('\n').filter(Boolean);
}

describe('services on one node', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    await ok(d, ['tag', 'busybox:latest', 'busybox:v2']);
    await ok(d, ['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
  });
  after(async () => d?.cleanup());

  test('create --replicas 3, ls, ps, inspect, scale, rolling update, rollback, logs, rm', async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const id = (
      await ok(d, [
        'service',
        'create',
        '--detach',
        '--no-resolve-image',
        '--name',
        'web',
        '--replicas',
        '3',
        '--stop-grace-period',
        '1s',
        '--update-delay',
        '0s',
        '--update-parallelism',
        '2',
        '--label',
        'tier=front',
        'busybox:latest',
        'sh',
        '-c',
        'echo hello from $HOSTNAME; exec sleep 1000',
      ])
    ).trim();
    assert.match(id, /^[0-9a-z]{25}$/);
    const run = await waitRunning(d, 'web', 3);
    assert.deepEqual(run.map((t) => t.Slot).sort(), [1, 2, 3]);

    // The containers: dockerd's names and labels.
    const names = await taskContainers(d, 'web');
    assert.equal(names.length, 3);
    for (const t of run) assert.ok(names.includes(`web.${t.Slot}.${t.ID}`), `${names} has web.${t.Slot}.${t.ID}`);
    const c = JSON.parse(await ok(d, ['inspect', run[0]!.Status.ContainerStatus!.ContainerID!]))[0];
    assert.equal(c.Config.Labels['com.docker.swarm.service.id'], id);
    assert.equal(c.Config.Labels['com.docker.swarm.task.id'], run[0]!.ID);
    assert.equal(c.Config.Labels['com.docker.swarm.service.name'], 'web');
    assert.ok(c.Config.Labels['com.docker.swarm.node.id']);
    assert.equal(c.State.Running, true);

    const ls = JSON.parse((await ok(d, ['service', 'ls', '--format', '{{json .}}'])).trim());
    assert.equal(ls.Name, 'web');
    assert.equal(ls.Replicas, '3/3');
    assert.equal(ls.Mode, 'replicated');
    const ps = await ok(d, ['service', 'ps', 'web', '--format', '{{.Name}} {{.CurrentState}} {{.DesiredState}}']);
    assert.equal(ps.split('\n').filter((l) => /^web\.\d Running .* Running$/.test(l)).length, 3, ps);
    const insp = JSON.parse(await ok(d, ['service', 'inspect', 'web']))[0];
    assert.equal(insp.ID, id);
    assert.equal(insp.Spec.Labels.tier, 'front');
    assert.equal(insp.Spec.Mode.Replicated.Replicas, 3);
    const withDefaults = (await d.request('GET', `/v1.51/services/${id}?insertDefaults=true`)).json();
    assert.equal(withDefaults.Spec.TaskTemplate.RestartPolicy.Condition, 'any');
    assert.equal(withDefaults.Spec.EndpointSpec.Mode, 'vip');
    const filtered = (
      await d.request('GET', `/v1.51/services?filters=${encodeURIComponent(JSON.stringify({ label: ['tier=back'] }))}`)
    ).json();
    assert.equal(filtered.length, 0);
    assert.equal((await d.request('GET', `/v1.51/tasks/${run[0]!.ID}`)).json().ServiceID, id);

    const logs = await ok(d, ['service', 'logs', '--raw', 'web']);
    assert.equal(logs.split('\n').filter((l) => l.startsWith('hello from ')).length, 3, logs);
    // Without --raw the CLI parses the swarm context of each line (details) into task names.
    const pretty = await ok(d, ['service', 'logs', 'web']);
    for (const t of run) assert.match(pretty, new RegExp(`web\\.${t.Slot}\\.${t.ID.slice(0, 12)}@\\S+ +\\| hello from `));

    // A stale version is refused; the service is unchanged.
    const stale = await d.request('POST', `/v1.51/services/${id}/update?version=1`, { body: insp.Spec });
    assert.equal(stale.status, 409);
    assert.match(stale.json().message, /update out of sequence/);

    await ok(d, ['service', 'scale', '--detach', 'web=5']);
    await waitRunning(d, 'web', 5);
    // Scaling keeps the running tasks (no rolling update).
    const kept = (await tasks(d, 'web')).filter((t) => run.some((r) => r.ID === t.ID));
    assert.equal(runningOf(kept).length, 3);
    await ok(d, ['service', 'scale', '--detach', 'web=2']);
    await waitRunning(d, 'web', 2);
    await until(
      'three containers stopped after scale-down',
      async () => ((await taskContainers(d, 'web')).length >= 2 ? true : undefined),
      30_000,
    );

    // Rolling update of image and env: every task replaced, two at a time.
    await ok(d, ['service', 'update', '--detach', '--image', 'busybox:v2', '--env-add', 'COLOR=blue', 'web']);
    const updated = await waitRunning(d, 'web', 2, (ts) => ts.every((t) => t.Spec.ContainerSpec.Image === 'busybox:v2'));
    for (const t of updated) {
      const e = JSON.parse(await ok(d, ['inspect', t.Status.ContainerStatus!.ContainerID!]))[0];
      assert.ok(e.Config.Env.includes('COLOR=blue'), JSON.stringify(e.Config.Env));
    }
    await until(
      'update completed',
      async () => ((await d.request('GET', `/v1.51/services/${id}`)).json().UpdateStatus?.State === 'completed' ? true : undefined),
      30_000,
    );

    await ok(d, ['service', 'rollback', '--detach', 'web']);
    await waitRunning(d, 'web', 2, (ts) => ts.every((t) => t.Spec.ContainerSpec.Image === 'busybox:latest' && !t.Spec.ContainerSpec.Env));
    const rolled = await until(
      'rollback completed',
      async () => {
        const s = (await d.request('GET', `/v1.51/services/${id}`)).json();
        return s.UpdateStatus?.State === 'rollback_completed' ? s : undefined;
      },
      30_000,
    );
    assert.equal(rolled.PreviousSpec.TaskTemplate.ContainerSpec.Image, 'busybox:v2');

    await ok(d, ['service', 'rm', 'web']);
    await until('the containers removed', async () => ((await taskContainers(d, 'web')).length === 0 ? true : undefined), 30_000);
    assert.equal((await d.request('GET', `/v1.51/services/${id}`)).status, 404);
    assert.equal((await tasks(d, id)).length, 0);

    const ev = await d.request(
      'GET',
      `/v1.51/events?since=${since}&until=${Math.ceil(Date.now() / 1000) + 1}&filters=${encodeURIComponent(JSON.stringify({ type: ['service'] }))}`,
    );
    const events = ev.body
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const actions = events.map((e) => e.Action);
    assert.equal(actions[0], 'create');
    assert.ok(actions.filter((a) => a === 'update').length >= 3, actions.join());
    assert.equal(actions.at(-1), 'remove');
    assert.ok(events.every((e) => e.scope === 'swarm' && e.Actor.ID === id && e.Actor.Attributes.name === 'web'));
  });

  test('restart policy on-failure with max attempts; refusals', async () => {
    await ok(d, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'failing',
      '--restart-condition',
      'on-failure',
      '--restart-max-attempts',
      '2',
      '--restart-delay',
      '500ms',
      'busybox:latest',
      'sh',
      '-c',
      'exit 3',
    ]);
    const all = await until(
      'three failed tasks in slot 1',
      async () => {
        const ts = await tasks(d, 'failing');
        return ts.length === 3 && ts.every((t) => t.Status.State === 'failed') ? ts : undefined;
      },
      60_000,
      300,
    );
    assert.ok(all.every((t) => t.Slot === 1 && t.Status.ContainerStatus?.ExitCode === 3 && /non-zero exit \(3\)/.test(t.Status.Err ?? '')));
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal((await tasks(d, 'failing')).length, 3, 'no restart after max attempts');
    await ok(d, ['service', 'rm', 'failing']);

    // Without --detach the CLI follows the tasks until they run and are stable (its progress view).
    const dup = await d.docker(
      ['service', 'create', '--no-resolve-image', '--name', 'x', '--stop-grace-period', '1s', 'busybox:latest', 'sleep', '1000'],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(dup.code, 0, dup.stderr);
    assert.match(dup.stdout, /verify: Service \S+ converged/);
    // An update to an image no node holds: the task is rejected, and FailureAction rollback
    // brings the previous spec back.
    await ok(d, [
      'service',
      'update',
      '--detach',
      '--no-resolve-image',
      '--image',
      'nosuch:v9',
      '--update-failure-action',
      'rollback',
      'x',
    ]);
    const back = await until(
      'the failed update rolled back',
      async () => {
        const s = (await d.request('GET', '/v1.51/services/x')).json();
        return s.UpdateStatus?.State === 'rollback_completed' ? s : undefined;
      },
      60_000,
      300,
    );
    assert.match(back.UpdateStatus.Message, /rollback/);
    assert.equal(back.Spec.TaskTemplate.ContainerSpec.Image, 'busybox:latest');
    const xs = await tasks(d, 'x');
    assert.ok(
      xs.some((t) => t.Status.State === 'rejected' && /No such image/.test(t.Status.Err ?? '')),
      JSON.stringify(xs.map((t) => t.Status)),
    );
    assert.equal(runningOf(xs).length, 1);
    const again = await d.docker(['service', 'create', '--detach', '--no-resolve-image', '--name', 'x', 'busybox:latest', 'sleep', '5']);
    assert.match(again.stderr, /name conflicts with an existing object/);
    const noImage = await d.request('POST', '/v1.51/services/create', { body: { Name: 'y', TaskTemplate: { ContainerSpec: {} } } });
    assert.equal(noImage.status, 400);
    const net = await d.request('POST', '/v1.51/services/create', {
      body: { Name: 'z', TaskTemplate: { ContainerSpec: { Image: 'busybox' }, Networks: [{ Target: 'ov' }] } },
    });
    assert.equal(net.status, 404);
    assert.match(net.json().message, /network ov not found/);
    const mesh = await d.request('POST', '/v1.51/services/create', {
      body: {
        Name: 'z',
        TaskTemplate: { ContainerSpec: { Image: 'busybox' } },
        EndpointSpec: { Ports: [{ TargetPort: 80, Protocol: 'icmp' }] },
      },
    });
    assert.equal(mesh.status, 400);
    assert.match(mesh.json().message, /invalid protocol/);
    const badConstraint = await d.docker(['service', 'create', '--detach', '--constraint', 'node.colour=red', 'busybox:latest']);
    assert.notEqual(badConstraint.code, 0);
    await ok(d, ['service', 'rm', 'x']);

    // A replicated job: three completions, two at a time.
    await ok(d, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'job',
      '--mode',
      'replicated-job',
      '--replicas',
      '3',
      '--max-concurrent',
      '2',
      'busybox:latest',
      'true',
    ]);
    await until(
      'three completed job tasks',
      async () => {
        const ts = await tasks(d, 'job');
        return ts.length === 3 && ts.every((t) => t.Status.State === 'complete') ? true : undefined;
      },
      60_000,
      300,
    );
    assert.match(await ok(d, ['service', 'ls', '--filter', 'mode=replicated-job', '--format', '{{.Replicas}}']), /3\/3 completed/);
    await ok(d, ['service', 'rm', 'job']);
  });
});

// docker-py sends the mode in lower case ({"replicated": …}), which Go's decoder accepts.
const PY = `
import docker, json, time
c = docker.from_env()
s = c.services.create('busybox:latest', ['sleep', '1000'], name='pyweb',
                      mode=docker.types.ServiceMode('replicated', replicas=2), stop_grace_period=1000000000)
def running():
    return len([t for t in s.tasks() if t['Status']['State'] == 'running' and t['DesiredState'] == 'running'])
def states():
    return [(t['ID'][:8], t.get('Slot'), t['DesiredState'], t['Status']['State'], t['Status'].get('Message', '')) for t in s.tasks()]
for _ in range(120):
    if running() == 2: break
    time.sleep(0.5)
out = {'created': running()}
s.reload(); s.scale(3)
seen = []
for _ in range(120):
    seen.append(states())
    if running() == 3: break
    time.sleep(0.5)
out['scaled'] = running()
# A scale replaces no task (docker-py sends the spec back with its defaults: no task change).
out['replaced'] = len([t for t in s.tasks() if t['DesiredState'] != 'running'])
# A count that falls back after reaching 3 (seen once in a CI run): the task states, to find why.
if out['scaled'] != 3:
    out['states'] = {'last seen': seen[-2:], 'now': states()}
s.reload(); out['mode'] = s.attrs['Spec']['Mode']
s.remove()
out['left'] = [x.name for x in c.services.list()]
print(json.dumps(out))
`;

describe('services through docker-py', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    await ok(d, ['swarm', 'init', '--advertise-addr', ip(4), '--listen-addr', `${ip(4)}:2377`]);
  });
  after(async () => d?.cleanup());

  test('create, tasks, scale, remove', async () => {
    const r = await run('python3', ['-c', PY], { env: { ...process.env, DOCKER_HOST: d.host }, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(
      out,
      { created: 2, scaled: 3, replaced: 0, mode: { Replicated: { Replicas: 3 } }, left: [] },
      JSON.stringify(out.states),
    );
  });
});

describe('services on a manager and two workers', () => {
  const ds: TestDaemon[] = [];
  before(async () => {
    for (let i = 0; i < 3; i++) ds.push(await startDaemon());
    await Promise.all(ds.map((d) => loadBusybox(d)));
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
  });

  test('tasks spread; drain moves them; a killed worker’s tasks are rescheduled', async () => {
    const [m, w1, w2] = ds as [TestDaemon, TestDaemon, TestDaemon];
    await ok(m, ['swarm', 'init', '--dispatcher-heartbeat', '1s', '--advertise-addr', ip(1), '--listen-addr', `${ip(1)}:2377`]);
    const token = (await ok(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
    for (const [i, w] of [w1, w2].entries())
      await ok(w, [
        'swarm',
        'join',
        '--token',
        token,
        '--advertise-addr',
        ip(2 + i),
        '--listen-addr',
        `${ip(2 + i)}:2377`,
        `${ip(1)}:2377`,
      ]);
    const nodeOf = async (d: TestDaemon) => JSON.parse((await ok(d, ['info', '--format', '{{json .Swarm}}'])).trim()).NodeID as string;
    const [mid, w1id, w2id] = [await nodeOf(m), await nodeOf(w1), await nodeOf(w2)];

    await ok(m, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'spread',
      '--replicas',
      '6',
      '--stop-grace-period',
      '1s',
      'busybox:latest',
      'sleep',
      '1000',
    ]);
    const run = await waitRunning(m, 'spread', 6);
    const per = (ts: TaskView[]) => [mid, w1id, w2id].map((n) => ts.filter((t) => t.NodeID === n).length);
    assert.deepEqual(per(run), [2, 2, 2]);
    // Each worker runs its tasks as containers on its own engine.
    assert.equal((await taskContainers(w1, 'spread')).length, 2);
    const nodePs = await ok(m, ['node', 'ps', w1id, '--format', '{{.Name}} {{.CurrentState}}']);
    assert.equal(nodePs.split('\n').filter((l) => /^spread\.\d Running/.test(l)).length, 2, nodePs);

    // Global mode: one task per node; a constraint keeps it off the manager.
    await ok(m, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'agent',
      '--mode',
      'global',
      '--constraint',
      'node.role==worker',
      'busybox:latest',
      'sleep',
      '1000',
    ]);
    const glob = await waitRunning(m, 'agent', 2);
    assert.deepEqual(glob.map((t) => t.NodeID).sort(), [w1id, w2id].sort());
    await ok(m, ['service', 'rm', 'agent']);

    // A worker's task's logs come through the manager (cluster-logs.test.ts tests them fully).
    const remote = run.find((t) => t.NodeID === w1id)!;
    const rl = await m.request('GET', `/v1.51/tasks/${remote.ID}/logs?stdout=1`);
    assert.equal(rl.status, 200, rl.text());

    // Drain: the worker's tasks move to the other nodes.
    await ok(m, ['node', 'update', '--availability', 'drain', w2id]);
    const drained = await waitRunning(m, 'spread', 6, (ts) => ts.every((t) => t.NodeID !== w2id));
    assert.deepEqual(per(drained), [3, 3, 0]);
    await until(
      'the drained worker has no running task container',
      async () => {
        const r = await ok(w2, ['ps', '--filter', 'label=com.docker.swarm.service.name=spread', '-q']);
        return r.trim() === '' ? true : undefined;
      },
      30_000,
    );
    await ok(m, ['node', 'update', '--availability', 'active', w2id]);

    // The first worker dies: after the heartbeat period (3 × 1 s) its tasks run elsewhere.
    await w1.kill9();
    const t0 = Date.now();
    const moved = await waitRunning(m, 'spread', 6, (ts) => ts.every((t) => t.NodeID !== w1id));
    const took = Date.now() - t0;
    assert.equal(per(moved)[1], 0);
    assert.ok(took < 60_000, `rescheduled in ${took} ms`);
    const nodes = JSON.parse(`[${(await ok(m, ['node', 'ls', '--format', '{{json .}}'])).trim().split('\n').join(',')}]`);
    assert.equal(nodes.find((n: { ID: string }) => n.ID === w1id)?.Status, 'Down');

    // A worker that leaves removes its task containers (as dockerd does).
    assert.ok((await taskContainers(w2, 'spread')).length > 0);
    await ok(w2, ['swarm', 'leave']);
    assert.equal((await taskContainers(w2, 'spread')).length, 0);
  });
});
