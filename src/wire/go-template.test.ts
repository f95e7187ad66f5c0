// The Go text/template subset: fields (structs and maps, missingkey=error), pipelines, literals,
// blocks, trimming, comments, builtins, caller functions, errors, bounded nesting.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoTemplateError, parseGoTemplate } from './go-template.ts';

const dot = {
  Service: {
    ID: 'svc1',
    Name: 'web',
    Labels: new Map([
      ['tier', 'front'],
      ['env', 'prod'],
    ]),
  },
  Task: { ID: 't1', Name: 'web.2.t1', Slot: '2' },
  List: ['a', 'b'],
  Empty: '',
  Nothing: [],
};
const run = (src: string, funcs = {}) => parseGoTemplate('expansion', src, funcs).execute(dot);

test('fields, maps, index, literals and printing', () => {
  assert.equal(run('{{.Service.Name}}-{{.Task.Slot}}'), 'web-2');
  assert.equal(run('{{.Service.Labels.tier}} {{index .Service.Labels "env"}}'), 'front prod');
  assert.equal(run('{{.Service.Labels}}'), 'map[env:prod tier:front]');
  assert.equal(run('{{.List}} {{len .List}} {{index .List 1}}'), '[a b] 2 b');
  assert.equal(run('{{"quoted\\n"}}{{`raw`}} {{42}} {{true}}'), 'quoted\nraw 42 true');
  assert.equal(run('no actions at all'), 'no actions at all');
  assert.equal(run(''), '');
});

test('pipelines, printf, builtins', () => {
  assert.equal(run('{{.Service.Name | printf "%s-%s" "x"}}'), 'x-web');
  assert.equal(run('{{printf "%d/%q/%5s" 7 .Task.ID "ab"}}'), '7/"t1"/   ab');
  assert.equal(run('{{if and .Service.Name (not .Empty)}}yes{{end}}'), 'yes');
  assert.equal(run('{{or .Empty "fallback"}}'), 'fallback');
  assert.equal(run('{{if eq .Task.Slot "1" "2"}}match{{end}}'), 'match');
  assert.equal(run('{{if ne .Task.Slot "2"}}a{{else if eq .Task.Slot "3"}}b{{else if eq .Task.Slot "2"}}c{{else}}d{{end}}'), 'c');
  assert.equal(run('{{println .Task.ID "x"}}'), 't1 x\n');
});

test('blocks: range, with, else; trimming and comments', () => {
  assert.equal(run('{{range .List}}<{{.}}>{{end}}'), '<a><b>');
  assert.equal(run('{{range .Service.Labels}}{{.}},{{end}}'), 'prod,front,');
  assert.equal(run('{{range .Nothing}}x{{else}}none{{end}}'), 'none');
  assert.equal(run('{{len (printf "%s%s" (index .List 0) (printf "(%s)" .Task.ID))}}'), '5');
  assert.equal(run('{{with .Service}}{{.Name}}{{end}}{{with .Empty}}x{{else}}empty{{end}}'), 'webempty');
  assert.equal(run('a  {{- .Task.Slot -}}  b {{/* a comment */}}c'), 'a2b c');
  assert.equal(run('line1\n{{- /* gone */ -}}\nline2'), 'line1line2');
});

test('caller functions, and errors as Go words them', () => {
  const funcs = { env: (k: unknown) => (k === 'HOME' ? '/root' : ''), join: (sep: unknown, ...s: unknown[]) => s.join(String(sep)) };
  assert.equal(run('{{env "HOME"}}:{{env "NOPE"}}:{{join "," "a" "b"}}', funcs), '/root::a,b');
  const fails = (src: string, re: RegExp) =>
    assert.throws(
      () =>
        run(src, {
          boom: () => {
            throw new Error('no such thing');
          },
        }),
      (e: Error) => e instanceof GoTemplateError && re.test(e.message),
      src,
    );
  fails(
    '{{.Service.Labels.missing}}',
    /^template: expansion:1:10: executing "expansion" at <\.Service\.Labels\.missing>: map has no entry for key "missing"$/,
  );
  fails('{{.Service.Nope}}', /can't evaluate field Nope/);
  fails('x\n {{nofunc 1}}', /^template: expansion:2: function "nofunc" not defined$/);
  // Refused by the parser, as Go's: before any execution, wherever the call sits in the pipeline.
  assert.throws(() => parseGoTemplate('n', '{{.A | nofunc}}'), /^GoTemplateError: template: n:1: function "nofunc" not defined$/);
  assert.throws(() => parseGoTemplate('n', '{{if (eq .A (nofunc "x"))}}{{end}}'), /function "nofunc" not defined/);
  assert.equal(
    parseGoTemplate('n', '{{"nofunc" | len}} {{.A.b_c}} {{$.A}} {{1.5}} {{true}}').execute({ A: { b_c: 'x' } }),
    '6 x {x} 1.5 true',
  );
  fails('{{boom}}', /error calling boom: no such thing/);
  fails('{{if .Task.ID}}unclosed', /unexpected EOF/);
  fails('{{end}}', /unexpected \{\{end\}\}/);
  fails('{{.Task.ID', /unclosed action/);
  // Nesting is bounded (no unbounded recursion over the input).
  fails('{{if 1}}'.repeat(200) + '{{end}}'.repeat(200), /nesting deeper than/);
  fails('{{' + '('.repeat(200) + '1' + ')'.repeat(200) + '}}', /nesting deeper than/);
  fails('{{(1}}', /unclosed left paren/);
  fails('{{1)}}', /unexpected right paren/);
});

test("objects: 'map' (the CLI's --format over JSON answers): printing, range, len, truth, index, nil chains", () => {
  const run = (src: string, d: unknown) => parseGoTemplate('', src, {}, { objects: 'map' }).execute(d);
  const d = { Name: 'c1', Labels: { b: '2', a: '1' }, Empty: {}, State: null, List: [1, 2] };
  assert.equal(run('{{.Labels}}', d), 'map[a:1 b:2]');
  assert.equal(run('{{range .Labels}}[{{.}}]{{end}}', d), '[1][2]');
  assert.equal(run('{{len .Labels}} {{len .List}}', d), '2 2');
  assert.equal(run('{{if .Empty}}y{{else}}n{{end}} {{if .Labels}}y{{end}}', d), 'n y');
  assert.equal(run('{{index .Labels "a"}} {{index .Labels "zz"}} {{index .State "x"}}', d), '1 <no value> <no value>');
  assert.equal(run('{{.State.Running}}', d), '<no value>');
  assert.throws(() => run('{{.Nope}}', d), /can't evaluate field Nope/);
  // The daemon's reading is unchanged: a plain object is a struct, a field of nil is an error.
  assert.equal(parseGoTemplate('', '{{.Labels}}').execute(d), '{2 1}');
  assert.throws(() => parseGoTemplate('', '{{.State.Running}}').execute(d), /nil pointer evaluating \.Running/);
});

test('variables: range $k, $v := over maps and lists, range $v :=, $ for the root; an undeclared one is an error', () => {
  const d = {
    Name: 'n',
    Labels: new Map([
      ['b', '2'],
      ['a', '1'],
    ]),
    List: ['x', 'y'],
  };
  assert.equal(parseGoTemplate('t', '{{range $k, $v := .Labels}}{{$k}}={{$v}};{{end}}').execute(d), 'a=1;b=2;');
  assert.equal(parseGoTemplate('t', '{{range $i, $e := .List}}{{$i}}:{{$e}} {{end}}').execute(d), '0:x 1:y ');
  assert.equal(parseGoTemplate('t', '{{range $e := .List}}{{$e}}{{$.Name}}{{end}}').execute(d), 'xnyn');
  assert.equal(parseGoTemplate('t', '{{range .List}}{{$.Name}}{{end}}').execute(d), 'nn');
  assert.throws(() => parseGoTemplate('t', '{{$x}}').execute(d), /undefined variable "\$x"/);
});

test('variables: {{$x := …}} declares and prints nothing, {{$x = …}} assigns, if/with declare; scopes end at {{end}}', () => {
  const d = { Name: 'n', Os: 'linux', Inner: { Os: 'inner' }, List: ['x', 'y'] };
  const run = (src: string) => parseGoTemplate('version', src, {}, { objects: 'map' }).execute(d);
  assert.equal(run('{{$x := .Name}}[{{$x}}]'), '[n]');
  assert.equal(run('{{$x := 1}}{{$x = 2}}{{$x}}'), '2');
  // An assignment inside a block reaches the outer variable; a declaration there shadows it until {{end}}.
  assert.equal(run('{{$x := 1}}{{if true}}{{$x = 3}}{{$y := 4}}{{$y}}{{end}}{{$x}}'), '43');
  assert.equal(run('{{$x := 1}}{{if true}}{{$x := 5}}{{$x}}{{end}}{{$x}}'), '51');
  assert.equal(run('{{if $v := .Os}}{{$v}}{{else}}no {{$v}}{{end}}'), 'linux');
  assert.equal(run('{{with $c := .Inner}}{{$c.Os}} {{.Os}}{{end}}'), 'inner inner');
  assert.equal(run('{{$n := 0}}{{range $i, $e := .List}}{{$n = $i}}{{end}}{{$n}}'), '1');
  assert.equal(run('{{range $e := .List}}{{$t := printf "<%s>" $e}}{{$t}}{{end}}'), '<x><y>');
  assert.equal(run('{{$s := "a $b"}}{{$s}}'), 'a $b');
  // Go refuses at parse time, naming the line only.
  const refused = (src: string, msg: string) => assert.throws(() => parseGoTemplate('version', src), { message: msg });
  refused('{{$x}}', 'template: version:1: undefined variable "$x"');
  refused('{{if $v := .Os}}{{end}}{{$v}}', 'template: version:1: undefined variable "$v"');
  // An assignment to an undeclared variable passes the parse; its execution fails where Go places it.
  assert.throws(() => run('\n{{$x = 1}}'), { message: 'template: version:2:7: executing "version" at <1>: undefined variable: $x' });
  assert.throws(() => run('{{range $k, $v := .Name}}{{end}}'), {
    message: 'template: version:1:18: executing "version" at <.Name>: range can\'t iterate over n',
  });
  refused('{{$a, $b := 1}}', 'template: version:1: too many declarations in command');
  refused('{{range .List}}{{$e := 1}}{{end}}{{$e}}', 'template: version:1: undefined variable "$e"');
});

test("a field chain on a parenthesised group, as Go's ChainNode: (index .X 1).Name", () => {
  const dot = {
    Components: [
      { Name: 'Engine', Version: '1.0' },
      { Name: 'containerd', Version: '1.6' },
    ],
    Inner: { Os: 'linux' },
  };
  const render = (src: string) =>
    parseGoTemplate('t', src, { index: (a: unknown, i: unknown) => (a as unknown[])[i as number] }).execute(dot);
  assert.equal(render('{{(index .Components 1).Version}}'), '1.6');
  assert.equal(render('{{ (index .Components 0).Name }} {{(.Inner).Os}}'), 'Engine linux');
  assert.equal(render('{{printf "%s" (index .Components 1).Name}}'), 'containerd');
  assert.throws(() => render('{{(index .Components 1).Nope}}'), /can't evaluate field Nope/);
});
