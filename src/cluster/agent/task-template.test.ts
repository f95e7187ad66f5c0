// swarmkit's templating on the task's node: the context, ContainerSpec fields, templated secret
// and config data (env, secret, config getters), unknown drivers and template errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { containerBody } from './container-body.ts';
import { taskFiles } from './task-files.ts';
import { expandContainerSpec, templateContext } from './task-template.ts';
import type { TaskRecord } from '../manager/tasks.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const node = { hostname: 'node-a', os: 'linux', architecture: 'x86_64' };
const task = (over: Partial<TaskRecord> = {}, cs: Record<string, unknown> = {}): TaskRecord =>
  ({
    ID: 'task1',
    ServiceID: 'svc1',
    ServiceName: 'web',
    ServiceLabels: { tier: 'front' },
    Slot: 3,
    NodeID: 'node1',
    Spec: {
      ContainerSpec: {
        Image: 'busybox',
        Env: ['GREETING=hello', 'EMPTY='],
        Secrets: [
          { SecretID: 'sid', SecretName: 'pw', File: { Name: 'db-password', UID: '0', GID: '0', Mode: 0o400 } },
          { SecretID: 'tsid', SecretName: 'tmpl', File: { Name: 'tmpl', UID: '0', GID: '0', Mode: 0o400 } },
        ],
        Configs: [{ ConfigID: 'cid', ConfigName: 'app.conf', File: { Name: '/etc/app.conf', UID: '0', GID: '0', Mode: 0o444 } }],
        ...cs,
      },
    },
    ...over,
  }) as unknown as TaskRecord;

test("the context: service, node, task (a global task's slot is its node)", () => {
  const ctx = templateContext(task(), node) as { Service: { Labels: Map<string, string> }; Task: unknown; Node: unknown };
  assert.deepEqual(ctx.Task, { ID: 'task1', Name: 'web.3.task1', Slot: '3' });
  assert.deepEqual(ctx.Node, { ID: 'node1', Hostname: 'node-a', Platform: { Architecture: 'x86_64', OS: 'linux' } });
  assert.equal(ctx.Service.Labels.get('tier'), 'front');
  const global = templateContext(task({ Slot: undefined }), node) as { Task: { Slot: string; Name: string } };
  assert.deepEqual(global.Task, { ID: 'task1', Name: 'web.node1.task1', Slot: 'node1' });
});

test('ContainerSpec: Env values, Hostname, mounts expanded; errors name the field', () => {
  const t = task(
    {},
    {
      Env: ['SLOT={{.Task.Slot}}', 'PLAIN', 'TIER={{.Service.Labels.tier}}'],
      Hostname: '{{.Node.Hostname}}-{{.Task.Slot}}',
      Mounts: [
        {
          Type: 'volume',
          Source: 'data-{{.Task.Slot}}',
          Target: '/data/{{.Service.Name}}',
          VolumeOptions: { Labels: { of: '{{.Task.ID}}' } },
        },
      ],
    },
  );
  const cs = expandContainerSpec(t, node);
  assert.deepEqual(cs.Env, ['SLOT=3', 'PLAIN', 'TIER=front']);
  assert.equal(cs.Hostname, 'node-a-3');
  assert.deepEqual(cs.Mounts, [{ Type: 'volume', Source: 'data-3', Target: '/data/web', VolumeOptions: { Labels: { of: 'task1' } } }]);
  const body = containerBody(t, node);
  assert.equal(body.Hostname, 'node-a-3');
  assert.ok((body.Env as string[]).includes('SLOT=3'));
  // Without node facts the body keeps the templates (the pull only needs the image).
  assert.equal(containerBody(t).Hostname, '{{.Node.Hostname}}-{{.Task.Slot}}');
  assert.throws(
    () => expandContainerSpec(task({}, { Env: ['X={{.Service.Labels.nope}}'] }), node),
    /^Error: expanding env failed: .*map has no entry for key "nope"/,
  );
});

test('templated secret and config data: context, env, secret and config getters; others as stored', () => {
  const payloads = {
    secrets: {
      sid: b64('s3cret'),
      tsid: b64('pw={{secret "db-password"}} svc={{.Service.Name}} slot={{.Task.Slot}} env={{env "GREETING"}}/{{env "NONE"}}'),
    },
    configs: { cid: b64('host={{.Node.Hostname}} os={{.Node.Platform.OS}} pw={{secret "db-password"}} {{config "/etc/app.conf" | len}}') },
    templating: { secrets: { tsid: { Name: 'golang' } }, configs: { cid: { Name: 'golang' } } },
  };
  const files = taskFiles(task(), payloads, node);
  assert.deepEqual(
    files.map((f) => [f.target, f.data.toString()]),
    [
      ['/run/secrets/db-password', 's3cret'],
      ['/run/secrets/tmpl', 'pw=s3cret svc=web slot=3 env=hello/'],
      // {{config}} reads the stored (unexpanded) data.
      [
        '/etc/app.conf',
        `host=node-a os=linux pw=s3cret ${'host={{.Node.Hostname}} os={{.Node.Platform.OS}} pw={{secret "db-password"}} {{config "/etc/app.conf" | len}}'.length}`,
      ],
    ],
  );
});

test('an unknown driver, a missing target or a bad template fail the task with the object named', () => {
  const base = { secrets: { sid: b64('x'), tsid: b64('{{secret "nope"}}') }, configs: { cid: b64('c') } };
  assert.throws(
    () => taskFiles(task(), { ...base, templating: { secrets: { tsid: { Name: 'golang' } }, configs: {} } }, node),
    /^Error: failed to expand templated secret tsid: template: expansion:1:2: executing "expansion" at <secret "nope">: error calling secret: secret target nope not found$/,
  );
  assert.throws(
    () => taskFiles(task(), { ...base, templating: { secrets: {}, configs: { cid: { Name: 'jinja' } } } }, node),
    /^Error: failed to expand templated config cid: unrecognized template type$/,
  );
  assert.throws(
    () =>
      taskFiles(
        task(),
        {
          ...base,
          secrets: { ...base.secrets, tsid: b64('{{.Nope}}') },
          templating: { secrets: { tsid: { Name: 'golang' } }, configs: {} },
        },
        node,
      ),
    /failed to expand templated secret tsid: .*can't evaluate field Nope/,
  );
});
