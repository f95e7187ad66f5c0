// The SDK (src/client/) against a real daemon: every endpoint family (system, containers with
// logs/stats/archives/attach, exec, images with save/load/tag/pull from a local registry, networks,
// volumes, plugins, cluster), typed errors, AbortSignal, version negotiation, and the TLS transport
// with the test CA (one daemon listening on its unix socket and on TLS TCP with --tlsverify).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { collect, EngineClient, EngineError, ConnectionError, type Frame } from '../../src/client/index.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { freePort } from '../helpers/ports.ts';
import { startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { makeCerts, tlsDaemonArgs, type TestCerts } from '../helpers/tls-certs.ts';

async function frames(it: AsyncIterable<Frame>): Promise<{ stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  for await (const f of it) if (f.stream !== 'stdin') out[f.stream] += f.data.toString();
  return out;
}

describe('client SDK against the daemon', () => {
  let d: TestDaemon;
  let c: EngineClient;
  let work: string;
  let certs: TestCerts;
  let tlsPort: number;
  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-sdk-test-'));
    certs = await makeCerts(join(work, 'certs'));
    tlsPort = await freePort();
    d = await startDaemon({ args: tlsDaemonArgs(certs, tlsPort) });
    await loadBusybox(d);
    c = new EngineClient({ host: d.host, env: {} });
  });
  after(async () => {
    c?.close();
    await d?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('system: ping, negotiated version, version, info, df; ENGINE_API_VERSION fixes the version', async () => {
    const p = await c.ping();
    assert.equal(p.apiVersion, '1.51');
    assert.equal(p.osType, 'linux');
    assert.equal(await c.apiVersion(), '1.51');
    const v = await c.version();
    assert.equal(v.ApiVersion, '1.51');
    const info = await c.info();
    assert.ok((info.Images ?? 0) >= 1, 'busybox is loaded');
    const df = await c.df();
    assert.ok(Array.isArray(df.Images));
    const old = new EngineClient({ host: d.host, env: { ENGINE_API_VERSION: '1.40' } });
    try {
      assert.equal(await old.apiVersion(), '1.40');
      // /version answers with the version the request used (the path prefix /v1.40 reached it)
      const res = await old.transport.request('GET', '/version');
      await collect(res);
      assert.equal((res as unknown as { req: { path: string } }).req.path, '/v1.40/version');
    } finally {
      old.close();
    }
  });

  test('containers: create, start, wait, logs demultiplexed, inspect, list with filters, remove; 404 is an EngineError', async () => {
    const { Id } = await c.containers.create(
      { Image: 'busybox', Cmd: ['sh', '-c', 'echo to-out; echo to-err >&2; exit 7'], Labels: { sdk: 'yes' } },
      { name: 'sdk-one' },
    );
    const w = await c.containers.waitRegistered(Id, { condition: 'next-exit' });
    await c.containers.start(Id);
    assert.equal((await w.result).StatusCode, 7);
    const out = await frames(c.containers.logs(Id));
    assert.equal(out.stdout, 'to-out\n');
    assert.equal(out.stderr, 'to-err\n');
    const tail = await frames(c.containers.logs(Id, { stderr: false, timestamps: true }));
    assert.match(tail.stdout, /^\d{4}-\d\d-\d\dT[\d:.]+Z to-out\n$/);
    const info = await c.containers.inspect('sdk-one');
    assert.equal(info.State?.ExitCode, 7);
    const listed = await c.containers.list({ all: true, filters: { label: ['sdk=yes'] } });
    assert.deepEqual(
      listed.map((x) => x.Id),
      [Id],
    );
    await c.containers.remove(Id);
    await assert.rejects(
      c.containers.inspect(Id),
      (e: unknown) => e instanceof EngineError && e.status === 404 && /No such container/i.test(e.message),
    );
  });

  test('attach as a duplex: stdin written, half-closed, output read until the process exits', async () => {
    const { Id } = await c.containers.create({
      Image: 'busybox',
      Cmd: ['sh', '-c', 'tr a-z A-Z; echo done >&2'],
      OpenStdin: true,
      StdinOnce: true,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
    });
    const h = await c.containers.attach(Id, { stdin: true });
    assert.equal(h.multiplexed, true);
    await c.containers.start(Id);
    h.stream.write('hello sdk\n');
    h.stream.end(); // stdin EOF: tr finishes
    const out = await frames(h.output());
    assert.equal(out.stdout, 'HELLO SDK\n');
    assert.equal(out.stderr, 'done\n');
    assert.equal((await c.containers.wait(Id)).StatusCode, 0);
    await c.containers.remove(Id);
  });

  test('exec: hijacked start with stdin half-close, exit code from inspect; top, stats, archive round trip', async () => {
    const { Id } = await c.containers.create({ Image: 'busybox', Cmd: ['sleep', '300'] });
    await c.containers.start(Id);
    try {
      const ex = await c.exec.create(Id, { Cmd: ['sh', '-c', 'cat; exit 4'], AttachStdin: true, AttachStdout: true, AttachStderr: true });
      const h = await c.exec.start(ex.Id);
      h.stream.end('piped into exec\n');
      assert.equal((await frames(h.output())).stdout, 'piped into exec\n');
      assert.equal((await c.exec.inspect(ex.Id)).ExitCode, 4);

      const top = await c.containers.top(Id);
      assert.ok(top.Processes?.some((p) => p.join(' ').includes('sleep 300')));

      const samples = [];
      for await (const s of c.containers.stats(Id, { stream: false })) samples.push(s);
      assert.equal(samples.length, 1);
      assert.ok((samples[0]!.memory_stats?.usage ?? 0) > 0);

      const { tarToBuffer } = await import('../../src/util/tar-writer.ts');
      await c.containers.putArchive(Id, '/tmp', await tarToBuffer(async (tw) => tw.file('sdk.txt', 'archive content\n')));
      const st = await c.containers.statPath(Id, '/tmp/sdk.txt');
      assert.equal(st.name, 'sdk.txt');
      assert.equal(st.size, 16);
      const back = await collect(await c.containers.getArchive(Id, '/tmp/sdk.txt'));
      assert.ok(back.includes(Buffer.from('archive content\n')));
    } finally {
      await c.containers.remove(Id, { force: true });
    }
  });

  test('images: list, inspect, tag, history, save → remove → load, remove; push and pull through a local registry with progress', async () => {
    const list = await c.images.list();
    assert.ok(list.some((i) => i.RepoTags?.includes('busybox:latest')));
    const img = await c.images.inspect('busybox:latest');
    assert.match(img.Id ?? '', /^sha256:/);
    await c.images.tag('busybox:latest', 'sdk/copy', 'v1');
    assert.equal((await c.images.inspect('sdk/copy:v1')).Id, img.Id);
    assert.ok((await c.images.history('busybox:latest')).length >= 1);
    const tar = await collect(await c.images.save(['sdk/copy:v1']));
    assert.ok(tar.length > 100_000);
    const removed = await c.images.remove('sdk/copy:v1');
    assert.deepEqual(removed, [{ Untagged: 'sdk/copy:v1' }]);
    const loaded = [];
    for await (const m of c.images.load(tar)) loaded.push(m);
    assert.ok(
      loaded.some((m) => /Loaded image: sdk\/copy:v1/.test(String((m as { stream?: string }).stream ?? m.status))),
      JSON.stringify(loaded),
    );
    await c.images.remove('sdk/copy:v1');

    let reg: TestRegistry | undefined;
    try {
      reg = await startRegistry();
      const name = `${reg.host}/sdk-busybox`;
      await c.images.tag('busybox:latest', name, 'latest');
      const pushed = [];
      for await (const m of c.images.push(name, { tag: 'latest' })) pushed.push(m);
      assert.ok(
        pushed.some((m) => m.status === 'Pushed'),
        JSON.stringify(pushed),
      );
      // Without any local copy of its layers, the pull downloads them (byte progress, Pull complete).
      await c.images.remove(`${name}:latest`);
      await c.images.remove('busybox:latest');
      const pulled = [];
      for await (const m of c.images.pull(`${name}:latest`)) pulled.push(m);
      assert.ok(pulled.some((m) => m.status === 'Pull complete'));
      assert.ok(
        pulled.some((m) => m.progressDetail?.total),
        'byte progress is reported',
      );
      assert.match(String(pulled.at(-1)?.status), /Downloaded newer image/);
      await c.images.tag(`${name}:latest`, 'busybox', 'latest');
      await c.images.remove(`${name}:latest`);
      // An error in the progress stream ends the iteration with an Error
      await assert.rejects(
        async () => {
          for await (const _ of c.images.pull(`${reg!.host}/does-not-exist:latest`));
        },
        (e: unknown) =>
          e instanceof Error && !(e instanceof EngineError) ? /not found|unknown/i.test(e.message) : e instanceof EngineError,
      );
    } finally {
      await reg?.cleanup();
    }
  });

  test('networks and volumes: create, inspect, list, connect, remove, prune', async () => {
    const net = await c.networks.create({ Name: 'sdk-net', Labels: { sdk: '1' } });
    assert.equal((await c.networks.inspect('sdk-net')).Id, net.Id);
    assert.ok((await c.networks.list({ filters: { label: ['sdk=1'] } })).some((n) => n.Name === 'sdk-net'));
    const { Id } = await c.containers.create({ Image: 'busybox', Cmd: ['true'] });
    await c.networks.connect('sdk-net', Id);
    assert.ok(Object.keys((await c.containers.inspect(Id)).NetworkSettings?.Networks ?? {}).includes('sdk-net'));
    await c.networks.disconnect('sdk-net', Id);
    await c.containers.remove(Id);
    await c.networks.remove('sdk-net');
    await assert.rejects(c.networks.inspect('sdk-net'), (e: unknown) => e instanceof EngineError && e.status === 404);

    const vol = await c.volumes.create({ Name: 'sdk-vol', Labels: { sdk: '1' } });
    assert.equal(vol.Name, 'sdk-vol');
    assert.equal((await c.volumes.inspect('sdk-vol')).Driver, 'local');
    assert.ok((await c.volumes.list()).Volumes?.some((v) => v.Name === 'sdk-vol'));
    const pruned = await c.volumes.prune({ filters: { all: ['true'], label: ['sdk=1'] } });
    assert.deepEqual(pruned.VolumesDeleted, ['sdk-vol']);
  });

  test('plugins and cluster: the answers of a node without plugins or cluster, as typed errors', async () => {
    assert.deepEqual(await c.plugins.list(), []);
    await assert.rejects(c.plugins.inspect('nope'), (e: unknown) => e instanceof EngineError && e.status === 404);
    await assert.rejects(c.cluster.inspect(), (e: unknown) => e instanceof EngineError && e.status === 503);
    await assert.rejects(c.cluster.list('services'), (e: unknown) => e instanceof EngineError && e.status === 503);
  });

  test('events stream as an async iterable, cancelled with an AbortSignal', async () => {
    const ac = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      try {
        for await (const e of c.events({ signal: ac.signal, filters: { type: ['volume'] } })) {
          seen.push(`${e.Type} ${e.Action} ${e.Actor?.ID}`);
          if (seen.length === 2) ac.abort();
        }
      } catch (e) {
        if ((e as Error).name !== 'AbortError') throw e;
      }
    })();
    await new Promise((r) => setTimeout(r, 300)); // the subscription is registered before the events happen
    await c.volumes.create({ Name: 'sdk-ev' });
    await c.volumes.remove('sdk-ev');
    await reading;
    assert.deepEqual(seen, ['volume create sdk-ev', 'volume destroy sdk-ev']);
  });

  test('TLS: client certificate from ENGINE_CERT_PATH and verification per ENGINE_TLS_VERIFY; no certificate refused', async () => {
    const tls = new EngineClient({
      env: { ENGINE_HOST: `tcp://127.0.0.1:${tlsPort}`, ENGINE_TLS_VERIFY: '1', ENGINE_CERT_PATH: certs.clientDir },
    });
    try {
      assert.equal((await tls.ping()).apiVersion, '1.51');
      assert.ok((await tls.images.list()).length >= 1);
    } finally {
      tls.close();
    }
    // A client without the CA does not trust the daemon when verifying.
    const untrusting = new EngineClient({
      env: { ENGINE_HOST: `tcp://127.0.0.1:${tlsPort}`, ENGINE_TLS_VERIFY: '1', ENGINE_CERT_PATH: join(work, 'empty') },
    });
    await assert.rejects(untrusting.ping(), /self-signed|unable to verify|certificate/i);
    untrusting.close();
    // Trusting the daemon but without a client certificate: the daemon (--tlsverify) refuses.
    const anonymous = new EngineClient({
      host: `tcp://127.0.0.1:${tlsPort}`,
      tlsVerify: true,
      tlsCaCert: certs.ca,
      certPath: join(work, 'empty'),
      env: {},
    });
    await assert.rejects(anonymous.ping(), /certificate|alert|socket hang up|ECONNRESET/i);
    anonymous.close();
    // Plain TCP to a TLS port fails; an unreachable daemon is a ConnectionError.
    const nothing = new EngineClient({ env: { ENGINE_HOST: `unix://${join(work, 'no.sock')}` } });
    await assert.rejects(nothing.ping(), (e: unknown) => e instanceof ConnectionError && /Cannot connect/.test(e.message));
    nothing.close();
  });
});
