// Images of cluster tasks against Debian's docker-registry: the docker CLI 28 pins a service's
// image to its digest through GET /distribution/{name}/json, an API 1.29 request is pinned by the
// daemon (dockerd's rule), a worker that lacks the image pulls it before creating the task's
// container (with the credentials of `--with-registry-auth` for a registry behind htpasswd, never
// shown in inspect), the task is `preparing` while the pull runs, and a task whose image cannot be
// pulled is rejected with dockerd's message.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { RegistryProxy, startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.3 (the other cluster files use .1 and .2).
const base = 10 + loopbackSlot() * 4;
const ip = (i: number) => `127.0.${base + i}.3`;

interface TaskView {
  ID: string;
  NodeID?: string;
  DesiredState: string;
  Spec: { ContainerSpec: Record<string, unknown> };
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
}

async function ok(d: TestDaemon, args: string[], input?: string): Promise<string> {
  const r = await d.docker(args, input === undefined ? {} : { input });
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function tasksOf(d: TestDaemon, service: string): Promise<TaskView[]> {
  const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: [service] }))}`);
  return r.json() as TaskView[];
}

async function running(d: TestDaemon, service: string, n: number): Promise<TaskView[]> {
  return until(
    `${n} running tasks of ${service}`,
    async () => {
      const ts = (await tasksOf(d, service)).filter((t) => t.DesiredState === 'running');
      const bad = ts.find((t) => t.Status.Err);
      if (bad) throw new Error(`task ${bad.ID}: ${bad.Status.Err}`);
      return ts.length === n && ts.every((t) => t.Status.State === 'running') ? ts : undefined;
    },
    90_000,
    300,
  );
}

/** The manifest digest the registry gives for repo:tag. */
async function registryDigest(reg: TestRegistry, repo: string, tag: string, auth?: string): Promise<string> {
  const res = await fetch(`http://${reg.host}/v2/${repo}/manifests/${tag}`, {
    method: 'HEAD',
    headers: {
      Accept: 'application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json',
      ...(auth ? { Authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}),
    },
  });
  assert.equal(res.status, 200);
  return res.headers.get('docker-content-digest')!;
}

describe('cluster images: digests, pulls on the task node, registry auth', { timeout: 300_000 }, () => {
  let m: TestDaemon;
  let w: TestDaemon;
  let plain: TestRegistry;
  let locked: TestRegistry;
  let workerId = '';

  before(async () => {
    [plain, locked] = await Promise.all([startRegistry(), startRegistry({ auth: { user: 'alice', password: 'wonderland' } })]);
    [m, w] = await Promise.all([startDaemon(), startDaemon()]);
    // Only the manager holds busybox; it pushes it to both registries.
    await loadBusybox(m);
    await ok(m, ['tag', 'busybox:latest', `${plain.host}/bb:1`]);
    await ok(m, ['push', `${plain.host}/bb:1`]);
    await ok(m, ['login', locked.host, '-u', 'alice', '--password-stdin'], 'wonderland');
    await ok(m, ['tag', 'busybox:latest', `${locked.host}/private/bb:2`]);
    await ok(m, ['push', `${locked.host}/private/bb:2`]);
    await ok(m, ['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
    const token = (await ok(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
    await ok(w, ['swarm', 'join', '--token', token, '--advertise-addr', ip(1), '--listen-addr', `${ip(1)}:2377`, `${ip(0)}:2377`]);
    workerId = (await w.request('GET', '/v1.51/info')).json().Swarm.NodeID;
  });
  after(async () => {
    await Promise.all([m, w].filter(Boolean).map((d) => d.cleanup()));
    await Promise.all([plain, locked].filter(Boolean).map((r) => r.cleanup()));
  });

  test('while the worker pulls (throttled), the task is preparing; it runs once the image is there', async () => {
    const proxy = new RegistryProxy(plain.port);
    await proxy.start();
    proxy.throttle = 256 * 1024; // bytes per second of blob bodies: the pull takes seconds
    try {
      const image = `${proxy.host}/bb:1`;
      await ok(m, ['service', 'create', '--detach', '--name', 'slow', '--constraint', 'node.role==worker', image, 'sleep', '1000']);
      const seen = new Set<string>();
      const ts = await until(
        'the task running',
        async () => {
          const live = (await tasksOf(m, 'slow')).filter((t) => t.DesiredState === 'running');
          for (const t of live) seen.add(t.Status.State);
          const bad = live.find((t) => t.Status.Err);
          if (bad) throw new Error(`task ${bad.ID}: ${bad.Status.Err}`);
          return live.length === 1 && live[0]!.Status.State === 'running' ? live : undefined;
        },
        120_000,
        100,
      );
      assert.ok(seen.has('preparing'), `states seen: ${[...seen].join(', ')}`);
      assert.equal(ts[0]!.NodeID, workerId);
      assert.ok(proxy.blobGets().length >= 2, 'the worker downloaded the layer and the config through the proxy');
      await ok(m, ['service', 'rm', 'slow']);
    } finally {
      await proxy.stop();
    }
  });

  test('the CLI pins the image to its digest; the worker, without the image, pulls it and runs the task', async () => {
    const digest = await registryDigest(plain, 'bb', '1');
    // What the CLI asks first: the descriptor of the tag.
    const dist = await m.request('GET', `/v1.51/distribution/${plain.host}/bb:1/json`);
    assert.equal(dist.status, 200, dist.text());
    assert.equal(dist.json().Descriptor.digest, digest);
    assert.deepEqual(dist.json().Platforms, [{ architecture: 'amd64', os: 'linux' }]);

    assert.equal((await w.docker(['image', 'inspect', `${plain.host}/bb:1`])).code, 1, 'the worker does not hold the image');
    const create = await m.docker(
      [
        'service',
        'create',
        '--detach',
        '--name',
        'pulled',
        '--replicas',
        '2',
        '--constraint',
        'node.role==worker',
        `${plain.host}/bb:1`,
      ].concat(['sleep', '1000']),
    );
    assert.equal(create.code, 0, create.stderr);
    assert.doesNotMatch(create.stderr, /could not be accessed on a registry/);
    const spec = JSON.parse(await ok(m, ['service', 'inspect', 'pulled']))[0].Spec;
    assert.equal(spec.TaskTemplate.ContainerSpec.Image, `${plain.host}/bb:1@${digest}`);

    const ts = await running(m, 'pulled', 2);
    assert.ok(ts.every((t) => t.NodeID === workerId));
    const img = JSON.parse(await ok(w, ['image', 'inspect', `${plain.host}/bb@${digest}`]))[0];
    assert.ok(img.RepoDigests.includes(`${plain.host}/bb@${digest}`), JSON.stringify(img.RepoDigests));
    const ctr = ts[0]!.Status.ContainerStatus!.ContainerID!;
    const c = JSON.parse(await ok(w, ['inspect', ctr]))[0];
    assert.equal(c.Config.Image, `${plain.host}/bb:1@${digest}`);
    assert.equal(c.State.Running, true);
    // The pull shows in the worker's events as dockerd's pull event.
    const ev = await w.request(
      'GET',
      `/v1.51/events?until=${Math.ceil(Date.now() / 1000)}&filters=${encodeURIComponent('{"type":["image"]}')}`,
    );
    assert.match(String(ev.body), /"Action":"pull"/);
    await ok(m, ['service', 'rm', 'pulled']);
  });

  test('API 1.29: the daemon pins the image itself; an unreachable registry gives dockerd’s warning', async () => {
    const digest = await registryDigest(plain, 'bb', '1');
    const body = (image: string, name: string) => ({
      Name: name,
      TaskTemplate: { ContainerSpec: { Image: image, Args: ['sleep', '1000'] }, Placement: { Constraints: ['node.role==worker'] } },
      Mode: { Replicated: { Replicas: 0 } },
    });
    const r = await m.request('POST', '/v1.29/services/create', { body: body(`${plain.host}/bb:1`, 'old-client') });
    assert.equal(r.status, 201, r.text());
    assert.deepEqual(r.json().Warnings ?? [], []);
    const s = await m.request('GET', '/v1.51/services/old-client');
    assert.equal(s.json().Spec.TaskTemplate.ContainerSpec.Image, `${plain.host}/bb:1@${digest}`);
    // A newer client is trusted to have pinned it (dockerd does nothing for API >= 1.30).
    const newer = await m.request('POST', '/v1.51/services/create', { body: body(`${plain.host}/bb:1`, 'new-client') });
    assert.equal(newer.status, 201, newer.text());
    assert.equal((await m.request('GET', '/v1.51/services/new-client')).json().Spec.TaskTemplate.ContainerSpec.Image, `${plain.host}/bb:1`);
    const missing = await m.request('POST', '/v1.29/services/create', { body: body(`${plain.host}/nothing-here:1`, 'unpinned') });
    assert.equal(missing.status, 201, missing.text());
    assert.deepEqual(missing.json().Warnings, [
      `image ${plain.host}/nothing-here:1 could not be accessed on a registry to record\nits digest. Each node will access ${plain.host}/nothing-here:1 independently,\npossibly leading to different nodes running different\nversions of the image.\n`,
    ]);
    for (const n of ['old-client', 'new-client', 'unpinned']) await ok(m, ['service', 'rm', n]);
  });

  test('--with-registry-auth: the worker pulls from a registry behind htpasswd; without it the task is rejected', async () => {
    const image = `${locked.host}/private/bb:2`;
    const digest = await registryDigest(locked, 'private/bb', '2', 'alice:wonderland');
    // Without the credentials: the CLI cannot pin the image (it warns) and the worker cannot pull it.
    const bare = await m.docker([
      'service',
      'create',
      '--detach',
      '--name',
      'no-auth',
      '--constraint',
      'node.role==worker',
      image,
      'sleep',
      '1000',
    ]);
    assert.equal(bare.code, 0, bare.stderr);
    assert.match(bare.stderr, /could not be accessed on a registry to record/);
    const rejected = await until(
      'a rejected task',
      async () => (await tasksOf(m, 'no-auth')).find((t) => t.Status.State === 'rejected'),
      90_000,
      300,
    );
    assert.equal(rejected.NodeID, workerId);
    assert.equal(rejected.Status.Err, `No such image: ${image}`);
    await ok(m, ['service', 'rm', 'no-auth']);

    const withAuth = await m.docker([
      'service',
      'create',
      '--detach',
      '--with-registry-auth',
      '--name',
      'authed',
      '--constraint',
      'node.role==worker',
      image,
      'sleep',
      '1000',
    ]);
    assert.equal(withAuth.code, 0, withAuth.stderr);
    assert.doesNotMatch(withAuth.stderr, /could not be accessed/);
    const ts = await running(m, 'authed', 1);
    assert.equal(ts[0]!.NodeID, workerId);
    assert.equal((await w.docker(['image', 'inspect', `${locked.host}/private/bb@${digest}`])).code, 0);
    // The credentials travel with the task but are never shown.
    const svc = await m.request('GET', '/v1.51/services/authed');
    assert.equal(svc.json().Spec.TaskTemplate.ContainerSpec.Image, `${image}@${digest}`);
    assert.doesNotMatch(String(svc.body), /PullOptions|RegistryAuth/);
    const task = await m.request('GET', `/v1.51/tasks/${ts[0]!.ID}`);
    assert.doesNotMatch(String(task.body), /PullOptions|RegistryAuth/);

    // An update without --with-registry-auth keeps the credentials (registryAuthFrom=spec): the
    // new task on the worker pulls again with them.
    await ok(m, ['service', 'update', '--detach', '--env-add', 'X=1', 'authed']);
    await until(
      'the updated task running',
      async () => {
        const live = (await tasksOf(m, 'authed')).filter((t) => t.DesiredState === 'running');
        const bad = live.find((t) => t.Status.Err);
        if (bad) throw new Error(`task ${bad.ID}: ${bad.Status.Err}`);
        return live.length === 1 &&
          live[0]!.Status.State === 'running' &&
          (live[0]!.Spec.ContainerSpec.Env as string[] | undefined)?.includes('X=1')
          ? true
          : undefined;
      },
      90_000,
      300,
    );
    await ok(m, ['service', 'rm', 'authed']);
  });

  test('docker stack deploy --with-registry-auth: the worker pulls the stack’s private image', async () => {
    const image = `${locked.host}/private/bb:2`;
    const dir = await mkdtemp(join(tmpdir(), 'engine-stack-auth-'));
    try {
      await writeFile(
        join(dir, 'stack.yml'),
        `version: "3.8"\nservices:\n  app:\n    image: ${image}\n    command: ["sleep", "1000"]\n    deploy:\n      placement:\n        constraints: [node.role == worker]\n`,
      );
      // A fresh copy on the worker: the earlier test's image goes first.
      const held = `${locked.host}/private/bb@${await registryDigest(locked, 'private/bb', '2', 'alice:wonderland')}`;
      await until(
        'the worker without the private image',
        async () => {
          await w.docker(['image', 'rm', '-f', held]);
          return (await w.docker(['image', 'inspect', held])).code === 1 ? true : undefined;
        },
        30_000,
        500,
      );
      const dep = await m.docker(['stack', 'deploy', '--with-registry-auth', '--compose-file', join(dir, 'stack.yml'), 'priv']);
      assert.equal(dep.code, 0, dep.stderr);
      const ts = await running(m, 'priv_app', 1);
      assert.equal(ts[0]!.NodeID, workerId);
      assert.equal((await w.docker(['image', 'inspect', held])).code, 0, 'pulled again with the stack’s credentials');
      assert.equal((await m.docker(['stack', 'rm', 'priv'])).code, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
