// Inspect templates over the Go types the docker CLI decodes into (go-struct.ts): how Go's
// text/template reads and prints them (the e2e test client-cli-inspect-templates compares the same
// with the docker CLI on a daemon).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile } from '../template.ts';
import { typed } from './go-struct.ts';

const render = (format: string, raw: unknown, type: string) => compile(format, { tables: false }).render(typed(raw, type));
const failure = (format: string, raw: unknown, type: string) => {
  try {
    render(format, raw, type);
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
};

const service = {
  ID: 'abc',
  Version: { Index: 12 },
  CreatedAt: '2026-11-29T04:55:00.123456780Z',
  UpdatedAt: '2026-11-29T04:55:01Z',
  Spec: {
    Name: 'web',
    Labels: { x: '1' },
    TaskTemplate: { ContainerSpec: { Image: 'busybox', Args: ['sleep', '1'] }, ForceUpdate: 0 },
    Mode: { Replicated: { Replicas: 2 } },
    UpdateConfig: { Parallelism: 1, FailureAction: 'pause', Monitor: 5_000_000_000, MaxFailureRatio: 0, Order: 'stop-first' },
  },
  Endpoint: { Spec: { Mode: 'vip' } },
};

test('fields of a struct, embedded ones promoted; times, durations, Stringers as Go prints them', () => {
  assert.equal(render('{{.ID}} {{.Spec.Name}} {{.Version}} {{.Version.Index}}', service, 'swarm.Service'), 'abc web 12 12');
  assert.equal(
    render('{{.CreatedAt}}|{{.UpdatedAt}}', service, 'swarm.Service'),
    '2026-11-29 04:55:00.12345678 +0000 UTC|2026-11-29 04:55:01 +0000 UTC',
  );
  assert.equal(render('{{.Meta}}', service, 'swarm.Service'), '{12 2026-11-29 04:55:00.12345678 +0000 UTC 2026-11-29 04:55:01 +0000 UTC}');
  assert.equal(render('{{.Spec.Annotations}}', service, 'swarm.Service'), '{web map[x:1]}');
  assert.equal(render('{{.Spec.UpdateConfig}}', service, 'swarm.Service'), '{1 0s pause 5s 0 stop-first}');
  assert.equal(render('{{.Spec.Mode.Replicated.Replicas}} {{.Spec.Mode.Global}}', service, 'swarm.Service'), '2 <nil>');
  assert.equal(
    render('{{.Spec.TaskTemplate.ContainerSpec.Args}} {{.Spec.TaskTemplate.Networks}}', service, 'swarm.Service'),
    '[sleep 1] []',
  );
  assert.equal(render('{{.Endpoint.Spec}}', service, 'swarm.Service'), '{vip []}');
  assert.equal(
    render('{{.CreatedAt.Format "Jan 2, 2006 at 3:04pm (MST) Z07:00 .000 .999 Monday 002"}}', service, 'swarm.Service'),
    'Nov 29, 2026 at 4:55am (UTC) Z .123 .123 Sunday 333',
  );
  assert.match(failure('{{.ID.Format "x"}}', service, 'swarm.Service'), /can't give argument to non-function \.ID\.Format$/);
});

test('unknown fields name the Go type; nil pointers; a missing map key is <no value>, its index the zero value', () => {
  assert.match(failure('{{.Foo}}', service, 'swarm.Service'), /at <\.Foo>: can't evaluate field Foo in type swarm\.Service$/);
  assert.match(failure('{{.Spec.Foo}}', service, 'swarm.Service'), /can't evaluate field Foo in type swarm\.ServiceSpec$/);
  assert.match(failure('{{.UpdateStatus.State}}', service, 'swarm.Service'), /nil pointer evaluating \*swarm\.UpdateStatus\.State$/);
  assert.match(failure('{{.UpdateStatus.Foo}}', service, 'swarm.Service'), /can't evaluate field Foo in type \*swarm\.UpdateStatus$/);
  assert.match(failure('{{.Spec.Labels.x.Foo}}', service, 'swarm.Service'), /can't evaluate field Foo in type string$/);
  assert.match(failure('{{.Spec.Name.Foo}}', service, 'swarm.Service'), /can't evaluate field Foo in type string$/);
  assert.equal(
    render('{{.Spec.Labels.nope}}|{{index .Spec.Labels "nope"}}|{{.UpdateStatus}}', service, 'swarm.Service'),
    '<no value>||<nil>',
  );
  const node = { Spec: { Role: 'manager' }, Status: { State: 'ready', Addr: '10.0.0.1' } };
  assert.equal(render('{{.Status}} {{.Spec}}', node, 'swarm.Node'), '{ready  10.0.0.1} {{ map[]} manager }');
  assert.match(failure('{{.Spec.Role.X}}', node, 'swarm.Node'), /can't evaluate field X in type swarm\.NodeRole$/);
});

test('json writes the Go type back: field order, omitempty, embedded structs flattened, nil maps null', () => {
  assert.equal(render('{{json .Version}} {{json .CreatedAt}}', service, 'swarm.Service'), '{"Index":12} "2026-11-29T04:55:00.12345678Z"');
  const restart = { Spec: { TaskTemplate: { RestartPolicy: { Condition: 'any', Delay: 5_000_000_000 } } } };
  assert.equal(render('{{json .Spec.TaskTemplate.RestartPolicy}}', restart, 'swarm.Service'), '{"Condition":"any","Delay":5000000000}');
  assert.equal(render('{{json .Spec.Annotations}}', service, 'swarm.Service'), '{"Name":"web","Labels":{"x":"1"}}');
  assert.equal(
    render('{{json .Spec.UpdateConfig}}', service, 'swarm.Service'),
    '{"Parallelism":1,"FailureAction":"pause","Monitor":5000000000,"MaxFailureRatio":0,"Order":"stop-first"}',
  );
  const volume = { Name: 'v', Driver: 'local', Labels: null, Mountpoint: '/m', Options: {}, Scope: 'local' };
  assert.equal(
    render('{{json .}}', volume, 'volume.Volume'),
    '{"Driver":"local","Labels":null,"Mountpoint":"/m","Name":"v","Options":{},"Scope":"local"}',
  );
  assert.equal(render('{{.}}', volume, 'volume.Volume'), '{<nil>  local map[] /m v map[] local map[] <nil>}');
});

test('file modes, byte slices and container types: embedded pointers, named types, arrays', () => {
  const secretRef = { File: { Name: 'f', UID: '0', GID: '0', Mode: 0o444 }, SecretID: 'i', SecretName: 'n' };
  assert.equal(render('{{.File.Mode}}', secretRef, 'swarm.SecretReference'), '-r--r--r--');
  assert.equal(render('{{.Spec.Data}} {{json .Spec.Data}}', { Spec: { Data: 'aGk=' } }, 'swarm.Config'), '[104 105] "aGk="');
  const container = {
    Id: 'c1',
    Name: '/x',
    State: { Status: 'running', Running: true },
    Config: { Labels: { a: '1' }, Cmd: ['sh'], ExposedPorts: { '80/tcp': {} } },
    HostConfig: { Memory: 5, RestartPolicy: { Name: 'no' }, ConsoleSize: [0, 0] },
    NetworkSettings: { IPAddress: '172.17.0.2' },
  };
  const t = 'container.InspectResponse';
  assert.equal(render('{{.ID}} {{.Name}} {{.State.Status}} {{.State.Health}}', container, t), 'c1 /x running <nil>');
  assert.equal(render('{{.Config.Labels.nope}} {{.Config.Cmd}} {{.Config.ExposedPorts}}', container, t), '<no value> [sh] map[80/tcp:{}]');
  assert.equal(render('{{.HostConfig.Memory}} {{.HostConfig.RestartPolicy}} {{.HostConfig.ConsoleSize}}', container, t), '5 {no 0} [0 0]');
  assert.equal(render('{{.NetworkSettings.IPAddress}}', container, t), '172.17.0.2');
  assert.match(failure('{{.Id}}', container, t), /can't evaluate field Id in type container\.InspectResponse$/);
});
