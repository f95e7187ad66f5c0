// The `engine` CLI's answers compared word for word with the docker CLI 28's on one daemon, where
// the two once differed: Go templates with variables (declared, assigned, declared by if/with/range,
// refused out of scope) and how each command words a template's failure; `inspect` of cluster
// objects written back from their Go type (field order, omitempty, zero values) by `service`,
// `node`, `secret` and `config inspect`, and the top-level `inspect` finding services, tasks, nodes,
// secrets and configs (raw, as docker prints them) with --type's refusals; `stack deploy`'s refusal
// of a compose file the compose schema refuses.
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
  /** The same, but the docker CLI's Go type names ("in type *formatter.ContainerContext") are its own. */
  const sameButTypes = async (args: string[]) => {
    const { engine, docker } = await both(args);
    assert.equal(engine.code, docker.code, args.join(' '));
    assert.equal(engine.stdout, docker.stdout, args.join(' '));
    assert.equal(engine.stderr, docker.stderr.replace(/ in type [\w.*]+\n/, '\n'), args.join(' '));
  };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-cli-fidelity-'));
    d = await startDaemon();
    await loadBusybox(d);
    env = { PATH: process.env.PATH, HOME: work, ENGINE_CONFIG: join(work, 'engine-config'), DOCKER_CONFIG: join(work, 'docker-config') };
    const r = await d.docker(['run', '-d', '--name', 'fid1', '-l', 'b=2', '-l', 'a=1', 'busybox', 'sleep', '1000']);
    assert.equal(r.code, 0, r.stderr);
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
    }
    for (const cmd of [['ps'], ['images'], ['network', 'ls'], ['version'], ['info']])
      await sameButTypes([...cmd, '--format', '{{.Nope.X}}']);
    await same(['inspect', 'fid1', '--format', '{{.Nope.X}}']);
    await same(['inspect', 'fid1', '--format', '{{range $k, $v := .Name}}{{end}}']);
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
    const leave = await d.docker(['swarm', 'leave', '--force']);
    assert.equal(leave.code, 0, leave.stderr);
  });
});
