// `docker stack` of the docker CLI 28 against a one-node cluster: deploy of a compose file with two
// services, an overlay network, a secret and a config (the CLI creates each with the label
// com.docker.stack.namespace), the services' tasks reading the secret and the config and finding
// each other by name on the stack's network, `stack ls`, `stack services`, `stack ps`, a second
// deploy that updates a service, and `stack rm` removing every object of the stack.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.5 (the other cluster files use .1 to .4).
const base = 10 + loopbackSlot() * 4;
const ip = (i: number) => `127.0.${base + i}.5`;

interface TaskView {
  ID: string;
  DesiredState: string;
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
}

const compose = (replicas: number) => `
version: "3.8"
services:
  web:
    image: busybox:latest
    command: ["sh", "-c", "cat /run/secrets/token /etc/app.conf; while true; do echo hi | nc -l -p 8080 >/dev/null; done"]
    networks: [back]
    secrets: [token]
    configs:
      - source: appconf
        target: /etc/app.conf
        mode: 0440
    deploy:
      replicas: ${replicas}
  client:
    image: busybox:latest
    command: ["sleep", "1000"]
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

describe('docker stack deploy / ls / services / ps / rm', { timeout: 240_000 }, () => {
  let d: TestDaemon;
  let dir = '';

  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    const r = await d.docker(['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
    assert.equal(r.code, 0, r.stderr);
    dir = await mkdtemp(join(tmpdir(), 'engine-stack-'));
    await writeFile(join(dir, 'token.txt'), 's3cr3t\n');
    await writeFile(join(dir, 'app.conf'), 'mode=stack\n');
  });
  after(async () => {
    await d?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const docker = async (args: string[]) => {
    const r = await d.docker(args, { cwd: dir } as never);
    assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
    return r;
  };

  const running = (service: string, n: number) =>
    until(
      `${n} running tasks of ${service}`,
      async () => {
        const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: [service] }))}`);
        const ts = (r.json() as TaskView[]).filter((t) => t.DesiredState === 'running');
        const bad = ts.find((t) => t.Status.Err);
        if (bad) throw new Error(`task ${bad.ID}: ${bad.Status.Err}`);
        return ts.length === n && ts.every((t) => t.Status.State === 'running') ? ts : undefined;
      },
      90_000,
      300,
    );

  test('deploy, ls, services, ps, update by a second deploy, rm', async () => {
    await writeFile(join(dir, 'stack.yml'), compose(2));
    const dep = await docker(['stack', 'deploy', '--compose-file', join(dir, 'stack.yml'), 'shop']);
    assert.match(dep.stdout, /Creating network shop_back/);
    assert.match(dep.stdout, /Creating secret shop_token/);
    assert.match(dep.stdout, /Creating config shop_appconf/);
    assert.match(dep.stdout, /Creating service shop_web/);
    assert.match(dep.stdout, /Creating service shop_client/);

    // Every object carries the stack's label.
    const label = 'com.docker.stack.namespace=shop';
    const net = JSON.parse((await docker(['network', 'inspect', 'shop_back'])).stdout)[0];
    assert.equal(net.Driver, 'overlay');
    assert.equal(net.Scope, 'swarm');
    assert.equal(net.Labels['com.docker.stack.namespace'], 'shop');
    assert.equal(net.Labels.tier, 'back');
    assert.equal((await docker(['secret', 'ls', '--filter', `label=${label}`, '--format', '{{.Name}}'])).stdout.trim(), 'shop_token');
    assert.equal((await docker(['config', 'ls', '--filter', `label=${label}`, '--format', '{{.Name}}'])).stdout.trim(), 'shop_appconf');

    const web = await running('shop_web', 2);
    await running('shop_client', 1);
    // The task reads the secret and the config the stack made.
    const cid = web[0]!.Status.ContainerStatus!.ContainerID!;
    const logs = await docker(['logs', cid]);
    assert.equal(logs.stdout, 's3cr3t\nmode=stack\n');
    // The services find each other by name on the stack's network (web's VIP balances to its tasks).
    const client = (await running('shop_client', 1))[0]!.Status.ContainerStatus!.ContainerID!;
    const answer = await until(
      'web answers through its VIP',
      async () => {
        const r = await d.docker(['exec', client, 'sh', '-c', 'nc -w 2 web 8080 </dev/null']);
        return r.code === 0 && r.stdout.includes('hi') ? r.stdout : undefined;
      },
      30_000,
      500,
    );
    assert.match(answer, /hi/);

    assert.match((await docker(['stack', 'ls'])).stdout, /^shop\s+2\s*$/m);
    const services = (await docker(['stack', 'services', 'shop', '--format', '{{.Name}} {{.Mode}} {{.Replicas}}'])).stdout;
    assert.deepEqual(services.trim().split('\n').sort(), ['shop_client replicated 1/1', 'shop_web replicated 2/2']);
    const ps = (await docker(['stack', 'ps', 'shop', '--format', '{{.Name}} {{.CurrentState}}'])).stdout;
    assert.deepEqual(
      ps
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0])
        .sort(),
      ['shop_client.1', 'shop_web.1', 'shop_web.2'],
      ps,
    );
    assert.ok(
      ps
        .trim()
        .split('\n')
        .every((l) => / Running /.test(l)),
      ps,
    );

    // A second deploy updates what changed.
    await writeFile(join(dir, 'stack.yml'), compose(3));
    const again = await docker(['stack', 'deploy', '--compose-file', join(dir, 'stack.yml'), 'shop']);
    assert.match(again.stdout, /Updating service shop_web/);
    await running('shop_web', 3);

    const gone = await docker(['stack', 'rm', 'shop']);
    assert.match(gone.stdout, /Removing service shop_web/);
    assert.match(gone.stdout, /Removing network shop_back/);
    await until(
      'every object of the stack gone',
      async () => {
        const left = await Promise.all(
          ['service', 'secret', 'config', 'network'].map(async (k) =>
            (await docker([k, 'ls', '--filter', `label=${label}`, '-q'])).stdout.trim(),
          ),
        );
        return left.every((l) => l === '') ? true : undefined;
      },
      60_000,
      500,
    );
    assert.equal((await docker(['stack', 'ls'])).stdout.trim().split('\n').length, 1, 'only the header');
  });
});
