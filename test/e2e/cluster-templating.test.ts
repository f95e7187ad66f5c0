// swarmkit's templating through the docker CLI 28 on one node: a config and a secret created with
// --template-driver golang are expanded per task ({{.Service.Name}}, {{.Task.Slot}}, {{.Node.ID}},
// {{env}}, {{secret}}), the service's Env and Hostname templates too; a template naming a missing
// secret target rejects the task with the object named. And EndpointSpec reads back as dockerd's:
// an unset mode is vip, no EndpointSpec leaves Endpoint.Spec empty.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.3 (cluster-secrets uses .2, cluster-services .1).
const base = 10 + loopbackSlot() * 4;
const ip = `127.0.${base}.3`;

interface TaskView {
  ID: string;
  Slot?: number;
  NodeID: string;
  DesiredState: string;
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
}

async function ok(d: TestDaemon, args: string[], input?: string): Promise<string> {
  const r = await d.docker(args, input === undefined ? {} : { input });
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const tasksOf = async (d: TestDaemon, service: string) =>
  (await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: [service] }))}`)).json() as TaskView[];

describe('secret and config templating', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    await ok(d, ['swarm', 'init', '--advertise-addr', ip, '--listen-addr', `${ip}:2377`]);
  });
  after(async () => d?.cleanup());

  test('templated config and secret, Env and Hostname: expanded per task', async () => {
    await ok(d, ['secret', 'create', 'db_pw', '-'], 'hunter2');
    const tmplSecret = 'user={{env "APP_USER"}} pw={{secret "db-password"}}';
    await ok(d, ['secret', 'create', '--template-driver', 'golang', 'dsn', '-'], tmplSecret);
    const tmplConfig =
      'service={{.Service.Name}} slot={{.Task.Slot}} task={{.Task.Name}} node={{.Node.ID}} os={{.Node.Platform.OS}} tier={{.Service.Labels.tier}}\n';
    await ok(d, ['config', 'create', '--template-driver', 'golang', 'app_conf', '-'], tmplConfig);
    const inspected = JSON.parse(await ok(d, ['config', 'inspect', 'app_conf']))[0];
    assert.deepEqual(inspected.Spec.Templating, { Name: 'golang' });
    assert.equal(Buffer.from(inspected.Spec.Data, 'base64').toString(), tmplConfig, 'the stored data stays the template');
    assert.deepEqual(JSON.parse(await ok(d, ['secret', 'inspect', 'dsn']))[0].Spec.Templating, { Name: 'golang' });

    await ok(d, [
      'service',
      'create',
      '--detach',
      '--name',
      'tpl',
      '--replicas',
      '2',
      '--label',
      'tier=front',
      '--env',
      'APP_USER=alice',
      '--env',
      'SLOT={{.Task.Slot}}',
      '--hostname',
      '{{.Service.Name}}-{{.Task.Slot}}',
      '--secret',
      'source=db_pw,target=db-password',
      '--secret',
      'dsn',
      '--config',
      'source=app_conf,target=/etc/app.conf',
      'busybox',
      'sleep',
      '3600',
    ]);
    const tasks = await until(
      'two running tpl tasks',
      async () => {
        const ts = (await tasksOf(d, 'tpl')).filter((t) => t.DesiredState === 'running');
        const bad = ts.find((t) => t.Status.Err);
        if (bad) throw new Error(`task ${bad.ID}: ${bad.Status.Err}`);
        return ts.length === 2 && ts.every((t) => t.Status.State === 'running') ? ts : undefined;
      },
      90_000,
      300,
    );
    const sid = JSON.parse(await ok(d, ['service', 'inspect', 'tpl']))[0].ID;
    for (const t of tasks) {
      const cid = t.Status.ContainerStatus!.ContainerID!;
      const out = await ok(d, ['exec', cid, 'sh', '-c', 'cat /etc/app.conf /run/secrets/dsn; echo; hostname; echo "$SLOT"']);
      assert.equal(
        out,
        `service=tpl slot=${t.Slot} task=tpl.${t.Slot}.${t.ID} node=${t.NodeID} os=linux tier=front\n` +
          `user=alice pw=hunter2\ntpl-${t.Slot}\n${t.Slot}\n`,
      );
      const labels = JSON.parse(await ok(d, ['inspect', '--format', '{{json .Config.Labels}}', cid]));
      assert.equal(labels['com.docker.swarm.service.id'], sid);
    }
  });

  test('docker-py: a templated config created with templating= reads back with its driver', async () => {
    const script = String.raw`
import docker, json, os
c = docker.APIClient(base_url=os.environ['DOCKER_HOST'], version='1.41')
cid = c.create_config('py_tpl', b'slot={{.Task.Slot}}', templating={'name': 'golang'})['ID']
print(json.dumps(c.inspect_config(cid)['Spec']))
`;
    const r = await run('python3', ['-c', script], { env: { ...process.env, DOCKER_HOST: d.host }, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const spec = JSON.parse(r.stdout);
    assert.deepEqual(spec.Templating, { Name: 'golang' });
    assert.equal(Buffer.from(spec.Data, 'base64').toString(), 'slot={{.Task.Slot}}');
    await ok(d, ['config', 'rm', 'py_tpl']);
  });

  test('a template naming a secret the task does not have rejects the task, the object named', async () => {
    const sid = (await ok(d, ['secret', 'create', '--template-driver', 'golang', 'broken', '-'], '{{secret "nope"}}')).trim();
    await ok(d, ['service', 'create', '--detach', '--name', 'broken', '--secret', 'broken', 'busybox', 'sleep', '3600']);
    const err = await until(
      'the broken task rejected',
      async () => (await tasksOf(d, 'broken')).find((t) => t.Status.State === 'rejected')?.Status.Err,
      60_000,
      300,
    );
    assert.match(err, new RegExp(`failed to expand templated secret ${sid}: .*secret target nope not found`));
    await ok(d, ['service', 'rm', 'broken']);
  });

  test('EndpointSpec: an unset mode reads vip; none leaves Endpoint.Spec empty', async () => {
    const body = (name: string, extra: object) => ({
      Name: name,
      TaskTemplate: { ContainerSpec: { Image: 'busybox', Args: ['sleep', '3600'] } },
      ...extra,
    });
    const a = await d.request('POST', '/v1.51/services/create', { body: body('ep-unset', { EndpointSpec: {} }) });
    assert.equal(a.status, 201, a.text());
    const b = await d.request('POST', '/v1.51/services/create', { body: body('ep-none', {}) });
    assert.equal(b.status, 201, b.text());
    const unset = (await d.request('GET', '/v1.51/services/ep-unset')).json();
    assert.deepEqual(unset.Spec.EndpointSpec, { Mode: 'vip' });
    assert.deepEqual(unset.Endpoint.Spec, { Mode: 'vip' });
    const none = (await d.request('GET', '/v1.51/services/ep-none')).json();
    assert.equal(none.Spec.EndpointSpec, undefined);
    assert.deepEqual(none.Endpoint.Spec, {});
    const bad = await d.request('POST', '/v1.51/services/create', { body: body('ep-bad', { EndpointSpec: { Mode: 'roundrobin' } }) });
    assert.equal(bad.status, 400, bad.text());
    assert.equal(bad.json().message, 'invalid resolution mode: "roundrobin"');
    await ok(d, ['service', 'rm', 'ep-unset', 'ep-none']);
  });
});
