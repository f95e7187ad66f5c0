// Secrets and configs in cluster mode through the docker CLI 28: create from stdin, ls, inspect (a
// secret's data never shown, a config's is), labels-only update, name conflicts, a service whose
// task container reads them at /run/secrets/<name> and at the config's target with its mode (from
// a tmpfs of the task's own on the host, gone with the task), removal refused while in use; and on
// a manager with a worker, the worker's task gets the secret (and only that node holds its files).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.2 (cluster.test.ts uses 127.0.0.x, cluster-services
// 127.0.<n>.1).
const base = 10 + loopbackSlot() * 4;
const ip = (i: number) => `127.0.${base + i}.2`;

interface TaskView {
  ID: string;
  NodeID?: string;
  DesiredState: string;
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
}

async function ok(d: TestDaemon, args: string[], input?: string): Promise<string> {
  const r = await d.docker(args, input === undefined ? {} : { input });
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function running(d: TestDaemon, service: string, n: number): Promise<TaskView[]> {
  return until(
    `${n} running tasks of ${service}`,
    async () => {
      const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: [service] }))}`);
      const ts = (r.json() as TaskView[]).filter((t) => t.DesiredState === 'running');
      const bad = ts.find((t) => t.Status.Err);
      if (bad) throw new Error(`task ${bad.ID}: ${bad.Status.Err}`);
      return ts.length === n && ts.every((t) => t.Status.State === 'running') ? ts : undefined;
    },
    90_000,
    300,
  );
}

/** tmpfs mounts under the daemon's exec-root that hold task files. */
const taskMounts = (d: TestDaemon) =>
  readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f[1]?.startsWith(`${d.execRoot}/cluster/tasks/`))
    .map((f) => ({ path: f[1]!, type: f[2]!, options: f[3]! }));

describe('secrets and configs on one node', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    await ok(d, ['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
  });
  after(async () => d?.cleanup());

  test('create, ls, inspect, update, conflicts; a service reads them; rm refused while in use', async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const sid = (await ok(d, ['secret', 'create', '--label', 'env=test', 's1', '-'], 'top-secret\n')).trim();
    assert.match(sid, /^[0-9a-z]{25}$/);
    const cid = (await ok(d, ['config', 'create', 'c1', '-'], 'listen 80;\n')).trim();
    assert.match((await ok(d, ['secret', 'ls', '--format', '{{.ID}} {{.Name}}'])).trim(), new RegExp(`^${sid} s1$`));
    assert.match((await ok(d, ['config', 'ls', '--format', '{{.Name}}'])).trim(), /^c1$/);

    // Inspect: a secret's data is never shown, a config's is.
    const s = JSON.parse(await ok(d, ['secret', 'inspect', 's1']))[0];
    assert.equal(s.ID, sid);
    assert.deepEqual(s.Spec, { Name: 's1', Labels: { env: 'test' } });
    assert.ok(s.Version.Index > 0 && s.CreatedAt && s.UpdatedAt);
    const c = JSON.parse(await ok(d, ['config', 'inspect', cid]))[0];
    assert.equal(Buffer.from(c.Spec.Data, 'base64').toString(), 'listen 80;\n');
    // Data sealed in the store: neither the plain text nor its base64 is in etcd's files (its WAL
    // holds every value written).
    const etcdFiles = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? etcdFiles(join(dir, e.name)) : [join(dir, e.name)]));
    const files = etcdFiles(join(d.dataRoot, 'cluster', 'etcd'));
    assert.ok(files.length > 0);
    const blob = Buffer.concat(files.map((f) => readFileSync(f)));
    assert.equal(blob.includes('listen 80;'), false, 'a config is sealed as well');
    assert.equal(blob.includes('top-secret'), false);
    assert.equal(blob.includes(Buffer.from('top-secret\n').toString('base64')), false);
    assert.equal(blob.includes('s1'), true, 'the WAL was read');
    const raw = await d.request('GET', `/v1.51/secrets?filters=${encodeURIComponent(JSON.stringify({ names: ['s1'] }))}`);
    assert.equal((raw.json() as unknown[]).length, 1);
    assert.equal((await d.request('GET', `/v1.51/secrets?filters=${encodeURIComponent('{"names":["s"]}')}`)).json().length, 0);
    assert.equal((await d.request('GET', `/v1.51/secrets?filters=${encodeURIComponent('{"label":["env=test"]}')}`)).json().length, 1);

    // Name conflict, bad data, drivers.
    const again = await d.docker(['secret', 'create', 's1', '-'], { input: 'x' });
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /secret s1 already exists/);
    const empty = await d.request('POST', '/v1.51/secrets/create', { body: { Name: 'e', Data: '' } });
    assert.equal(empty.status, 400);
    assert.match(empty.json().message, /secret data must be larger than 0 and less than 512000 bytes/);
    const driver = await d.request('POST', '/v1.51/secrets/create', { body: { Name: 'v', Data: 'eA==', Driver: { Name: 'vault' } } });
    assert.equal(driver.status, 501, driver.body.toString());

    // Update: labels only, version checked.
    const v = s.Version.Index as number;
    const upd = await d.request('POST', `/v1.51/secrets/${sid}/update?version=${v}`, { body: { Name: 's1', Labels: { env: 'prod' } } });
    assert.equal(upd.status, 200, upd.body.toString());
    assert.deepEqual((await d.request('GET', `/v1.51/secrets/s1`)).json().Spec.Labels, { env: 'prod' });
    const stale = await d.request('POST', `/v1.51/secrets/${sid}/update?version=${v}`, { body: { Name: 's1', Labels: {} } });
    assert.equal(stale.status, 409);
    const cur = (await d.request('GET', `/v1.51/secrets/s1`)).json().Version.Index;
    const data = await d.request('POST', `/v1.51/secrets/${sid}/update?version=${cur}`, { body: { Name: 's1', Data: 'eA==' } });
    assert.equal(data.status, 400);
    assert.match(data.json().message, /only updates to Labels are allowed/);

    // A service naming an unknown secret: swarmkit's error.
    const unknown = await d.request('POST', '/v1.51/services/create', {
      body: {
        Name: 'bad',
        TaskTemplate: {
          ContainerSpec: { Image: 'busybox:latest', Secrets: [{ SecretID: 'x1', SecretName: 'nope', File: { Name: 'nope' } }] },
        },
      },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.json().message, /secret not found: nope/);

    await ok(d, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'sec',
      '--stop-grace-period',
      '1s',
      '--secret',
      's1',
      '--secret',
      'source=s1,target=/etc/app/pw,uid=1000,gid=1000,mode=0400',
      '--config',
      'src=c1,target=/etc/c1.conf,mode=0440',
      'busybox:latest',
      'sleep',
      '1000',
    ]);
    const [task] = await running(d, 'sec', 1);
    const ctr = task!.Status.ContainerStatus!.ContainerID!;
    assert.equal(await ok(d, ['exec', ctr, 'cat', '/run/secrets/s1']), 'top-secret\n');
    assert.equal(await ok(d, ['exec', ctr, 'cat', '/etc/app/pw']), 'top-secret\n');
    assert.equal(await ok(d, ['exec', ctr, 'cat', '/etc/c1.conf']), 'listen 80;\n');
    assert.equal(
      (await ok(d, ['exec', ctr, 'stat', '-c', '%a %u %g', '/run/secrets/s1', '/etc/app/pw', '/etc/c1.conf'])).trim(),
      '444 0 0\n400 1000 1000\n440 0 0',
    );
    const write = await d.docker(['exec', ctr, 'sh', '-c', 'echo x > /run/secrets/s1']);
    assert.notEqual(write.code, 0, 'the secret is mounted read-only');
    // On the host: a tmpfs of the task's own (never on disk).
    const mounts = taskMounts(d);
    assert.equal(mounts.length, 1, JSON.stringify(mounts));
    assert.equal(mounts[0]!.type, 'tmpfs');
    assert.match(mounts[0]!.path, new RegExp(`/${task!.ID}$`));

    for (const [kind, name] of [
      ['secret', 's1'],
      ['config', 'c1'],
    ]) {
      const rm = await d.docker([kind!, 'rm', name!]);
      assert.notEqual(rm.code, 0);
      assert.match(rm.stderr, new RegExp(`${kind} '${name}' is in use by the following service: sec`));
    }

    // A task whose container cannot be made (no such image) leaves no files behind.
    await ok(d, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'noimg',
      '--restart-condition',
      'none',
      '--secret',
      's1',
      'nosuch/image:1',
      'true',
    ]);
    await until(
      'a rejected task of noimg',
      async () => {
        const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['noimg'] }))}`);
        return (r.json() as TaskView[]).some((t) => t.Status.State === 'rejected') ? true : undefined;
      },
      30_000,
      200,
    );
    assert.deepEqual(
      taskMounts(d).map((m) => m.path.split('/').pop()),
      [task!.ID],
    );
    await ok(d, ['service', 'rm', 'noimg']);
    // A job reads its secret and ends: the files leave the node with the container's end, while
    // the stopped container stays (as dockerd).
    await ok(d, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'job',
      '--mode',
      'replicated-job',
      '--secret',
      's1',
      'busybox:latest',
      'cat',
      '/run/secrets/s1',
    ]);
    const done = await until(
      'the job complete',
      async () => {
        const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['job'] }))}`);
        return (r.json() as TaskView[]).find((t) => t.Status.State === 'complete');
      },
      30_000,
      200,
    );
    assert.match(await ok(d, ['logs', done.Status.ContainerStatus!.ContainerID!]), /^top-secret$/m);
    await until('the job’s files gone', () => (taskMounts(d).every((m) => !m.path.endsWith(done.ID)) ? true : undefined), 10_000, 100);
    assert.equal(taskMounts(d).length, 1);
    await ok(d, ['service', 'rm', 'job']);
    // An update dropping the config: a new task without it, and the config is free to go.
    await ok(d, ['service', 'update', '--detach', '--config-rm', 'c1', 'sec']);
    const next = await until(
      'the updated task running',
      async () => {
        const q = encodeURIComponent(JSON.stringify({ service: ['sec'], 'desired-state': ['running'] }));
        const ts = (await d.request('GET', `/v1.51/tasks?filters=${q}`)).json() as TaskView[];
        return ts.find((x) => x.ID !== task!.ID && x.Status.State === 'running');
      },
      60_000,
      200,
    );
    const ctr2 = next.Status.ContainerStatus!.ContainerID!;
    assert.equal(await ok(d, ['exec', ctr2, 'cat', '/run/secrets/s1']), 'top-secret\n');
    assert.notEqual((await d.docker(['exec', ctr2, 'cat', '/etc/c1.conf'])).code, 0, 'the config is gone from the new task');
    assert.equal((await ok(d, ['config', 'rm', 'c1'])).trim(), 'c1');
    await until(
      'only the new task holds files',
      () => {
        const m = taskMounts(d).map((x) => x.path.split('/').pop());
        return m.length === 1 && m[0] === next.ID ? true : undefined;
      },
      30_000,
      200,
    );
    await ok(d, ['service', 'rm', 'sec']);
    await until(
      'the task container and its files gone',
      async () => {
        const ps = await ok(d, ['ps', '-aq', '--filter', 'label=com.docker.swarm.service.name=sec']);
        return ps.trim() === '' && taskMounts(d).length === 0 ? true : undefined;
      },
      30_000,
      200,
    );
    assert.equal((await ok(d, ['secret', 'rm', 's1'])).trim(), 's1');
    assert.equal((await ok(d, ['secret', 'ls', '-q'])).trim(), '');
    assert.equal((await d.request('GET', `/v1.51/secrets/${sid}`)).status, 404);

    const ev = await ok(d, [
      'events',
      '--since',
      String(since),
      '--until',
      String(Math.floor(Date.now() / 1000) + 1),
      '--filter',
      'type=secret',
      '--filter',
      'type=config',
      '--format',
      '{{.Type}} {{.Action}} {{.Actor.Attributes.name}} {{.Scope}}',
    ]);
    assert.deepEqual(ev.trim().split('\n'), [
      'secret create s1 swarm',
      'config create c1 swarm',
      'secret update s1 swarm',
      'config remove c1 swarm',
      'secret remove s1 swarm',
    ]);
  });

  test('docker-py: create, list, a service reading them, remove', async () => {
    const r = await run('python3', ['-c', PY], { env: { ...process.env, DOCKER_HOST: d.host }, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(out.names, ['py-s', 'py-c']);
    assert.deepEqual(out.labels, { k: 'v' });
    assert.deepEqual(out.read, ['py-secret', 'py-config']);
    assert.match(out.refused, /secret 'py-s' is in use by the following service: pysvc/);
    assert.deepEqual(out.left, []);
  });

  test('a restarted daemon: the task running after it reads its secret, no files left of ended containers', async () => {
    await ok(d, ['secret', 'create', 'r1', '-'], 'kept');
    await ok(d, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'rs',
      '--stop-grace-period',
      '1s',
      '--secret',
      'r1',
      'busybox:latest',
      'sleep',
      '1000',
    ]);
    await running(d, 'rs', 1);
    await d.stop();
    await d.restart();
    const t = await until(
      'a running task of rs after the restart',
      async () => {
        const q = encodeURIComponent(JSON.stringify({ service: ['rs'], 'desired-state': ['running'] }));
        const ts = (await d.request('GET', `/v1.51/tasks?filters=${q}`)).json() as TaskView[];
        const r = ts.find((x) => x.Status.State === 'running');
        if (!r) return undefined;
        const ctr = r.Status.ContainerStatus!.ContainerID!;
        return (await d.request('GET', `/v1.51/containers/${ctr}/json`)).json().State?.Running ? r : undefined;
      },
      90_000,
      300,
    );
    assert.equal(await ok(d, ['exec', t.Status.ContainerStatus!.ContainerID!, 'cat', '/run/secrets/r1']), 'kept');
    await until(
      'files only for the running task',
      () => {
        const m = taskMounts(d).map((x) => x.path.split('/').pop());
        return m.length === 1 && m[0] === t.ID ? true : undefined;
      },
      30_000,
      200,
    );
    await ok(d, ['service', 'rm', 'rs']);
    await until('no task files', () => (taskMounts(d).length === 0 ? true : undefined), 30_000, 200);
    await ok(d, ['secret', 'rm', 'r1']);
  });
});

// docker-py: secrets and configs by its models, a service referring to them, the task reading them.
const PY = `
import docker, json, time
c = docker.from_env()
s = c.secrets.create(name='py-s', data=b'py-secret', labels={'k': 'v'})
cf = c.configs.create(name='py-c', data=b'py-config')
names = sorted(x.name for x in c.secrets.list()) + sorted(x.name for x in c.configs.list())
labels = c.api.inspect_secret(s.id)['Spec']['Labels']
svc = c.services.create('busybox:latest', ['sleep', '1000'], name='pysvc', stop_grace_period=1000000000,
    secrets=[docker.types.SecretReference(s.id, 'py-s')],
    configs=[docker.types.ConfigReference(cf.id, 'py-c', filename='/etc/py.conf')])
ctr = None
for _ in range(300):
    ts = [t for t in svc.tasks() if t['Status']['State'] == 'running']
    if ts:
        ctr = c.containers.get(ts[0]['Status']['ContainerStatus']['ContainerID'])
        break
    time.sleep(0.3)
read = [ctr.exec_run(['cat', p]).output.decode() for p in ['/run/secrets/py-s', '/etc/py.conf']]
try:
    s.remove()
    refused = ''
except docker.errors.APIError as e:
    refused = e.explanation
svc.remove()
for _ in range(100):
    try:
        s.remove()
        break
    except docker.errors.APIError:
        time.sleep(0.2)
cf.remove()
print(json.dumps({'names': names, 'labels': labels, 'read': read, 'refused': refused, 'left': [x.name for x in c.secrets.list()]}))
`;

describe('secrets on a manager and a worker', () => {
  const ds: TestDaemon[] = [];
  before(async () => {
    for (let i = 0; i < 2; i++) ds.push(await startDaemon());
    await Promise.all(ds.map((d) => loadBusybox(d)));
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
  });

  test("a worker's task gets the secret and the config", async () => {
    const [m, w] = ds as [TestDaemon, TestDaemon];
    await ok(m, ['swarm', 'init', '--advertise-addr', ip(1), '--listen-addr', `${ip(1)}:2377`]);
    const token = (await ok(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
    await ok(w, ['swarm', 'join', '--token', token, '--advertise-addr', ip(2), '--listen-addr', `${ip(2)}:2377`, `${ip(1)}:2377`]);
    await ok(m, ['secret', 'create', 'db-pw', '-'], 'hunter2');
    await ok(m, ['config', 'create', 'app.conf', '-'], 'mode=worker\n');
    await ok(m, [
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'remote',
      '--stop-grace-period',
      '1s',
      '--constraint',
      'node.role==worker',
      '--secret',
      'db-pw',
      '--config',
      'src=app.conf,target=/etc/app.conf',
      'busybox:latest',
      'sleep',
      '1000',
    ]);
    const [task] = await running(m, 'remote', 1);
    const wid = JSON.parse((await ok(w, ['info', '--format', '{{json .Swarm}}'])).trim()).NodeID;
    assert.equal(task!.NodeID, wid);
    const ctr = task!.Status.ContainerStatus!.ContainerID!;
    assert.equal(await ok(w, ['exec', ctr, 'cat', '/run/secrets/db-pw']), 'hunter2');
    assert.equal(await ok(w, ['exec', ctr, 'cat', '/etc/app.conf']), 'mode=worker\n');
    assert.equal(taskMounts(w).length, 1);
    assert.equal(taskMounts(m).length, 0, 'the manager runs no task that uses it');

    await ok(m, ['service', 'rm', 'remote']);
    await until('the worker’s task files gone', () => (taskMounts(w).length === 0 ? true : undefined), 30_000, 200);
    await ok(m, ['secret', 'rm', 'db-pw']);
  });
});
