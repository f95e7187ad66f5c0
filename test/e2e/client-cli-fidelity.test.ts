// The `engine` CLI's answers compared word for word with the docker CLI 28's on one daemon, where
// the two once differed: Go templates with variables (declared, assigned, declared by if/with/range,
// refused out of scope) and how each command words a template's failure, naming the Go type it runs
// over; `events` checking its template before it subscribes; `inspect` of cluster
// objects written back from their Go type (field order, omitempty, zero values) by `service`,
// `node`, `secret` and `config inspect`, and the top-level `inspect` finding services, tasks, nodes,
// secrets and configs (raw, as docker prints them) with --type's refusals; `stack deploy`'s refusal
// of a compose file the compose schema of its declared version refuses.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REPO_ROOT, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';
import { until } from '../helpers/until.ts';

const ENGINE = join(REPO_ROOT, 'bin/engine');
// Loopback address of this file: 127.0.<n>.7 (the other cluster files use .1 to .6).
const ip = `127.0.${10 + loopbackSlot() * 4}.7`;

describe('engine CLI answers as the docker CLI: templates, cluster inspect, compose schema', { timeout: 300_000 }, () => {
  let d: TestDaemon;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const both = async (args: string[]) => {
    const [e, k] = await Promise.all([
      run(ENGINE, args, { env: { ...env, ENGINE_HOST: d.host }, timeoutMs: 120_000, cwd: work }),
      run('docker', args, { env: { ...env, DOCKER_HOST: d.host }, timeoutMs: 120_000, cwd: work }),
    ]);
    return { engine: e, docker: k };
  };
  /** Both clients give the same output, errors and status. */
  const same = async (args: string[]) => {
    const { engine, docker } = await both(args);
    assert.deepEqual(
      { code: engine.code, stdout: engine.stdout, stderr: engine.stderr },
      { code: docker.code, stdout: docker.stdout, stderr: docker.stderr },
      `engine vs docker: ${args.join(' ')}`,
    );
    return docker.stdout;
  };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-cli-fidelity-'));
    d = await startDaemon();
    await loadBusybox(d);
    env = { PATH: process.env.PATH, HOME: work, ENGINE_CONFIG: join(work, 'engine-config'), DOCKER_CONFIG: join(work, 'docker-config') };
    const r = await d.docker(['run', '-d', '--name', 'fid1', '-l', 'b=2', '-l', 'a=1', 'busybox', 'sleep', '1000']);
    assert.equal(r.code, 0, r.stderr);
    const v = await d.docker(['volume', 'create', 'fidvol']);
    assert.equal(v.code, 0, v.stderr);
  });
  after(async () => {
    await d?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('templates with variables: declared, assigned, declared by if/with/range, scoped to their block', async () => {
    for (const cmd of [['ps'], ['container', 'ls', '-a'], ['images'], ['network', 'ls']]) {
      await same([...cmd, '--format', '{{$x := .ID}}[{{$x}}]']);
      await same([...cmd, '--format', 'table {{$x := .ID}}{{$x}}\t{{if $y := .ID}}{{$y}}{{end}}']);
      await same([...cmd, '--format', '{{$n := 0}}{{$n = 7}}{{$n}} {{with $i := .ID}}{{$i}}{{end}}']);
    }
    await same(['inspect', 'fid1', '--format', '{{range $k, $v := .Config.Labels}}{{$k}}={{$v}};{{end}}']);
    await same(['inspect', 'fid1', '--format', '{{$c := .Config}}{{range $i, $e := $c.Cmd}}{{$i}}:{{$e}} {{end}}{{$.Name}}']);
    await same(['inspect', 'fid1', '--format', '{{$x := 1}}{{if true}}{{$x = 3}}{{$y := 4}}{{$y}}{{end}}{{$x}}']);
    await same(['inspect', 'fid1', '--format', 'table {{.ID}}']);
    await same(['version', '--format', '{{$v := .Client.Os}}{{$v}}']);
    await same(['info', '--format', '{{with $s := .Swarm}}{{$s.LocalNodeState}}{{end}}']);
  });

  test('a template failure is worded per command as the docker CLI words it', async () => {
    for (const cmd of [
      ['ps'],
      ['images'],
      ['network', 'ls'],
      ['version'],
      ['info'],
      ['inspect', 'fid1'],
      ['image', 'inspect', 'busybox'],
    ]) {
      await same([...cmd, '--format', '{{$x}}']);
      await same([...cmd, '--format', '{{if .ID}}{{end}}{{$v}}']);
      await same([...cmd, '--format', '{{$a, $b := 1}}']);
      await same([...cmd, '--format', '{{$x = 1}}']);
      // Go's parser names the line only.
      for (const format of ['{{if}}', '{{end}}', '{{}}', 'a\n{{if .ID}}\nb', '{{.ID}}\n{{else}}']) await same([...cmd, '--format', format]);
    }
    // A field that is not there names the Go type the docker CLI runs the template over: the
    // list's formatter context, info's and version's structs, a field's string, bool or int.
    for (const cmd of [
      ['ps'],
      ['images'],
      ['network', 'ls'],
      ['volume', 'ls'],
      ['version'],
      ['info'],
      ['history', 'busybox'],
      ['system', 'df'],
      ['system', 'df', '-v'],
      ['context', 'ls'],
      ['stats', '--no-stream'],
    ])
      for (const format of ['{{.Nope.X}}', '{{.ID.X}}', '{{nope}}', '{{.Name | nope}}']) await same([...cmd, '--format', format]);
    for (const format of [
      '{{.Swarm.X}}',
      '{{.Containers.X}}',
      '{{.MemTotal.X}}',
      '{{.Debug.X}}',
      '{{.Plugins.X}}',
      '{{.RegistryConfig.X}}',
      '{{.Labels.X}}',
      '{{.Swarm.LocalNodeState.X}}',
      '{{with .Swarm}}{{.Y}}{{end}}',
    ])
      await same(['info', '--format', format]);
    for (const format of [
      '{{.Client.X}}',
      '{{.Server.X}}',
      '{{.Server.Experimental.X}}',
      '{{.Server.Components.X}}',
      '{{range .Server.Components}}{{.X}}{{end}}',
      '{{.Server.Platform.X}}',
    ])
      await same(['version', '--format', format]);
    // ps runs its template over an empty row before it lists (no container needed), even with -q.
    await same(['ps', '--filter', 'name=nosuch', '--format', '{{.Nope}}']);
    await same(['ps', '-q', '--format', '{{.Names.X}}']);
    await same(['ps', '-q', '--filter', 'name=fid1', '--format', '{{.Names}}']);
    await same(['inspect', 'fid1', '--format', '{{.Nope.X}}']);
    await same(['inspect', 'fid1', '--format', '{{range $k, $v := .Name}}{{end}}']);
  });

  test('events parses and runs its --format over an empty message before it subscribes; messages read as events.Message', async () => {
    // Without --until the stream would not end: each answer comes at once, status 64.
    for (const format of ['{{.Nope}}', '{{.Actor.Nope}}', '{{.Time.X}}', '{{.Type.X}}', '{{.Actor.ID.X}}', '{{nope}}', '{{if}}'])
      await same(['events', '--format', format]);
    const until = String(Math.floor(Date.now() / 1000) + 1);
    const past = ['events', '--since', '0', '--until', until, '--filter', 'container=fid1'];
    const out = await same([
      ...past,
      '--format',
      '{{.Type}} {{.Action}} {{.Actor.ID}} {{.Actor.Attributes.name}} {{.Time}} {{.Scope}} [{{.Status}}]',
    ]);
    assert.match(out, /^container create [0-9a-f]{64} fid1 \d+ local \[create\]$/m);
    // A failure while streaming: what the template wrote and a newline, then Go's words bare.
    await same([...past, '--format', 'a{{if .Type}}{{.Type.X}}{{end}}']);
  });

  test('cluster objects: service/node/secret/config inspect as the Go types; inspect finds them raw; stack deploy checks the schema', async () => {
    const init = await d.docker(['swarm', 'init', '--advertise-addr', ip, '--listen-addr', `${ip}:2377`]);
    assert.equal(init.code, 0, init.stderr);
    const svc = await d.docker([
      'service',
      'create',
      '-q',
      '--detach',
      '--name',
      'fidweb',
      '--label',
      'x=<&>',
      '--env',
      'E=1',
      'busybox',
      'sleep',
      '1000',
    ]);
    assert.equal(svc.code, 0, svc.stderr);
    for (const [kind, data] of [
      ['secret', 'hush'],
      ['config', 'conf'],
    ] as const) {
      const r = await run('docker', [kind, 'create', '--label', 'k=v', `fid-${kind}`, '-'], {
        env: { ...env, DOCKER_HOST: d.host },
        input: data,
      });
      assert.equal(r.code, 0, r.stderr);
    }
    const task = await until(
      'a task of fidweb',
      async () => (await d.docker(['service', 'ps', '-q', 'fidweb'])).stdout.trim().split('\n')[0] || undefined,
      60_000,
      200,
    );
    const svcJson = await same(['service', 'inspect', 'fidweb']);
    assert.match(svcJson, /"x": "\\u003c\\u0026\\u003e"/); // Go's escapes
    await same(['node', 'inspect', 'self']);
    await same(['secret', 'inspect', 'fid-secret']);
    await same(['config', 'inspect', 'fid-config']);
    await same(['service', 'inspect', 'fidweb', 'nosuch']);
    for (const name of ['fidweb', task, 'fid-secret', 'fid-config', 'fid1', 'nosuch']) await same(['inspect', name]);
    await same(['inspect', '--type', 'task', task]);
    await same(['inspect', '--type', 'node', 'self']);
    await same(['inspect', '--type', 'bogus', 'x']);
    await same(['inspect', '--type=', 'x']);
    await same(['inspect', '--format', '{{.Spec.Name}}', 'fidweb', 'fid-config']);

    // stack deploy checks each compose file against the compose schema first (no tie between two
    // failures of one depth here: the docker CLI picks among those in Go's map order).
    const service = (extra: string) => `version: "3.8"\nservices:\n  web:\n    image: busybox\n    ${extra}\n`;
    const refused = [
      service('foo: 1'),
      service('ports: "80"'),
      service('deploy: {replicas: "x"}'),
      service('deploy: 5'),
      service('deploy: {resources: {limits: {cpus: 0.5}}}'),
      service('environment: 3'),
      service('ports: [{target: 80, foo: 1}]'),
      service('ulimits: {nofile: "x"}'),
      service('logging: {options: {a: [1]}}'),
      service('healthcheck: {interval: 5}'),
      'version: "3.8"\nbogus: 1\nservices:\n  web:\n    image: busybox\n',
      'version: "3.8"\nservices:\n  web:\n    image: busybox\nnetworks:\n  back:\n    driver: overlay\n    bar: 2\n',
      'version: "3.8"\nservices: 5\n',
      'version: "3.8"\nservices: {}\nvolumes: {v: 5}\n',
    ];
    for (const [n, text] of refused.entries()) {
      await writeFile(join(work, `bad${n}.yml`), text);
      const out = await same(['stack', 'deploy', '-c', `bad${n}.yml`, 'fidstack']);
      assert.equal(out, '', text);
    }
    // The list commands of cluster mode name their formatter contexts too.
    await writeFile(join(work, 'ok.yml'), 'version: "3.8"\nservices:\n  a:\n    image: busybox\n    command: sleep 1000\n');
    const stack = await d.docker(['stack', 'deploy', '--detach=true', '-c', join(work, 'ok.yml'), 'fidok']);
    assert.equal(stack.code, 0, stack.stderr);
    for (const cmd of [
      ['service', 'ls'],
      ['service', 'ps', 'fidweb'],
      ['node', 'ls'],
      ['node', 'ps'],
      ['secret', 'ls'],
      ['config', 'ls'],
      ['stack', 'ls'],
      ['stack', 'services', 'fidok'],
      ['stack', 'ps', 'fidok'],
    ])
      for (const format of ['{{.Nope}}', '{{.ID.X}}']) await same([...cmd, '--format', format]);

    // Each compose file is checked against the schema of the version it declares: rollback_config
    // and init came with 3.7; "3", "" and none mean 3.13; others have no schema; a number is refused.
    const declared = (v: string | undefined) =>
      `${v === undefined ? '' : `version: ${v}\n`}services:\n  web:\n    image: busybox\n    init: true\n    deploy:\n      rollback_config:\n        parallelism: 1\n`;
    const versions = [
      '"3"',
      '"3.0"',
      '"3.6"',
      '"3.7"',
      '"3.8"',
      '"3.13"',
      '"3.14"',
      '"2"',
      '"2.4"',
      '"4"',
      '""',
      '3.8',
      '2',
      'null',
      undefined,
    ];
    for (const [n, v] of versions.entries()) {
      await writeFile(join(work, `v${n}.yml`), declared(v));
      await same(['stack', 'config', '-c', `v${n}.yml`]);
    }
    for (const n of [1, 7]) assert.equal(await same(['stack', 'deploy', '-c', `v${n}.yml`, 'fidstack']), '');
    await same(['stack', 'config', '-c', 'v4.yml', '-c', 'v14.yml']);
    await same(['stack', 'config', '-c', 'v14.yml', '-c', 'v0.yml']);
    await writeFile(join(work, 'x3.yml'), 'version: "3.3"\nx-a: 1\nservices:\n  web:\n    image: busybox\n');
    await writeFile(join(work, 'p31.yml'), 'version: "3.1"\nservices:\n  web:\n    image: busybox\n    ports: [{target: 80}]\n');
    await writeFile(join(work, 's30.yml'), 'version: "3.0"\nservices:\n  web:\n    image: busybox\nsecrets:\n  s:\n    file: ./a\n');
    for (const f of ['x3.yml', 'p31.yml', 's30.yml']) await same(['stack', 'config', '-c', f]);
    // Service keys the loader refuses come first (listed by deploy, named by config); those deploy
    // ignores are named on stderr; `build: .` is a string.
    await writeFile(join(work, 'fb.yml'), 'version: "2"\nservices:\n  web:\n    image: busybox\n    extends: x\n    mem_limit: 1\n');
    assert.equal(await same(['stack', 'deploy', '-c', 'fb.yml', 'fidstack']), '');
    await same(['stack', 'config', '-c', 'fb.yml']);
    await writeFile(
      join(work, 'ign.yml'),
      'version: "3.8"\nservices:\n  web:\n    image: busybox\n    command: sleep 1000\n    build: .\n    privileged: true\n    container_name: x\n    expose: ["80"]\n',
    );
    const [eng, dock] = await Promise.all([
      run(ENGINE, ['stack', 'deploy', '--detach=true', '-c', 'ign.yml', 'fidign'], { env: { ...env, ENGINE_HOST: d.host }, cwd: work }),
      run('docker', ['stack', 'deploy', '--detach=true', '-c', 'ign.yml', 'fidign2'], { env: { ...env, DOCKER_HOST: d.host }, cwd: work }),
    ]);
    assert.deepEqual(
      { code: eng.code, stdout: eng.stdout, stderr: eng.stderr },
      { code: dock.code, stdout: dock.stdout.replaceAll('fidign2', 'fidign'), stderr: dock.stderr },
    );
    assert.match(dock.stderr, /^Ignoring unsupported options: build, privileged\n\nIgnoring deprecated options:\n\ncontainer_name: /);

    const leave = await d.docker(['swarm', 'leave', '--force']);
    assert.equal(leave.code, 0, leave.stderr);
  });
});
