// `--format` on the shared Go-template implementation: the docker CLI's functions, pipelines,
// Go's `{{-`/`-}}` trimming, the table header, and errors as TemplateError.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile, TemplateError } from './template.ts';

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
