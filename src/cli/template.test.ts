// `--format` on the shared Go-template implementation: the docker CLI's functions, pipelines,
// Go's `{{-`/`-}}` trimming, the table header, errors as TemplateError naming the Go types the
// docker CLI runs its templates over, and `events`' check of its template before it streams.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExitError } from './args.ts';
import { DOCKER_INFO, EVENT_MESSAGE, ROW, VERSION_INFO } from './go-types.ts';
import { compile, eventsTemplate, TemplateError } from './template.ts';

test('--format: docker functions, pipelines and trimming on JSON answers; table header; errors', () => {
  const dot = { Name: 'web', Env: ['A=1', 'B=2'], Config: { Labels: { tier: 'front' } }, Ports: null };
  assert.equal(compile('{{.Name | upper}} {{lower "X"}} {{title "ab cd"}}').render(dot), 'WEB x Ab Cd');
  assert.equal(compile('{{join .Env ";"}}|{{json .Config.Labels}}|{{json .Ports}}').render(dot), 'A=1;B=2|{"tier":"front"}|null');
  assert.equal(compile('{{range .Env}}x{{end}}').render(dot), 'xx');
  assert.equal(compile('a {{- .Name -}} b').render(dot), 'awebb');
  assert.equal(compile('{{truncate .Name 2}}{{pad .Name 1 1}}{{index (split "a:b" ":") 1}}').render(dot), 'we web b');
  const t = compile('table {{.Name}}\\t{{.Env}}');
  assert.equal(t.table, true);
  assert.equal(t.header({ Name: 'NAME' }), 'NAME\tENV');
  assert.equal(t.render(dot), 'web\t[A=1 B=2]');
  assert.throws(() => compile('{{nosuch .Name}}').render(dot), TemplateError);
  assert.throws(() => compile('{{if .Name}}').render(dot), TemplateError);
});

test('a failed field access names the Go type: the row context, a described field, or the value', () => {
  const fails = (format: string, dot: unknown, type: Parameters<typeof compile>[1], words: string) =>
    assert.throws(
      () => compile(format, type).render(dot),
      (e: Error) => e instanceof TemplateError && e.message.endsWith(words),
    );
  const row = { ID: 'abc', Self: true, Size: 3 };
  fails('{{.Nope}}', row, { type: ROW.node }, "can't evaluate field Nope in type *node.nodeContext");
  fails('{{.ID.X}}', row, { type: ROW.node }, "can't evaluate field X in type string");
  fails('{{.Self.X}}', row, { type: ROW.node }, "can't evaluate field X in type bool");
  fails(
    '{{.Nope}}',
    row,
    { errors: 'ps', type: (r) => ((r as typeof row).Size ? ROW.container : undefined) },
    'in type *formatter.ContainerContext',
  );
  // Without a type the words stay Go's without it.
  fails('{{.Nope}}', row, {}, "can't evaluate field Nope");
  const info = { Containers: 1, MemTotal: 2, Swarm: { LocalNodeState: 'inactive', Nodes: 0 }, Labels: [], Name: 'h' };
  fails('{{.Swarm.Nope}}', info, { type: DOCKER_INFO }, 'in type swarm.Info');
  fails('{{with .Swarm}}{{.Nope}}{{end}}', info, { type: DOCKER_INFO }, 'in type swarm.Info');
  fails('{{.MemTotal.X}}', info, { type: DOCKER_INFO }, 'in type int64');
  fails('{{.Containers.X}}', info, { type: DOCKER_INFO }, 'in type int');
  fails('{{.Swarm.LocalNodeState.X}}', info, { type: DOCKER_INFO }, 'in type swarm.LocalNodeState');
  fails('{{.Labels.X}}', info, { type: DOCKER_INFO }, 'in type []string');
  const version = { Client: { Version: '1' }, Server: { Components: [{ Name: 'Engine' }], Platform: { Name: '' } } };
  fails('{{range .Server.Components}}{{.X}}{{end}}', version, { type: VERSION_INFO }, 'in type types.ComponentVersion');
  fails('{{.Server.Platform.X}}', version, { type: VERSION_INFO }, 'in type struct { Name string }');
});

test('events: the template is parsed and run over an empty message first; a failure is status 64', () => {
  const empty = { Type: '', Action: '', Actor: { ID: '', Attributes: null }, Time: 0 };
  const refused = (format: string, words: string) =>
    assert.throws(
      () => eventsTemplate(format, empty, EVENT_MESSAGE),
      (e: Error) => e instanceof ExitError && e.status === 64 && e.message === words,
    );
  refused('{{.Nope}}', 'Error parsing format: template: :1:2: executing "" at <.Nope>: can\'t evaluate field Nope in type *events.Message');
  refused(
    '{{.Actor.Nope}}',
    'Error parsing format: template: :1:8: executing "" at <.Actor.Nope>: can\'t evaluate field Nope in type events.Actor',
  );
  refused('{{nope}}', 'Error parsing format: template: :1: function "nope" not defined');
  const t = eventsTemplate('{{.Type}} {{.Actor.Attributes.name}}', empty, EVENT_MESSAGE);
  assert.equal(t.render({ ...empty, Type: 'container' }), 'container <no value>');
  // While streaming, a failure is Go's words bare.
  const later = eventsTemplate('{{if .Type}}{{.Type.X}}{{end}}', empty, EVENT_MESSAGE);
  assert.throws(
    () => later.render({ ...empty, Type: 'container' }),
    (e: Error) =>
      e instanceof TemplateError && e.message === 'template: :1:19: executing "" at <.Type.X>: can\'t evaluate field X in type events.Type',
  );
});
