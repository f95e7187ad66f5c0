// The `engine` CLI's cluster families against a one-node cluster, side by side with the docker CLI
// 28 on the same daemon where the output is cheap to compare: swarm init (the join command),
// join-token, update with autolock and unlock-key, ca; node ls/inspect/update/promote; service
// create (the convergence progress), ls (same table and JSON as docker), ps, logs (same lines as
// docker's), scale, update, rollback, inspect --pretty (same text as docker's), rm; secret and
// config create/ls/inspect/rm; stack deploy from a compose file with a network, a secret and a
// config (the spec docker's converter makes), ls, services, ps, rm; swarm leave.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REPO_ROOT, run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

const ENGINE = join(REPO_ROOT, 'bin/engine');
// Loopback addresses of this file: 127.0.<n>.6 (the other cluster files use .1 to .5).
const base = 10 + loopbackSlot() * 4;
const ip = `127.0.${base}.6`;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const compose = `
version: "3.8"
services:
  web:
    image: busybox:latest
    command: ["sh", "-c", "cat /run/secrets/token /etc/app.conf; echo $$GREETING; sleep 1000"]
    environment:
      GREETING: \${GREETING:-hello}
    networks: [back]
    secrets: [token]
    configs:
      - source: appconf
        target: /etc/app.conf
        mode: 0440
    deploy:
      replicas: 2
  client:
    image: busybox:latest
    command: sleep 1000
    networks: [back]
    stop_grace_period: 1s
networks:
  back:
    driver: overlay
    labels:
      tier: back
secrets:
  token:
    file: ./token.txt
configs:
  appconf:
    file: ./app.conf
`;

// Most of what a stack service can say, deployed by both CLIs with no replicas (nothing runs).
const richCompose = `
version: "3.8"
services:
  rich:
    image: busybox:latest
    entrypoint: ["sh", "-c"]
    command: sleep 100
    working_dir: /tmp
    user: "1000:1000"
    hostname: rich-host
    stop_signal: SIGINT
    stop_grace_period: 3s
    read_only: true
    init: true
    tty: true
    environment: ["B=2", "A=1"]
    labels: ["c.l=1"]
    cap_add: [NET_ADMIN]
    cap_drop: [MKNOD]
    sysctls: { net.core.somaxconn: "1024" }
    extra_hosts: ["db:10.0.0.9"]
    dns: [10.0.0.53]
    dns_search: [example.org]
    ulimits: { nofile: { soft: 1024, hard: 2048 }, nproc: 512 }
    logging: { driver: json-file, options: { max-size: 1m } }
    healthcheck: { test: ["CMD", "true"], interval: 10s, timeout: 2s, retries: 4, start_period: 5s }
    ports: ["80", { target: 82, published: 8082, mode: host, protocol: udp }]
    volumes: ["data:/data", "/tmp:/host-tmp:ro", { type: tmpfs, target: /scratch }]
    deploy:
      replicas: 0
      labels: { s.l: "1" }
      resources: { limits: { cpus: "0.5", memory: 64M }, reservations: { cpus: "0.1", memory: 16M } }
      restart_policy: { condition: on-failure, delay: 2s, max_attempts: 3, window: 30s }
      update_config: { parallelism: 2, delay: 1s, failure_action: rollback, monitor: 3s, max_failure_ratio: 0.5, order: start-first }
      rollback_config: { parallelism: 1, order: stop-first }
      placement: { constraints: [node.role==manager], preferences: [{ spread: node.id }], max_replicas_per_node: 2 }
volumes:
  data:
    labels: { v: "1" }
`;

describe('engine CLI: swarm, node, service, secret, config, stack', { timeout: 400_000 }, () => {
  let d: TestDaemon;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const engine = (args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
    run(ENGINE, args, { env: { ...env, ...opts.env }, input: opts.input, timeoutMs: 120_000, cwd: work });
  const ok = async (args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}) => {
    const r = await engine(args, opts);
    assert.equal(r.code, 0, `engine ${args.join(' ')}: ${r.stderr}\n${r.stdout}\n${d.output.slice(-3000)}`);
    return r.stdout;
  };
  const docker = async (args: string[]) => {
    const r = await run('docker', args, { env: { ...env, DOCKER_HOST: d.host }, timeoutMs: 120_000, cwd: work });
    assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  /** The ages in a table ("5 seconds ago") differ by the second between two runs. */
  const noAges = (s: string) =>
    s
      .replace(/(Less than a second|About a minute|\d+ \w+) ago/gi, 'AGO')
      .replace(/ {2,}/g, '  ')
      .replace(/ +$/gm, '');

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-cli-cluster-'));
    d = await startDaemon();
    await loadBusybox(d);
    env = { PATH: process.env.PATH, HOME: work, ENGINE_HOST: d.host, ENGINE_CONFIG: join(work, 'config') };
    await writeFile(join(work, 'token.txt'), 's3cr3t\n');
    await writeFile(join(work, 'app.conf'), 'mode=stack\n');
    await writeFile(join(work, 'stack.yml'), compose);
  });
  after(async () => {
    await d?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('swarm init, join-token, update with autolock, unlock-key, ca; node ls/inspect/update/promote', async () => {
    const init = await ok(['swarm', 'init', '--advertise-addr', ip, '--listen-addr', `${ip}:2377`]);
    const m =
      /^Swarm initialized: current node \((\w+)\) is now a manager\.\n\nTo add a worker to this swarm, run the following command:\n\n {4}engine swarm join --token (SWMTKN-\S+) (\S+)\n\nTo add a manager to this swarm, run 'engine swarm join-token manager' and follow the instructions\.\n$/.exec(
        init,
      );
    assert.ok(m, init);
    assert.equal(m[3], `${ip}:2377`);
    const nodeId = m[1]!;
    assert.equal((await ok(['swarm', 'join-token', '-q', 'worker'])).trim(), m[2]);
    assert.equal(
      await ok(['swarm', 'join-token', 'manager']),
      (await docker(['swarm', 'join-token', 'manager'])).replace('docker swarm', 'engine swarm'),
    );
    const rotated = await ok(['swarm', 'join-token', '--rotate', '-q', 'worker']);
    assert.notEqual(rotated.trim(), m[2]);
    const bad = await engine(['swarm', 'join-token', 'boss']);
    assert.deepEqual([bad.code, bad.stderr], [1, 'unknown role boss\n']);

    const locked = await ok(['swarm', 'update', '--autolock=true']);
    assert.match(
      locked,
      /^Swarm updated\.\nTo unlock a swarm manager after it restarts, run the `engine swarm unlock`\ncommand and provide the following key:\n\n {4}(SWMKEY-\S+)\n/,
    );
    const key = (await ok(['swarm', 'unlock-key', '-q'])).trim();
    assert.ok(locked.includes(key));
    const newKey = (await ok(['swarm', 'unlock-key', '--rotate', '-q'])).trim();
    assert.match(newKey, /^SWMKEY-/);
    assert.notEqual(newKey, key);
    assert.equal(await ok(['swarm', 'update', '--autolock=false', '--task-history-limit', '3']), 'Swarm updated.\n');
    const noKey = await engine(['swarm', 'unlock-key']);
    assert.deepEqual([noKey.code, noKey.stderr], [1, 'no unlock key is set\n']);
    const notLocked = await engine(['swarm', 'unlock'], { input: 'x\n' });
    assert.deepEqual([notLocked.code, notLocked.stderr], [1, 'error: swarm is not locked\n']);
    const root = await ok(['swarm', 'ca']);
    assert.equal(root, await docker(['swarm', 'ca']));
    assert.match(root, /^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
    const noRotate = await engine(['swarm', 'ca', '--cert-expiry', '48h']);
    assert.deepEqual([noRotate.code, noRotate.stderr], [1, '`--cert-expiry` flag requires the `--rotate` flag to update the CA\n']);
    const rotation = await ok(['swarm', 'ca', '--rotate']);
    const [, newRoot] = /^desired root digest: sha256:[0-9a-f]{64}\n[\s\S]*?(-----BEGIN CERTIFICATE-----\n[\s\S]+)$/.exec(rotation) ?? [];
    assert.ok(newRoot, rotation);
    assert.notEqual(newRoot, root);
    assert.equal(await ok(['swarm', 'ca']), newRoot);
    assert.equal(await ok(['swarm', 'ca', '--rotate', '-q']), '');

    assert.equal(await ok(['node', 'ls']), await docker(['node', 'ls']));
    assert.match(
      await ok(['node', 'ls']),
      new RegExp(`^ID +HOSTNAME +STATUS +AVAILABILITY +MANAGER STATUS +ENGINE VERSION\\n${nodeId} \\* +\\S+ +Ready +Active +Leader`),
    );
    assert.equal(await ok(['node', 'ls', '--format', 'json']), await docker(['node', 'ls', '--format', 'json']));
    assert.equal(await ok(['node', 'inspect', '--pretty', 'self']), await docker(['node', 'inspect', '--pretty', 'self']));
    assert.equal(await ok(['node', 'update', '--label-add', 'zone=a', '--label-add', 'tier=x', nodeId]), `${nodeId}\n`);
    assert.equal(await ok(['node', 'update', '--label-rm', 'tier', nodeId]), `${nodeId}\n`);
    assert.equal((await ok(['node', 'inspect', '-f', '{{json .Spec.Labels}}', 'self'])).trim(), '{"zone":"a"}');
    const noLabel = await engine(['node', 'update', '--label-rm', 'nope', nodeId]);
    assert.deepEqual([noLabel.code, noLabel.stderr], [1, "key nope doesn't exist in node's labels\n"]);
    assert.equal(await ok(['node', 'promote', nodeId]), `Node ${nodeId} is already a manager.\n`);
  });

  test('service create (progress), ls, ps, logs, scale, update, rollback, inspect --pretty, rm', async () => {
    const port = await freePort();
    const created = await ok([
      'service',
      'create',
      '--name',
      'talker',
      '--replicas',
      '2',
      '-p',
      `${port}:80`,
      '--no-resolve-image',
      'busybox',
      'sh',
      '-c',
      'echo hello from $HOSTNAME; sleep 1000',
    ]);
    const id = created.split('\n')[0]!;
    assert.match(id, /^[0-9a-z]{25}$/);
    assert.match(created, /overall progress: 2 out of 2 tasks\n/);
    assert.match(created, new RegExp(`verify: Service ${id} converged\\n$`));
    const ls = await ok(['service', 'ls']);
    assert.match(ls, /^ID +NAME +MODE +REPLICAS +IMAGE +PORTS\n[0-9a-z]{12} +talker +replicated +2\/2 +busybox:latest +\*:\d+->80\/tcp\n$/);
    assert.equal(ls, await docker(['service', 'ls']));
    assert.equal(await ok(['service', 'ls', '--format', 'json']), await docker(['service', 'ls', '--format', 'json']));
    assert.equal(noAges(await ok(['service', 'ps', 'talker'])), noAges(await docker(['service', 'ps', 'talker'])));
    const logs = await until('both tasks logged', async () => {
      const r = await ok(['service', 'logs', 'talker']);
      return r.split('\n').filter(Boolean).length === 2 ? r : undefined;
    });
    assert.match(logs, /^talker\.[12]\.[0-9a-z]{12}@\S+ {4}\| hello from [0-9a-f]{12}$/m);
    const sorted = (s: string) => s.split('\n').sort().join('\n');
    assert.equal(sorted(logs), sorted(await docker(['service', 'logs', 'talker'])));
    assert.equal(sorted(await ok(['service', 'logs', '--raw', 'talker'])), sorted(logs.replace(/^\S+ {4}\| /gm, '')));

    assert.equal(await ok(['service', 'scale', '-d', 'talker=3']), 'talker scaled to 3\n');
    assert.equal((await ok(['service', 'inspect', '-f', '{{.Spec.Mode.Replicated.Replicas}}', 'talker'])).trim(), '3');
    const badScale = await engine(['service', 'scale', 'talker=x']);
    assert.equal(badScale.code, 1);
    assert.match(badScale.stderr, /^talker: invalid replicas value x/);
    assert.equal(await ok(['service', 'update', '-d', '--env-add', 'A=1', '--label-add', 'l=v', 'talker']), 'talker\n');
    assert.equal(
      (await ok(['service', 'inspect', '-f', '{{json .Spec.TaskTemplate.ContainerSpec.Env}} {{json .Spec.Labels}}', 'talker'])).trim(),
      '["A=1"] {"l":"v"}',
    );
    assert.equal(await ok(['service', 'rollback', '-d', 'talker']), 'talker\n');
    await until('the rollback done', async () => {
      const spec = JSON.parse(await ok(['service', 'inspect', 'talker']))[0].Spec;
      return spec.TaskTemplate.ContainerSpec.Env === undefined && spec.Labels.l === undefined ? true : undefined;
    });
    const both = (await ok(['service', 'inspect', '--pretty', 'talker'])).replace(/Started:\t.*\n/, '');
    assert.equal(both, (await docker(['service', 'inspect', '--pretty', 'talker'])).replace(/Started:\t.*\n/, ''));
    assert.match(both, /^Service Mode:\tReplicated\n Replicas:\t3\n/m);
    // service update: the same flags on twin services give the docker CLI's spec.
    const base = ['service', 'create', '-d', '-q', '--no-resolve-image', '--env', 'KEEP=1', '--env', 'DROP=1', '--label', 'old=1'];
    for (const n of ['u-engine', 'u-docker'])
      await docker([...base, '--name', n, '-p', '90', '--constraint', 'node.role==manager', 'busybox', 'sleep', '100']);
    const upd = [
      '--env-add',
      'NEW=2',
      '--env-rm',
      'DROP',
      '--label-add',
      'l2=x',
      '--label-rm',
      'old',
      '--publish-add',
      '91',
      '--publish-rm',
      '90',
    ];
    upd.push('--mount-add', 'type=tmpfs,target=/m', '--constraint-rm', 'node.role==manager', '--constraint-add', 'node.platform.os==linux');
    upd.push(
      '--replicas',
      '0',
      '--args',
      'sleep 200',
      '--force',
      '--update-delay',
      '2s',
      '--restart-max-attempts',
      '4',
      '-d',
      '-q',
      '--no-resolve-image',
    );
    await ok(['service', 'update', ...upd, 'u-engine']);
    await docker(['service', 'update', ...upd, 'u-docker']);
    const specOf = async (name: string) => {
      const s = JSON.parse(await ok(['service', 'inspect', name]))[0];
      s.Spec.Name = 'X';
      // The docker CLI rebuilds Env after --env-add from a Go map: its order is random.
      s.Spec.TaskTemplate.ContainerSpec.Env?.sort();
      return [s.Spec, s.PreviousSpec && { ...s.PreviousSpec, Name: 'X' }];
    };
    assert.deepEqual(await specOf('u-engine'), await specOf('u-docker'));
    await ok(['service', 'rm', 'u-engine', 'u-docker']);
    const missing = await engine(['service', 'inspect', 'nope']);
    assert.equal(missing.code, 1);
    const rmBoth = await engine(['service', 'rm', 'talker', 'nope']);
    assert.equal(rmBoth.code, 1);
    assert.equal(rmBoth.stdout, 'talker\n');
    assert.match(rmBoth.stderr, /^Error response from daemon: service nope not found/);
    assert.equal(await ok(['service', 'ls', '-q']), '');
  });

  test('secret and config: create from a file and stdin, ls as docker, inspect --pretty, rm', async () => {
    const sid = (await ok(['secret', 'create', '-l', 'team=a', 'tok', join(work, 'token.txt')])).trim();
    assert.match(sid, /^[0-9a-z]{25}$/);
    const cid = (await ok(['config', 'create', 'cfg', '-'], { input: 'key=value\n' })).trim();
    assert.match(cid, /^[0-9a-z]{25}$/);
    const empty = await engine(['secret', 'create', 'empty', '-'], { input: '' });
    assert.deepEqual([empty.code, empty.stderr], [1, 'error reading from STDIN: data is empty\n']);
    for (const kind of ['secret', 'config']) {
      assert.equal(noAges(await ok([kind, 'ls'])), noAges(await docker([kind, 'ls'])));
      assert.equal(noAges(await ok([kind, 'ls', '--format', 'json'])), noAges(await docker([kind, 'ls', '--format', 'json'])));
    }
    assert.equal(await ok(['secret', 'inspect', '--pretty', 'tok']), await docker(['secret', 'inspect', '--pretty', 'tok']));
    assert.equal(await ok(['config', 'inspect', '--pretty', 'cfg']), await docker(['config', 'inspect', '--pretty', 'cfg']));
    assert.match(await ok(['config', 'inspect', '--pretty', 'cfg']), /\nData:\nkey=value\n/);
    assert.equal((await ok(['secret', 'inspect', '-f', '{{.Spec.Labels.team}}', 'tok'])).trim(), 'a');
    // Services referring to them by name: the spec the docker CLI sends for the same flags.
    const flags = [
      '--secret',
      'source=tok,target=t2,mode=0400',
      '--config',
      'cfg',
      '--env',
      'E=1',
      '--label',
      'l=1',
      '--mount',
      'type=tmpfs,target=/t',
    ];
    flags.push(
      '--restart-condition',
      'on-failure',
      '--update-parallelism',
      '2',
      '--limit-memory',
      '64m',
      '--no-resolve-image',
      'busybox',
      'sleep',
      '100',
    );
    await ok(['service', 'create', '-d', '-q', '--name', 'refs-engine', ...flags]);
    await docker(['service', 'create', '-d', '-q', '--name', 'refs-docker', ...flags]);
    const specOf = async (name: string) => {
      const s = JSON.parse(await ok(['service', 'inspect', name]))[0].Spec;
      s.Name = 'X';
      return s;
    };
    const refs = await specOf('refs-engine');
    assert.deepEqual(refs, await specOf('refs-docker'));
    assert.deepEqual(refs.TaskTemplate.ContainerSpec.Secrets, [
      { File: { Name: 't2', UID: '0', GID: '0', Mode: 0o400 }, SecretID: sid, SecretName: 'tok' },
    ]);
    assert.deepEqual(refs.TaskTemplate.ContainerSpec.Configs, [
      { File: { Name: 'cfg', UID: '0', GID: '0', Mode: 0o444 }, ConfigID: cid, ConfigName: 'cfg' },
    ]);
    await ok(['service', 'rm', 'refs-engine', 'refs-docker']);
    // Most other create flags: the same spec as the docker CLI's.
    await ok(['network', 'create', '-d', 'overlay', 'svcnet']);
    const more = [
      '--replicas',
      '0',
      '--dns',
      '10.0.0.53',
      '--dns-search',
      'example.org',
      '--dns-option',
      'ndots:2',
      '--host',
      'db:10.0.0.9',
    ];
    more.push(
      '--health-cmd',
      'true',
      '--health-interval',
      '10s',
      '--health-retries',
      '3',
      '--health-timeout',
      '2s',
      '--health-start-period',
      '1s',
    );
    more.push('--cap-add', 'net_admin', '--cap-drop', 'MKNOD', '--sysctl', 'net.core.somaxconn=1024', '--ulimit', 'nofile=1024:2048');
    more.push('--user', '1000', '--workdir', '/tmp', '--hostname', 'h', '--init', '--read-only', '-t', '--stop-signal', 'SIGINT');
    more.push('--stop-grace-period', '3s', '--log-driver', 'json-file', '--log-opt', 'max-size=1m', '--placement-pref', 'spread=node.id');
    more.push('--replicas-max-per-node', '2', '--rollback-parallelism', '3', '--rollback-order', 'start-first', '--update-monitor', '2s');
    more.push('--update-failure-action', 'rollback', '--update-max-failure-ratio', '0.3', '--limit-cpu', '0.5', '--reserve-cpu', '0.25');
    more.push(
      '--reserve-memory',
      '16m',
      '--group',
      'wheel',
      '--entrypoint',
      'sh',
      '--container-label',
      'c=1',
      '--network',
      'name=svcnet,alias=a1',
    );
    more.push('--endpoint-mode', 'dnsrr', '--restart-delay', '2s', '--restart-window', '10s', '--env-file', join(work, 'app.conf'));
    more.push('--no-resolve-image', 'busybox', '-c', 'sleep 100');
    await ok(['service', 'create', '-d', '-q', '--name', 'more-engine', ...more]);
    await docker(['service', 'create', '-d', '-q', '--name', 'more-docker', ...more]);
    assert.deepEqual(await specOf('more-engine'), await specOf('more-docker'));
    await ok(['service', 'rm', 'more-engine', 'more-docker']);
    assert.equal(await ok(['secret', 'rm', 'tok']), 'tok\n');
    assert.equal(await ok(['config', 'rm', 'cfg']), 'cfg\n');
    assert.equal(await ok(['secret', 'ls', '-q']), '');
  });

  test('stack deploy with a network, a secret and a config; ls, services, ps; redeploy; rm', async () => {
    assert.equal(await ok(['stack', 'config', '-c', 'stack.yml']), await docker(['stack', 'config', '-c', 'stack.yml']));
    const out = await ok(['stack', 'deploy', '-c', 'stack.yml', '--resolve-image', 'never', 'app'], { env: { GREETING: 'hi-there' } });
    assert.equal(
      out,
      'Creating network app_back\nCreating secret app_token\nCreating config app_appconf\nCreating service app_web\nCreating service app_client\n',
    );
    // The docker CLI deploys the same file as a second stack: the specs must be the same but for names and IDs.
    await docker(['stack', 'deploy', '-c', 'stack.yml', '--resolve-image', 'never', 'twin']);
    const spec = async (name: string, stack: string) => {
      const s = JSON.parse(await ok(['service', 'inspect', name]))[0].Spec as Obj;
      const c = s.TaskTemplate.ContainerSpec;
      for (const x of c.Secrets ?? []) delete x.SecretID;
      for (const x of c.Configs ?? []) delete x.ConfigID;
      for (const n of s.TaskTemplate.Networks ?? []) delete n.Target;
      return JSON.parse(
        JSON.stringify(s).replaceAll(`${stack}_`, 'STACK_').replaceAll(`"${stack}"`, '"STACK"').replaceAll('hi-there', 'hello'),
      );
    };
    assert.deepEqual(await spec('app_web', 'app'), await spec('twin_web', 'twin'));
    assert.deepEqual(await spec('app_client', 'app'), await spec('twin_client', 'twin'));
    const web = JSON.parse(await ok(['service', 'inspect', 'app_web']))[0].Spec;
    assert.equal(web.Labels['com.docker.stack.namespace'], 'app');
    assert.deepEqual(web.TaskTemplate.ContainerSpec.Env, ['GREETING=hi-there']);
    assert.equal(web.TaskTemplate.ContainerSpec.Configs[0].File.Mode, 0o440);
    assert.equal(
      (await ok(['network', 'inspect', '-f', '{{.Driver}} {{.Scope}} {{index .Labels "tier"}}', 'app_back'])).trim(),
      'overlay swarm back',
    );

    assert.equal(await ok(['stack', 'ls']), await docker(['stack', 'ls']));
    assert.match(await ok(['stack', 'ls']), /^NAME +SERVICES\napp +2\ntwin +2\n$/);
    const services = await until(
      'the stack converged',
      async () => {
        const s = await ok(['stack', 'services', 'app']);
        return /app_web +replicated +2\/2/.test(s) && /app_client +replicated +1\/1/.test(s) ? s : undefined;
      },
      90_000,
      500,
    );
    assert.equal(services, await docker(['stack', 'services', 'app']));
    assert.equal(noAges(await ok(['stack', 'ps', 'app'])), noAges(await docker(['stack', 'ps', 'app'])));
    const logs = await until(
      'the web tasks read their secret and config',
      async () => {
        const r = await ok(['service', 'logs', '--raw', 'app_web']);
        return r.split('s3cr3t').length === 3 ? r : undefined;
      },
      60_000,
      500,
    );
    assert.match(logs, /s3cr3t\nmode=stack\nhi-there\n/);

    const again = await ok(['stack', 'deploy', '-c', 'stack.yml', '--resolve-image', 'never', 'app']);
    assert.match(again, /^Updating service app_web \(id: [0-9a-z]{25}\)\nUpdating service app_client \(id: [0-9a-z]{25}\)\n$/);
    // A service using most compose keys: the spec docker's converter makes.
    await writeFile(join(work, 'rich.yml'), richCompose);
    await ok(['stack', 'deploy', '-c', 'rich.yml', '--resolve-image', 'never', 'r1']);
    await docker(['stack', 'deploy', '-c', 'rich.yml', '--resolve-image', 'never', 'r2']);
    assert.deepEqual(await spec('r1_rich', 'r1'), await spec('r2_rich', 'r2'));
    await ok(['stack', 'rm', 'r1', 'r2']);
    const nothing = await engine(['stack', 'ps', 'none']);
    assert.deepEqual([nothing.code, nothing.stderr], [1, 'nothing found in stack: none\n']);
    const rmOut = await ok(['stack', 'rm', 'app', 'twin']);
    assert.equal(
      rmOut,
      ['app', 'twin']
        .map(
          (s) =>
            `Removing service ${s}_client\nRemoving service ${s}_web\nRemoving secret ${s}_token\nRemoving config ${s}_appconf\nRemoving network ${s}_back\n`,
        )
        .join(''),
    );
    const gone = await engine(['stack', 'rm', 'app']);
    assert.deepEqual([gone.code, gone.stderr], [0, 'Nothing found in stack: app\n']);
    assert.equal(await ok(['stack', 'ls']), 'NAME      SERVICES\n');
  });

  test('swarm leave', async () => {
    const refused = await engine(['swarm', 'leave']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^Error response from daemon: You are attempting to leave the swarm on a node that is participating as a manager/,
    );
    assert.equal(await ok(['swarm', 'leave', '--force']), 'Node left the swarm.\n');
    const inactive = await engine(['node', 'ls']);
    assert.equal(inactive.code, 1);
    assert.match(inactive.stderr, /This node is not a swarm manager/);
  });
});

describe('engine CLI: swarm join, node promote/demote/ps/rm, leave on two nodes', { timeout: 300_000 }, () => {
  const ds: TestDaemon[] = [];
  let work: string;
  const [ipA, ipB] = [`127.0.${base + 1}.6`, `127.0.${base + 2}.6`];
  const on = (d: TestDaemon, args: string[]) =>
    run(ENGINE, args, {
      env: { PATH: process.env.PATH, HOME: work, ENGINE_HOST: d.host, ENGINE_CONFIG: join(work, 'config') },
      timeoutMs: 120_000,
    });
  const ok = async (d: TestDaemon, args: string[]) => {
    const r = await on(d, args);
    assert.equal(r.code, 0, `engine ${args.join(' ')}: ${r.stderr}\n${r.stdout}\n${d.output.slice(-2000)}`);
    return r.stdout;
  };
  const self = async (d: TestDaemon) => JSON.parse(await ok(d, ['info', '--format', '{{json .Swarm}}'])) as Obj;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-cli-nodes-'));
    ds.push(...(await Promise.all([startDaemon(), startDaemon()])));
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('a worker joins, is promoted and demoted, leaves and is removed', async () => {
    const [a, b] = ds as [TestDaemon, TestDaemon];
    await ok(a, ['swarm', 'init', '--advertise-addr', ipA, '--listen-addr', `${ipA}:2377`]);
    const token = (await ok(a, ['swarm', 'join-token', '-q', 'worker'])).trim();
    const joined = await ok(b, ['swarm', 'join', '--token', token, '--advertise-addr', ipB, '--listen-addr', `${ipB}:2377`, `${ipA}:2377`]);
    assert.equal(joined, 'This node joined a swarm as a worker.\n');
    const idb = String((await self(b)).NodeID);
    const ls = await until(
      'two nodes ready',
      async () => {
        const out = await ok(a, ['node', 'ls']);
        return out.split('\n').filter((l) => / Ready /.test(l)).length === 2 ? out : undefined;
      },
      60_000,
      250,
    );
    assert.equal(ls.split('\n').length, 4);
    assert.match(ls, new RegExp(`^${idb} {5}\\S+ +Ready +Active +\\S`, 'm'));
    const workerOnly = await on(b, ['node', 'ls']);
    assert.equal(workerOnly.code, 1);
    assert.match(workerOnly.stderr, /This node is not a swarm manager/);

    assert.equal(await ok(a, ['node', 'promote', idb]), `Node ${idb} promoted to a manager in the swarm.\n`);
    await until('b a manager', async () => ((await self(b)).ControlAvailable === true ? true : undefined), 90_000, 250);
    assert.match(await ok(a, ['node', 'ls', '--filter', 'role=manager', '-q']), new RegExp(idb));
    // Right after a promotion the cluster may be between leaders for a moment (swarmkit's words then); a retry waits it out.
    const demoted = await until(
      'the demotion accepted',
      async () => {
        const r = await on(a, ['node', 'demote', idb]);
        if (r.code !== 0 && /does not have a leader/.test(r.stderr)) return undefined;
        return r;
      },
      60_000,
      1000,
    );
    assert.deepEqual(demoted, { code: 0, stdout: `Manager ${idb} demoted in the swarm.\n`, stderr: '' });
    await until('b a worker again', async () => ((await self(b)).ControlAvailable === false ? true : undefined), 90_000, 250);
    assert.equal(await ok(a, ['node', 'demote', idb]), `Node ${idb} is already a worker.\n`);
    assert.match(await ok(a, ['node', 'ps', idb]), /^ID +NAME +IMAGE +NODE +DESIRED STATE +CURRENT STATE +ERROR +PORTS\n/);

    assert.equal(await ok(b, ['swarm', 'leave']), 'Node left the swarm.\n');
    await until(
      'b down',
      async () => (/ Down /.test(await ok(a, ['node', 'ls', '--filter', `id=${idb}`])) ? true : undefined),
      90_000,
      500,
    );
    assert.equal(await ok(a, ['node', 'rm', idb]), `${idb}\n`);
    assert.equal((await ok(a, ['node', 'ls', '-q'])).split('\n').filter(Boolean).length, 1);
  });
});
