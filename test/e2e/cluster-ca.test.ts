// The cluster CA through the docker CLI 28 on a manager and a worker (loopback addresses of their
// own): `swarm init --cert-expiry 1h` gives 1-hour node certificates, swarmkit's minimum is refused;
// with the test knob ENGINE_TEST_CERT_RENEW_MS both nodes renew every few seconds (new key, same
// node ID and role) and a service task on the worker keeps running and new ones start; `docker node
// inspect` shows the node's TLSInfo. Root rotation: `docker swarm ca --rotate` waits until every node
// holds a certificate of the new root and trusts it, then prints it; the worker's certificate chains to
// it, the join tokens changed (a node with the old one is refused), the worker still runs tasks; the
// same with a root given by `--ca-cert/--ca-key` (made by openssl); external CAs are a 501; the worker
// promoted afterwards runs an etcd member beside one that loaded the first root.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { joinSwarm } from '../helpers/cluster-nodes.ts';
import { opensslVerifies } from '../helpers/openssl.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.6 (the other cluster files use .1 to .5).
const base = 10 + loopbackSlot() * 4;
const ip = (i: number) => `127.0.${base + i}.6`;
/** The test knob: renew every 3 s instead of at 50-80 % of the lifetime (1 h at least). */
const env = { ENGINE_TEST_CERT_RENEW_MS: '3000' };

async function ok(d: TestDaemon, args: string[], timeoutMs?: number): Promise<string> {
  const r = await d.docker(args, timeoutMs ? { timeoutMs } : {});
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}\n${d.output.slice(-3000)}`);
  return r.stdout;
}

const certFile = (d: TestDaemon, f: string) => readFileSync(join(d.dataRoot, 'cluster/certificates', f), 'utf8');
const pems = (text: string) => text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
const leaf = (d: TestDaemon) => new X509Certificate(pems(certFile(d, 'node.pem'))[0]!);

/** `openssl verify` of a node's certificate (with the chain it sends) against a root. */
function chainsTo(d: TestDaemon, rootPem: string): boolean {
  return opensslVerifies(rootPem, certFile(d, 'node.pem'));
}

/** A wait whose failure shows both daemons' last log lines. */
function withLogs<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: Error) => {
    throw new Error(`${err.message}\n--- manager:\n${m.output.slice(-4000)}\n--- worker:\n${w.output.slice(-6000)}`);
  });
}

let m: TestDaemon;
let w: TestDaemon;

async function runningOn(m: TestDaemon, service: string, nodeId: string): Promise<number> {
  const tasks = (await m.request('GET', `/tasks?filters=${encodeURIComponent(JSON.stringify({ service: [service] }))}`)).json() as Array<{
    NodeID: string;
    DesiredState: string;
    Status: { State: string };
  }>;
  return tasks.filter((t) => t.NodeID === nodeId && t.DesiredState === 'running' && t.Status.State === 'running').length;
}

describe('cluster CA: certificate expiry, renewal, root rotation', { timeout: 400_000 }, () => {
  let workerId = '';
  let oldToken = '';

  before(async () => {
    [m, w] = await Promise.all([startDaemon({ env }), startDaemon({ env })]);
    await Promise.all([loadBusybox(m), loadBusybox(w)]);
  });
  after(async () => {
    await Promise.all([m?.cleanup(), w?.cleanup()]);
  });

  test('--cert-expiry: 1 hour minimum; nodes renew and keep working', async (t) => {
    const short = await m.docker(['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`, '--cert-expiry', '59m']);
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /minimum certificate expiry time is: 1h0m0s/);
    await ok(m, ['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`, '--cert-expiry', '1h']);
    const life = (c: X509Certificate) => new Date(c.validTo).getTime() - new Date(c.validFrom).getTime();
    assert.ok(Math.abs(life(leaf(m)) - 3_660_000) < 2000, `manager certificate lifetime ${life(leaf(m))} ms`);
    const token = (await ok(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
    oldToken = token;
    await joinSwarm(w, token, ip(1), ip(0));
    workerId = JSON.parse(await ok(w, ['info', '--format', '{{json .Swarm.NodeID}}']));
    await ok(m, ['service', 'create', '--detach', '--name', 'web', '--constraint', 'node.role==worker', 'busybox:latest', 'sleep', '1d']);
    await until(
      'the task running on the worker',
      async () => ((await runningOn(m, 'web', workerId)) === 1 ? true : undefined),
      60_000,
      250,
    );

    // Renewals (every 3 s with the knob): new serial and key, same node, role and cluster.
    const first = leaf(w);
    const firstKey = certFile(w, 'node.key');
    const managerFirst = leaf(m).serialNumber;
    await until('the worker renewed twice', async () => (leaf(w).serialNumber !== first.serialNumber ? true : undefined), 30_000, 200);
    const second = leaf(w).serialNumber;
    await until('again', async () => (leaf(w).serialNumber !== second ? true : undefined), 30_000, 200);
    assert.equal(leaf(w).subject, first.subject, 'same O (cluster), OU (role), CN (node ID)');
    assert.notEqual(certFile(w, 'node.key'), firstKey, 'a new key');
    assert.ok(Math.abs(life(leaf(w)) - 3_660_000) < 2000);
    await until('the manager renewed', async () => (leaf(m).serialNumber !== managerFirst ? true : undefined), 30_000, 200);

    // Still working: the worker is ready, its task runs, new tasks start on it.
    await ok(m, ['service', 'scale', '--detach', 'web=2']);
    await until(
      'two tasks running on the worker',
      async () => ((await runningOn(m, 'web', workerId)) === 2 ? true : undefined),
      60_000,
      250,
    );
    assert.equal((await ok(m, ['node', 'inspect', '--format', '{{.Status.State}}', workerId])).trim(), 'ready');

    // TLSInfo as dockerd shows it: the node's trust root and its certificate's issuer.
    const tls = JSON.parse(await ok(m, ['node', 'inspect', '--format', '{{json .Description.TLSInfo}}', workerId]));
    const cluster = JSON.parse(await ok(m, ['info', '--format', '{{json .Swarm.Cluster.TLSInfo}}']));
    assert.equal(tls.TrustRoot.trim(), (await ok(m, ['swarm', 'ca'])).trim());
    assert.equal(tls.CertIssuerPublicKey, cluster.CertIssuerPublicKey);
    assert.equal(tls.CertIssuerSubject, cluster.CertIssuerSubject);

    // Updates: below the minimum refused, 2 h taken by the next renewal.
    const bad = await m.docker(['swarm', 'update', '--cert-expiry', '30m']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /minimum certificate expiry time is: 1h0m0s/);
    await ok(m, ['swarm', 'update', '--cert-expiry', '2h']);
    await until(
      'a 2-hour certificate on the worker',
      async () => (Math.abs(life(leaf(w)) - 7_260_000) < 2000 ? true : undefined),
      30_000,
      200,
    );
    t.diagnostic(`worker certificate renewed ${leaf(w).serialNumber !== second ? 'again' : ''} with the new lifetime`);
  });

  test('docker swarm ca --rotate: a new root on every node, old join token refused', async (t) => {
    const oldRoot = (await ok(m, ['swarm', 'ca'])).trim();
    const t0 = Date.now();
    const out = await ok(m, ['swarm', 'ca', '--rotate'], 180_000);
    t.diagnostic(`rotation converged in ${Date.now() - t0} ms`);
    const newRoot = pems(out).at(-1)!.trim();
    assert.ok(newRoot && newRoot !== oldRoot, out);
    assert.equal((await ok(m, ['swarm', 'ca'])).trim(), newRoot);
    assert.equal((await ok(m, ['info', '--format', '{{.Swarm.Cluster.RootRotationInProgress}}'])).trim(), 'false');
    assert.equal(certFile(w, 'ca.pem').trim(), newRoot, "the worker's trust root");
    assert.ok(chainsTo(w, newRoot), "the worker's certificate chains to the new root");
    assert.ok(chainsTo(m, newRoot));
    const token = (await ok(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
    assert.notEqual(token, oldToken, 'the join tokens changed');
    // The worker still works: a third task starts on it.
    await ok(m, ['service', 'scale', '--detach', 'web=3']);
    await until(
      'three tasks running on the worker',
      async () => ((await runningOn(m, 'web', workerId)) === 3 ? true : undefined),
      60_000,
      250,
    );
    // A node with the old token is refused.
    const x = await startDaemon();
    try {
      const r = await x.docker([
        'swarm',
        'join',
        '--token',
        oldToken,
        '--advertise-addr',
        ip(2),
        '--listen-addr',
        `${ip(2)}:2377`,
        `${ip(0)}:2377`,
      ]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /remote CA does not match fingerprint/);
    } finally {
      await x.cleanup();
    }
  });

  test('docker swarm ca --rotate --ca-cert --ca-key: the given root; external CAs are a 501', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cluster-ca-given-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          'ca.key',
          '-out',
          'ca.pem',
          '-days',
          '800',
          '-subj',
          '/CN=given-root',
        ],
        { cwd: dir, stdio: 'pipe' },
      );
      const given = readFileSync(join(dir, 'ca.pem'), 'utf8').trim();
      const out = await ok(m, ['swarm', 'ca', '--rotate', '--ca-cert', join(dir, 'ca.pem'), '--ca-key', join(dir, 'ca.key')], 180_000);
      assert.equal(pems(out).at(-1)!.trim(), given);
      assert.ok(chainsTo(w, given));
      assert.match(leaf(w).issuer, /CN=given-root/);
      await ok(m, ['service', 'scale', '--detach', 'web=4']);
      await until(
        'four tasks running on the worker',
        async () => ((await runningOn(m, 'web', workerId)) === 4 ? true : undefined),
        60_000,
        250,
      );
      const ext = await m.docker([
        'swarm',
        'ca',
        '--rotate',
        '--ca-cert',
        join(dir, 'ca.pem'),
        '--external-ca',
        'protocol=cfssl,url=https://127.0.0.1:1/',
      ]);
      assert.notEqual(ext.code, 0);
      assert.match(ext.stderr, /external CAs .* are not built in this engine/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the worker promoted after the rotations: etcd members of different eras accept each other', async () => {
    // The manager's etcd loaded the first root when it started; the promoted node's trusts the current
    // one only: the cross-signed roots sent with every certificate bridge them.
    await ok(m, ['node', 'promote', workerId]);
    await withLogs(
      until(
        'the worker serving as a manager',
        async () => {
          const s = JSON.parse(await ok(w, ['info', '--format', '{{json .Swarm}}']));
          return s.ControlAvailable === true && s.Managers === 2 ? true : undefined;
        },
        90_000,
        250,
      ),
    );
    await until(
      'both managers reachable',
      async () => {
        const r = await w.docker(['node', 'ls', '--format', '{{.ManagerStatus}}']);
        return r.code === 0 && r.stdout.split('\n').filter((l) => /Leader|Reachable/.test(l)).length === 2 ? true : undefined;
      },
      60_000,
      250,
    );
    // A service created through the promoted node runs on it (its store writes pass the etcd peers).
    await ok(w, [
      'service',
      'create',
      '--detach',
      '--name',
      'after',
      '--replicas',
      '2',
      '--constraint',
      `node.id==${workerId}`,
      'busybox:latest',
      'sleep',
      '1d',
    ]);
    await until(
      'two tasks of the new service',
      async () => ((await runningOn(m, 'after', workerId)) === 2 ? true : undefined),
      60_000,
      250,
    );
    assert.equal((await m.docker(['node', 'ls'])).code, 0);
    // The first manager restarted: its etcd now loads the current root only, and the cluster serves.
    await m.stop();
    await m.restart();
    await withLogs(
      until(
        'both managers ready after the restart',
        async () => {
          const r = await m.docker(['node', 'ls', '--format', '{{.Status}} {{.ManagerStatus}}']);
          return r.code === 0 && r.stdout.split('\n').filter((l) => /^Ready (Leader|Reachable)/.test(l)).length === 2 ? true : undefined;
        },
        90_000,
        500,
      ),
    );
    assert.equal(readFileSync(join(m.dataRoot, 'cluster/certificates/etcd-ca.pem'), 'utf8').trim(), certFile(m, 'ca.pem').trim());
    assert.match(leaf(w).subject, /OU=swarm-manager/);
  });
});
