// ContainerSpec.Privileges on real task containers of a one-node cluster: NoNewPrivileges and
// Seccomp unconfined through the API (the docker CLI 28 has no flag for them) show in the task's
// /proc/1/status (NoNewPrivs 1, Seccomp 0), a plain service's task keeps the defaults (0, 2), a
// custom profile (base64, as Go's []byte) denies the syscall it names; the docker CLI's
// --credential-spec gets dockerd's Linux behaviour (a warning here, the task refused with dockerd's
// words), and a bad mode or profile is a 400 at create.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.8 (other cluster files use .1 to .5).
const base = 10 + loopbackSlot() * 4;
const ip = (i: number) => `127.0.${base + i}.8`;

async function ok(d: TestDaemon, args: string[]): Promise<string> {
  const r = await d.docker(args);
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function create(d: TestDaemon, name: string, privileges?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await d.request('POST', '/v1.51/services/create', {
    body: {
      Name: name,
      TaskTemplate: {
        ContainerSpec: { Image: 'busybox:latest', Command: ['sleep', '3600'], ...(privileges ? { Privileges: privileges } : {}) },
      },
      Mode: { Replicated: { Replicas: 1 } },
    },
  });
  return { status: r.status, body: r.json() as Record<string, unknown> };
}

/** The running task container of a service (its name, as `docker ps` shows it). */
async function taskContainer(d: TestDaemon, service: string): Promise<string> {
  return until(
    `a running task container of ${service}`,
    async () => {
      const out = await ok(d, ['ps', '--filter', `label=com.docker.swarm.service.name=${service}`, '--format', '{{.Names}}']);
      return out.split('\n').filter(Boolean)[0];
    },
    90_000,
    300,
  );
}

/** NoNewPrivs and Seccomp of the task's PID 1, read inside the container. */
async function status(d: TestDaemon, container: string): Promise<{ nnp: string; seccomp: string }> {
  const out = await ok(d, ['exec', container, 'cat', '/proc/1/status']);
  return { nnp: /^NoNewPrivs:\s*(\d)/m.exec(out)?.[1] ?? '?', seccomp: /^Seccomp:\s*(\d)/m.exec(out)?.[1] ?? '?' };
}

describe('task privileges', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    await ok(d, ['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
  });
  after(async () => d?.cleanup());

  test('no-new-privileges and seccomp modes reach the task container', async () => {
    const strict = await create(d, 'nnp', { NoNewPrivileges: true, Seccomp: { Mode: 'unconfined' }, AppArmor: { Mode: 'disabled' } });
    assert.equal(strict.status, 201, JSON.stringify(strict.body));
    assert.deepEqual(strict.body.Warnings ?? [], [], 'nothing of these is left unapplied');
    assert.equal((await create(d, 'plain')).status, 201);
    const profile = JSON.stringify({
      defaultAction: 'SCMP_ACT_ALLOW',
      syscalls: [{ names: ['mkdir', 'mkdirat'], action: 'SCMP_ACT_ERRNO' }],
    });
    const custom = await create(d, 'custom', { Seccomp: { Mode: 'custom', Profile: Buffer.from(profile).toString('base64') } });
    assert.equal(custom.status, 201, JSON.stringify(custom.body));

    const [s, p, c] = await Promise.all(['nnp', 'plain', 'custom'].map((n) => taskContainer(d, n)));
    assert.deepEqual(await status(d, s!), { nnp: '1', seccomp: '0' });
    assert.deepEqual(await status(d, p!), { nnp: '0', seccomp: '2' });
    assert.deepEqual(await status(d, c!), { nnp: '0', seccomp: '2' });
    const inspect = JSON.parse(await ok(d, ['inspect', s!]))[0];
    assert.deepEqual(inspect.HostConfig.SecurityOpt, ['seccomp=unconfined', 'apparmor=unconfined', 'no-new-privileges=true']);
    // The custom profile is the filter: mkdir is refused, in the plain service's task it works.
    const denied = await d.docker(['exec', c!, 'mkdir', '/tmp/x']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /Operation not permitted/);
    assert.equal((await d.docker(['exec', p!, 'mkdir', '/tmp/x'])).code, 0);
    // The spec keeps what was sent (the CLI's Go types add the unset fields as null).
    const spec = JSON.parse(await ok(d, ['service', 'inspect', 'nnp']))[0].Spec.TaskTemplate.ContainerSpec;
    assert.deepEqual(
      { NoNewPrivileges: spec.Privileges.NoNewPrivileges, Seccomp: spec.Privileges.Seccomp, AppArmor: spec.Privileges.AppArmor },
      { NoNewPrivileges: true, Seccomp: { Mode: 'unconfined' }, AppArmor: { Mode: 'disabled' } },
    );
    await ok(d, ['service', 'rm', 'nnp', 'plain', 'custom']);
  });

  test('a credential spec is Windows-only: a warning, and the task refused as on dockerd', async () => {
    const r = await d.docker([
      'service',
      'create',
      '--detach',
      '--name',
      'gmsa',
      '--credential-spec',
      'file://spec.json',
      'busybox:latest',
      'sleep',
      '3600',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /CredentialSpec is for Windows containers/);
    const err = await until(
      'the task refused',
      async () => {
        const ts = JSON.parse(
          await ok(d, ['service', 'ps', 'gmsa', '--no-trunc', '--format', '{{json .}}']).then((o) => `[${o.trim().split('\n').join(',')}]`),
        );
        return (ts as Array<{ Error: string }>).map((t) => t.Error).find((e) => e);
      },
      60_000,
      300,
    );
    assert.match(err, /invalid --security-opt 2: \\?"credentialspec=file:\/\/spec.json\\?"/);
    await ok(d, ['service', 'rm', 'gmsa']);
  });

  test('bad modes and profiles are a 400', async () => {
    for (const [p, re] of [
      [{ Seccomp: { Mode: 'strict' } }, /Seccomp.Mode "strict"/],
      [{ Seccomp: { Mode: 'custom', Profile: Buffer.from('{"syscalls": 3}').toString('base64') } }, /Decoding seccomp profile failed/],
      [{ AppArmor: { Mode: 'profile' } }, /AppArmor.Mode "profile"/],
      [{ CredentialSpec: { File: 'a', Registry: 'b' } }, /cannot specify both "file" and "registry" credential specs/],
    ] as const) {
      const r = await create(d, 'bad', p);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.match(String(r.body.message), re);
    }
  });
});
