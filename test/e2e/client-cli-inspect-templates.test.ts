// `--format` of the inspect commands compared word for word with the docker CLI 28 on one daemon.
// The docker CLI runs an inspect template over the Go type it decodes the object into: `volume`,
// `service`, `node` and `context inspect` over that alone; `secret`, `config`, `network`,
// `container`, `image` inspect and `inspect` (tasks too) fall back to the raw JSON as maps when it
// fails. Compared: a known field, a nested struct, a time, a duration, a nil pointer, an unknown
// field (named with its Go type, or the raw JSON's missing key), a missing map key (`<no value>`),
// `json` of a struct and of a map, objects not found among those found, and a template that does
// not parse.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REPO_ROOT, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

const ENGINE = join(REPO_ROOT, 'bin/engine');
// Loopback address of this file: 127.0.<n>.10 (the other cluster files use .1 to .9).
const ip = `127.0.${10 + loopbackSlot() * 4}.10`;

describe('engine CLI inspect templates over Go structs, as the docker CLI', { timeout: 300_000 }, () => {
  let d: TestDaemon;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const engineConfig = () => join(work, 'engine-config');
  const dockerConfig = () => join(work, 'docker-config');
  /**
   * Runs `args` with both CLIs (docker's with `dockerArgs` when they differ) and compares stdout,
   * stderr and status exactly; `norm` rewrites docker's answer where the two differ by design.
   */
  const same = async (args: string[], dockerArgs = args, norm = (s: string) => s) => {
    const [e, k] = await Promise.all([
      run(ENGINE, args, { env: { ...env, ENGINE_HOST: d.host }, timeoutMs: 120_000, cwd: work }),
      run('docker', dockerArgs, { env: { ...env, DOCKER_HOST: d.host }, timeoutMs: 120_000, cwd: work }),
    ]);
    assert.deepEqual(
      { code: e.code, stdout: e.stdout, stderr: e.stderr },
      { code: k.code, stdout: norm(k.stdout), stderr: norm(k.stderr) },
      `engine vs docker: ${args.join(' ')}`,
    );
    return k;
  };
  /** Each template with `inspect` of `names` by both CLIs. */
  const each = async (cmd: string[], names: string[], formats: string[]) => {
    for (const format of formats) await same([...cmd, ...names, '--format', format]);
  };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-cli-inspect-'));
    d = await startDaemon();
    await loadBusybox(d);
    env = { PATH: process.env.PATH, HOME: work, ENGINE_CONFIG: engineConfig(), DOCKER_CONFIG: dockerConfig() };
  });
  after(async () => {
    await d?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('volume inspect: over volume.Volume', async () => {
    const v = await d.docker(['volume', 'create', '--label', 'a=1', '--opt', 'type=tmpfs', '--opt', 'device=tmpfs', 'tplvol']);
    assert.equal(v.code, 0, v.stderr);
    await each(
      ['volume', 'inspect'],
      ['tplvol'],
      [
        '{{.Name}} {{.Driver}} {{.Scope}} {{.Mountpoint}}',
        '{{.CreatedAt}}',
        '{{.}}',
        '{{.Labels}} {{.Labels.a}} {{.Labels.nope}} [{{index .Labels "nope"}}]',
        '{{.Options}}',
        '{{.Status}} {{.UsageData}} {{.ClusterVolume}}',
        '{{.UsageData.Size}}',
        '{{.Foo}}',
        '{{.Name}} {{.Foo}}',
        '{{.Labels.a.Foo}}',
        '{{.Name.Foo}}',
        '{{json .}}',
        '{{json .Labels}} {{json .Status}} {{json .UsageData}}',
        '{{if .Labels}}L{{end}}{{if .Status}}S{{end}}{{if .UsageData}}U{{end}}{{len .Labels}}',
        '{{range $k, $v := .Options}}{{$k}}={{$v}};{{end}}',
        '{{.Name',
      ],
    );
    await each(['volume', 'inspect'], ['tplvol', 'nope', 'tplvol'], ['{{.Name}}', '{{.Foo}}']);
    await each(['volume', 'inspect'], ['nope'], ['{{.Name}}', 'json']);
    // `--format json`: one compact array, of the Go values (volume, service, node, context) or the raw answers.
    await each(['volume', 'inspect'], ['tplvol', 'nope'], ['json']);
    // Without a template: volume.Volume indented.
    await same(['volume', 'inspect', 'tplvol']);
    await same(['volume', 'inspect', 'tplvol', 'nope']);
  });

  test('service and node inspect: over swarm.Service and swarm.Node', async () => {
    const init = await d.docker(['swarm', 'init', '--advertise-addr', ip, '--listen-addr', `${ip}:2377`]);
    assert.equal(init.code, 0, init.stderr);
    const svc = await d.docker(['service', 'create', '-q', '--detach', '--name', 'tplsvc', '--label', 'x=1', 'busybox', 'sleep', '1000']);
    assert.equal(svc.code, 0, svc.stderr);
    await each(
      ['service', 'inspect'],
      ['tplsvc'],
      [
        '{{.ID}} {{.Spec.Name}}',
        '{{.Version}} {{.Version.Index}} {{.Version.String}}',
        '{{.CreatedAt}} {{.UpdatedAt}}',
        '{{.CreatedAt.Format "2006-01-02T15:04:05.000Z07:00 Mon Monday Jan January _2 2 3:4:5 03 PM pm MST -0700 06 002 1"}}',
        '{{.CreatedAt.Format "15:04:05.999999999|.99|,000000"}} {{.CreatedAt.Unix}} {{.CreatedAt.IsZero}} {{.CreatedAt.Year}}',
        '{{.Meta}}',
        '{{.Spec.Annotations}} {{.Spec.Labels}} {{.Spec.Labels.x}} {{.Spec.Labels.nope}}',
        '{{.Spec.UpdateConfig}} {{.Spec.UpdateConfig.Monitor}} {{.Spec.UpdateConfig.Delay}}',
        '{{.Spec.RollbackConfig}}',
        '{{.Spec.Mode.Replicated.Replicas}} {{.Spec.Mode.Global}}',
        '{{.Spec.TaskTemplate.ContainerSpec.Image}} {{.Spec.TaskTemplate.ContainerSpec.Args}} {{.Spec.TaskTemplate.ContainerSpec.Mounts}}',
        '{{.Spec.TaskTemplate.ForceUpdate}} {{.Spec.TaskTemplate.Runtime}}',
        '{{.Endpoint.Spec}} {{.Endpoint.Ports}}',
        '{{.UpdateStatus}} {{.PreviousSpec}} {{.JobStatus}}',
        '{{.UpdateStatus.State}}',
        '{{.UpdateStatus.Foo}}',
        '{{.Foo}}',
        '{{.Spec.Foo}}',
        '{{.Spec.Labels.x.Foo}}',
        '{{.Spec.Mode.Replicated.Replicas.Foo}}',
        '{{json .Spec.Labels}}',
        '{{json .Version}} {{json .CreatedAt}}',
        '{{json .Spec.UpdateConfig}} {{json .Spec.TaskTemplate.RestartPolicy}} {{.Spec.TaskTemplate.RestartPolicy.Delay}}',
        '{{json .Spec.Annotations}}',
        '{{json .Endpoint}}',
        '{{.ID',
        'pretty{{.ID}}',
      ],
    );
    await each(['service', 'inspect'], ['tplsvc', 'nope'], ['{{.Spec.Name}}', '{{.Foo}}']);
    await each(['service', 'inspect'], ['nope'], ['{{.ID}}']);
    await each(['service', 'inspect'], ['tplsvc', 'nope'], ['json']);

    await each(
      ['node', 'inspect'],
      ['self'],
      [
        '{{.Spec}} {{.Spec.Role}} {{.Spec.Availability}}',
        '{{.Spec.Labels}} {{.Spec.Labels.nope}} [{{index .Spec.Labels "nope"}}]',
        '{{.Description.Platform}} {{.Description.Hostname}}',
        '{{.Status}} {{.Status.State}}',
        '{{.ManagerStatus}} {{.ManagerStatus.Leader}}',
        '{{.CreatedAt}}',
        '{{.Description.Engine.Labels}} {{.Description.TLSInfo.TrustRoot | len}} {{len .Description.TLSInfo.CertIssuerSubject}}',
        '{{.Foo}}',
        '{{.Status.Foo}}',
        '{{.Spec.Role.Foo}}',
        '{{.Description.Resources.NanoCPUs.Foo}}',
        '{{json .Status}} {{json .Spec}} {{json .ManagerStatus}}',
        '{{json .Description.Platform}}',
        '{{.ID',
      ],
    );
    await each(['node', 'inspect'], ['self', 'nope'], ['{{.Spec.Role}}', 'json']);

    // secret and config inspect (and inspect of a service) have the raw JSON to fall back on: the
    // template runs over the Go type first, over the JSON as maps when that fails.
    const sec = await d.docker(['secret', 'create', '--label', 'k=v', 'tplsec', '-'], { input: 'hush' });
    assert.equal(sec.code, 0, sec.stderr);
    const cfg = await d.docker(['config', 'create', 'tplcfg', '-'], { input: 'hi' });
    assert.equal(cfg.code, 0, cfg.stderr);
    for (const [cmd, name] of [
      ['secret', 'tplsec'],
      ['config', 'tplcfg'],
    ] as const) {
      await each(
        [cmd, 'inspect'],
        [name],
        [
          '{{.ID}} {{.Spec.Name}} {{.Version}}',
          '{{.CreatedAt}}',
          '{{.Spec.Labels}} {{.Spec.Labels.nope}}',
          '{{.Spec.Data}} {{json .Spec.Data}}',
          '{{.Spec.Annotations}}',
          '{{.Foo}}',
          '{{.Spec.Foo}}',
          '{{.Spec.Name}} {{.Foo}}',
          '{{json .Spec}}',
          '{{.ID',
        ],
      );
      await each([cmd, 'inspect'], [name, 'nope'], ['{{.Spec.Name}}', 'json']);
    }
    await each(['inspect'], ['tplsvc'], ['{{.CreatedAt}}', '{{.Spec.Labels.nope}}', '{{.Foo}}', '{{.Spec.UpdateConfig.Monitor}}']);
    // A task, over swarm.Task (the fields that do not move while it starts).
    const ps = await d.docker(['service', 'ps', '-q', 'tplsvc']);
    assert.equal(ps.code, 0, ps.stderr);
    const task = ps.stdout.trim().split('\n')[0]!;
    await each(
      ['inspect', '--type', 'task'],
      [task],
      [
        '{{.ServiceID}} {{.Slot}} {{.DesiredState}} {{.CreatedAt}}',
        '{{.Spec.ContainerSpec.Image}} {{.Spec.ContainerSpec.Args}} {{.Spec.RestartPolicy.Condition}} {{.Spec.ForceUpdate}}',
        '{{.Labels}} {{.Labels.nope}} {{.Annotations}} {{.JobIteration}}',
        '{{.Foo}}',
        '{{json .Spec.ContainerSpec.Args}} {{json .Labels}}',
      ],
    );

    const leave = await d.docker(['swarm', 'leave', '--force']);
    assert.equal(leave.code, 0, leave.stderr);
  });

  test('network inspect and inspect: over the Go type, then the raw JSON', async () => {
    const n = await d.docker(['network', 'create', '--label', 'a=1', '--subnet', '10.231.7.0/24', 'tplnet']);
    assert.equal(n.code, 0, n.stderr);
    await each(
      ['network', 'inspect'],
      ['tplnet'],
      [
        '{{.Name}} {{.Driver}} {{.Scope}} {{.Internal}}',
        '{{.Created}}',
        '{{.Created.Format "Jan 2, 2006 at 3:04pm (MST)"}} {{.Created.Format "2006-01-02"}}',
        '{{.ID}} {{.Id}}',
        '{{.IPAM}} {{.IPAM.Config}}',
        '{{.Labels}} {{.Labels.nope}} {{.Options}}',
        '{{.ConfigFrom}} {{.Containers}}',
        '{{.Foo}}',
        '{{json .IPAM}} {{json .Labels}}',
        '{{.Name',
      ],
    );
    await each(['network', 'inspect'], ['tplnet', 'nope'], ['{{.Name}}', '{{.Foo}}', 'json']);
    await each(['inspect'], ['tplvol'], ['{{.Labels.nope}}', '{{.Foo}}', '{{.Name}} {{.Foo}}', '{{.UsageData}}']);
    await each(['inspect'], ['tplnet', 'nope'], ['{{.Created}}', '{{.Foo}}']);
    await each(['inspect'], ['nope'], ['{{.Name}}']);
    // A failed template prints nothing of what it wrote before the failure.
    const c = await d.docker(['run', '-d', '--name', 'tplc', '-l', 'a=1', 'busybox', 'sleep', '1000']);
    assert.equal(c.code, 0, c.stderr);
    await each(
      ['inspect'],
      ['tplc'],
      [
        '{{.Name}} {{.Foo}}',
        '{{.Config.Labels.a}} {{.Config.Labels.nope}} [{{index .Config.Labels "nope"}}]',
        '{{.ID}} {{.Id}}',
        '{{.State.Status}} {{.State.Running}} {{.State.Health}} {{.RestartCount}}',
        '{{.Config.Cmd}} {{.Config.Entrypoint}} {{.Config.Env}} {{.Config.Volumes}} {{.Config.ExposedPorts}}',
        '{{.HostConfig.RestartPolicy}} {{.HostConfig.LogConfig}} {{.HostConfig.Memory}} {{.HostConfig.PidsLimit}} {{.HostConfig.ConsoleSize}}',
        '{{.HostConfig.NetworkMode}} {{.HostConfig.PortBindings}} {{.NetworkSettings.Ports}} {{.NetworkSettings.IPAddress}}',
        '{{.GraphDriver.Name}} {{.Mounts}} {{.SizeRw}}',
        '{{.State.Health.Status}}',
        '{{.Config.Foo}}',
        '{{json .Config}}',
        '{{json .Config.Labels}} {{json .HostConfig.RestartPolicy}} {{json .State.Health}}',
      ],
    );
    await each(['container', 'inspect'], ['tplc', 'nope'], ['{{.Name}}', '{{.Foo}}', 'json']);
    await each(['inspect'], ['tplvol', 'tplnet'], ['json']);
    await each(
      ['image', 'inspect'],
      ['busybox'],
      [
        '{{.ID}} {{.Id}} {{.Os}} {{.Architecture}} {{.RepoTags}}',
        '{{.Config.Labels.nope}} {{.Config.Cmd}} {{.Config.Env}} {{.Config.Healthcheck}}',
        '{{.Config}}',
        '{{.RootFS}} {{.Metadata}} {{.Metadata.LastTagTime}} {{.GraphDriver.Name}}',
        '{{.Foo}}',
        '{{json .Config}} {{json .RootFS}} {{json .Metadata}}',
      ],
    );
  });

  test('context inspect: over the docker CLI context listing', async () => {
    // The engine CLI names its endpoint "engine" where the docker CLI says "docker", and keeps its
    // own configuration directory: docker's answer is read with those two words exchanged.
    const norm = (s: string) =>
      s
        .replaceAll(dockerConfig(), engineConfig())
        .replaceAll('docker:{', 'engine:{')
        .replaceAll('"docker":', '"engine":')
        .replaceAll('.Endpoints.docker', '.Endpoints.engine');
    const both = (args: string[]) =>
      same(
        args,
        args.map((a) => a.replaceAll('.Endpoints.engine', '.Endpoints.docker')),
        norm,
      );
    await same(
      ['context', 'create', 'tplctx', '--description', 'd1', '--docker', 'host=tcp://127.0.0.1:1'],
      ['context', 'create', 'tplctx', '--description', 'd1', '--docker', 'host=tcp://127.0.0.1:1'],
    );
    for (const format of [
      '{{.Name}}',
      '{{.}}',
      '{{.Metadata}}',
      '{{.Metadata.Metadata}} {{.Metadata.Metadata.Description}}',
      '{{.Endpoints}} {{.Endpoints.engine.Host}} {{.Endpoints.nope}} {{index .Endpoints "nope"}}',
      '{{.TLSMaterial}} {{.Storage}} {{.Storage.MetadataPath}}',
      '{{.Foo}}',
      '{{.Metadata.Foo}}',
      '{{.Endpoints.engine.Foo}}',
      '{{json .}}',
      '{{json .Metadata}} {{json .Metadata.Metadata}} {{json .TLSMaterial}}',
      'json',
      '{{.Name',
    ]) {
      await both(['context', 'inspect', 'tplctx', '--format', format]);
      await both(['context', 'inspect', 'default', '--format', format]);
    }
    // Without a template: the listing indented; a context that is not there in the docker CLI's words.
    await both(['context', 'inspect', 'tplctx', 'default']);
    await both(['context', 'inspect', 'nope']);
    await both(['context', 'inspect', 'tplctx', 'nope', '--format', '{{.Name}}']);
    await both(['context', 'inspect', 'nope', '--format', '{{.Name']);
  });
});
