// Issue 4 (distribution): pull, push, login, search and distribution inspect against Debian's
// docker-registry, through the real docker CLI and raw HTTP — progress streams, insecure and TLS
// registries with certs.d, basic auth, mirrors, proxies, shared and interrupted pulls.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { buildBusyboxLayer } from '../fixtures/busybox-image.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import {
  ForwardProxy,
  makeRegistryCerts,
  primaryAddress,
  pushRawImage,
  pushRawIndex,
  RegistryProxy,
  sha256,
  startRegistry,
  startV1OnlyRegistry,
  TokenGateway,
  type RegistryCerts,
  type TestRegistry,
} from '../helpers/registry.ts';

const MT_GZ = 'application/vnd.oci.image.layer.v1.tar+gzip';
const MT_TAR = 'application/vnd.oci.image.layer.v1.tar';
const MTIME = Date.UTC(2024, 0, 1) / 1000;

interface Line {
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
  progress?: string;
  error?: string;
  errorDetail?: { message: string };
  aux?: Record<string, unknown>;
}

function lines(text: string): Line[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
}

/** A raw POST whose JSON lines arrive one by one; onLine may react mid-stream, or hang up by returning 'hangup'. */
function streamRequest(
  d: TestDaemon,
  path: string,
  onLine: (l: Line) => void | 'hangup',
  headers: Record<string, string> = {},
): Promise<{ status: number; lines: Line[] }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath: d.socket, method: 'POST', path, headers }, (res) => {
      const got: Line[] = [];
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const text = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!text) continue;
          const l = JSON.parse(text) as Line;
          got.push(l);
          if (onLine(l) === 'hangup') {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, lines: got });
            return;
          }
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, lines: got }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, lines: got }));
    });
    req.on('error', reject);
    req.end();
  });
}

const authHeader = (doc: Record<string, string>) => ({ 'X-Registry-Auth': Buffer.from(JSON.stringify(doc)).toString('base64url') });

async function reload(d: TestDaemon, config: Record<string, unknown>): Promise<void> {
  const before = (d.output.match(/Reloaded configuration/g) ?? []).length;
  await writeFile(d.configFile, JSON.stringify(config));
  d.child.kill('SIGHUP');
  const deadline = Date.now() + 10_000;
  while ((d.output.match(/Reloaded configuration/g) ?? []).length === before) {
    if (Date.now() > deadline) throw new Error(`no reload:\n${d.output}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function supervisor(d: TestDaemon): SupervisorClient {
  return new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine' });
}

/** Drops an image record the way `docker rmi` would (sync GC: its content goes too). */
async function removeImage(d: TestDaemon, name: string): Promise<void> {
  const r = await d.request('DELETE', `/images/${encodeURIComponent(name)}?force=1`);
  const c = supervisor(d);
  try {
    if (r.status !== 200) await c.images.delete(name, { sync: true });
    await c.withLease(async () => undefined, { sync: true }); // a GC pass: the image's blobs and snapshots go now
  } finally {
    c.close();
  }
}

const config = (diffIds: string[], extra: Record<string, unknown> = {}) => ({
  architecture: 'amd64',
  os: 'linux',
  created: new Date(MTIME * 1000).toISOString(),
  config: { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], Cmd: ['sh'] },
  rootfs: { type: 'layers', diff_ids: diffIds },
  ...extra,
});

async function fileLayer(files: Record<string, string | Buffer>): Promise<Buffer> {
  return tarToBuffer(async (tw) => {
    const dirs = new Set<string>();
    for (const name of Object.keys(files)) {
      const parts = name.split('/').slice(0, -1);
      for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    }
    for (const d of [...dirs].sort()) await tw.directory(d, { mtime: MTIME, mode: 0o755 });
    for (const [name, content] of Object.entries(files)) await tw.file(name, content, { mtime: MTIME });
  });
}

describe('registries: pull, push, login, search, inspect', { timeout: 600_000 }, () => {
  let d: TestDaemon;
  let plain: TestRegistry;
  let secure: TestRegistry;
  let certs: RegistryCerts;
  let certsD: string;
  let work: string;
  const ip = primaryAddress();
  let busyboxLayer: { tar: Buffer; gz: Buffer };

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'engine-registry-test-'));
    certsD = join(work, 'certs.d');
    await mkdir(certsD);
    certs = await makeRegistryCerts(join(work, 'ca'), ['127.0.0.1', ip]);
    plain = await startRegistry();
    secure = await startRegistry({
      tls: { cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert },
      auth: { user: 'alice', password: 'wonderland' },
    });
    d = await startDaemon({ config: { 'max-download-attempts': 2 }, env: { ENGINE_CERTS_D: certsD } });
    busyboxLayer = await buildBusyboxLayer();
  });
  after(async () => {
    await d?.cleanup();
    await plain?.cleanup();
    await secure?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('docker push to a loopback registry, remove, docker pull back, docker run', async () => {
    const name = `${plain.host}/busybox:latest`;
    await loadBusybox(d, `${plain.host}/busybox:latest`);
    const push = await d.docker(['push', name]);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stdout, new RegExp(`The push refers to repository \\[${plain.host}/busybox\\]`));
    assert.match(push.stdout, /: Pushed$/m);
    const m = /^latest: digest: (sha256:[0-9a-f]{64}) size: (\d+)$/m.exec(push.stdout);
    assert.ok(m, push.stdout);
    const again = await d.docker(['push', name]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /: Layer already exists$/m);

    await removeImage(d, name);
    assert.equal((await d.request('GET', `/images/${encodeURIComponent(name)}/json`)).status, 404);

    const pull = await d.docker(['pull', name]);
    assert.equal(pull.code, 0, pull.stderr);
    assert.match(pull.stdout, /^latest: Pulling from busybox$/m);
    assert.match(pull.stdout, /: Pull complete$/m);
    assert.match(pull.stdout, new RegExp(`^Digest: ${m[1]}$`, 'm'));
    assert.match(pull.stdout, new RegExp(`^Status: Downloaded newer image for ${plain.host}/busybox:latest$`, 'm'));

    const runOut = await d.docker(['run', '--rm', name, 'echo', 'pulled and running']);
    assert.equal(runOut.code, 0, runOut.stderr);
    assert.equal(runOut.stdout, 'pulled and running\n');

    const up = await d.docker(['pull', name]);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /: Already exists$/m);
    assert.match(up.stdout, new RegExp(`^Status: Image is up to date for ${plain.host}/busybox:latest$`, 'm'));
  });
  test('raw HTTP: the progress stream dockerd sends, a two-layer image with an uncompressed layer, errors', async () => {
    const l2 = await fileLayer({ 'data/hello.txt': 'hello from layer two\n' });
    const cfg = config([sha256(busyboxLayer.tar), sha256(l2)]);
    const pushed = await pushRawImage(`http://${plain.host}`, 'multi', 'v1', {
      config: cfg,
      layers: [
        { mediaType: MT_GZ, data: busyboxLayer.gz },
        { mediaType: MT_TAR, data: l2 },
      ],
    });
    const r = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${plain.host}/multi`)}&tag=v1`);
    assert.equal(r.status, 200, r.text());
    assert.equal(r.headers['content-type'], 'application/json');
    const ls = lines(r.text());
    assert.deepEqual(ls[0], { status: 'Pulling from multi', id: 'v1' });
    const busyId = sha256(busyboxLayer.gz).slice(7, 19);
    const l2Id = sha256(l2).slice(7, 19);
    assert.deepEqual(
      ls.filter((l) => l.id === busyId).map((l) => l.status),
      ['Already exists'],
      'the busybox layer is already unpacked',
    );
    const mine = ls.filter((l) => l.id === l2Id);
    assert.deepEqual(mine[0], { status: 'Pulling fs layer', progressDetail: {}, id: l2Id });
    const dl = mine.find((l) => l.status === 'Downloading')!;
    assert.ok(dl, JSON.stringify(mine));
    assert.equal(dl.progressDetail!.total, l2.length);
    assert.match(dl.progress!, /^\[=*>\s*\] +[\d.]+k?B\/[\d.]+kB$/);
    const order = [...new Set(mine.map((l) => l.status))];
    assert.deepEqual(order, ['Pulling fs layer', 'Downloading', 'Verifying Checksum', 'Download complete', 'Extracting', 'Pull complete']);
    assert.deepEqual(ls.at(-2), { status: `Digest: ${pushed.digest}` });
    assert.deepEqual(ls.at(-1), { status: `Status: Downloaded newer image for ${plain.host}/multi:v1` });

    const cat = await d.docker(['run', '--rm', `${plain.host}/multi:v1`, 'cat', '/data/hello.txt']);
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout, 'hello from layer two\n');

    const noTag = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${plain.host}/multi`)}&tag=nope`);
    assert.equal(noTag.status, 404);
    assert.equal(noTag.json().message, `manifest for ${plain.host}/multi:nope not found: manifest unknown: manifest unknown`);
    const noRepo = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${plain.host}/nope`)}&tag=latest`);
    assert.equal(noRepo.status, 404);
    // distribution answers MANIFEST_UNKNOWN for a repository it does not know, too.
    assert.equal(noRepo.json().message, `manifest for ${plain.host}/nope:latest not found: manifest unknown: manifest unknown`);
    const bad = await d.request('POST', '/images/create?fromImage=Busybox&tag=latest');
    assert.equal(bad.status, 400);
    assert.match(bad.json().message, /invalid reference format: repository name \((library\/)?Busybox\) must be lowercase/);
    const cli = await d.docker(['pull', `${plain.host}/multi:nope`]);
    assert.equal(cli.code, 1);
    assert.match(
      cli.stderr,
      new RegExp(`Error response from daemon: manifest for ${plain.host}/multi:nope not found: manifest unknown: manifest unknown`),
    );

    // A zstd-compressed layer (containerd's differ decompresses it).
    const z = await fileLayer({ 'data/zstd.txt': 'zstd layer\n' });
    await pushRawImage(`http://${plain.host}`, 'zstd', 'v1', {
      config: config([sha256(busyboxLayer.tar), sha256(z)]),
      layers: [
        { mediaType: MT_GZ, data: busyboxLayer.gz },
        { mediaType: 'application/vnd.oci.image.layer.v1.tar+zstd', data: zstdCompressSync(z) },
      ],
    });
    const zr = await d.docker(['run', '--rm', `${plain.host}/zstd:v1`, 'cat', '/data/zstd.txt']);
    assert.equal(zr.code, 0, zr.stderr);
    assert.equal(zr.stdout, 'zstd layer\n');

    // By digest: the record is the digest reference.
    const byDigest = await d.docker(['pull', `${plain.host}/multi@${pushed.digest}`]);
    assert.equal(byDigest.code, 0, byDigest.stderr);
    assert.match(
      byDigest.stdout,
      new RegExp(`Status: (Downloaded newer image|Image is up to date) for ${plain.host}/multi@${pushed.digest}`),
    );
  });

  test('manifest lists and OCI indexes: platform selection, docker media types, distribution inspect', async () => {
    const amdLayer = await fileLayer({ 'data/arch': 'amd64\n' });
    const armLayer = await fileLayer({ 'data/arch': 'arm64\n' });
    const amdGz = gzipSync(amdLayer);
    const amd = await pushRawImage(`http://${plain.host}`, 'multiarch', null, {
      docker: true,
      config: config([sha256(busyboxLayer.tar), sha256(amdLayer)]),
      layers: [
        { mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', data: busyboxLayer.gz },
        { mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', data: amdGz },
      ],
    });
    const arm = await pushRawImage(`http://${plain.host}`, 'multiarch', null, {
      docker: true,
      config: config([sha256(busyboxLayer.tar), sha256(armLayer)], { architecture: 'arm64', variant: 'v8' }),
      layers: [
        { mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', data: busyboxLayer.gz },
        { mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', data: gzipSync(armLayer) },
      ],
    });
    const list = await pushRawIndex(
      `http://${plain.host}`,
      'multiarch',
      'dlist',
      [
        { manifest: arm, platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } },
        { manifest: amd, platform: { os: 'linux', architecture: 'amd64' } },
      ],
      true,
    );
    const oci = await pushRawIndex(`http://${plain.host}`, 'multiarch', 'oci', [
      { manifest: arm, platform: { os: 'linux', architecture: 'arm64' } },
      { manifest: amd, platform: { os: 'linux', architecture: 'amd64' } },
    ]);

    const pull = await d.docker(['pull', `${plain.host}/multiarch:dlist`]);
    assert.equal(pull.code, 0, pull.stderr);
    assert.match(pull.stdout, new RegExp(`^Digest: ${list.digest}$`, 'm'), "the digest shown is the list's");
    const run = await d.docker(['run', '--rm', `${plain.host}/multiarch:dlist`, 'cat', '/data/arch']);
    assert.equal(run.stdout, 'amd64\n', run.stderr);

    const armPull = await d.request(
      'POST',
      `/images/create?fromImage=${encodeURIComponent(`${plain.host}/multiarch`)}&tag=oci&platform=linux/arm64`,
    );
    assert.equal(armPull.status, 200);
    const armIds = lines(armPull.text()).map((l) => l.id);
    assert.ok(armIds.includes(sha256(gzipSync(armLayer)).slice(7, 19)), 'the arm64 layer was pulled');
    assert.ok(!armIds.includes(sha256(amdGz).slice(7, 19)), 'the amd64 layer was not');
    assert.deepEqual(lines(armPull.text()).at(-2), { status: `Digest: ${oci.digest}` });
    const none = await d.request(
      'POST',
      `/images/create?fromImage=${encodeURIComponent(`${plain.host}/multiarch`)}&tag=oci&platform=linux/s390x`,
    );
    assert.equal(none.status, 404);
    assert.equal(none.json().message, 'no matching manifest for linux/s390x in the manifest list entries');

    const insp = await d.request('GET', `/distribution/${plain.host}/multiarch:oci/json`);
    assert.equal(insp.status, 200, insp.text());
    assert.deepEqual(insp.json(), {
      Descriptor: { mediaType: 'application/vnd.oci.image.index.v1+json', digest: oci.digest, size: oci.size },
      Platforms: [
        { os: 'linux', architecture: 'arm64' },
        { os: 'linux', architecture: 'amd64' },
      ],
    });
    const single = await d.request('GET', `/distribution/${plain.host}/multi:v1/json`);
    assert.equal(single.status, 200, single.text());
    assert.equal(single.json().Descriptor.mediaType, 'application/vnd.oci.image.manifest.v1+json');
    assert.deepEqual(single.json().Platforms, [{ architecture: 'amd64', os: 'linux' }]);
    const missing = await d.request('GET', `/distribution/${plain.host}/multi:nope/json`);
    assert.equal(missing.status, 404);
  });

  test('a registry that needs TLS it lacks is refused until marked insecure (host:port or CIDR)', async () => {
    const name = `${ip}:${plain.port}/busybox:latest`;
    const refused = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${ip}:${plain.port}/busybox`)}&tag=latest`);
    assert.equal(refused.status, 500);
    assert.match(
      refused.json().message,
      new RegExp(`^Get "https://${ip}:${plain.port}/v2/": http: server gave HTTP response to HTTPS client`),
    );
    assert.match(refused.json().message, /insecure-registr/);
    const cli = await d.docker(['pull', name]);
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /http: server gave HTTP response to HTTPS client/);
    await loadBusybox(d, `${ip}:${plain.port}/pushed:1`);
    const push = await d.docker(['push', `${ip}:${plain.port}/pushed:1`]);
    assert.equal(push.code, 1);
    assert.match(push.stdout + push.stderr, /http: server gave HTTP response to HTTPS client/);
    const search = await d.request('GET', `/images/search?term=${encodeURIComponent(`${ip}:${plain.port}/busy`)}`);
    assert.equal(search.status, 500);
    assert.match(search.json().message, /http: server gave HTTP response to HTTPS client/);

    const subnet = ip.split('.').slice(0, 3).join('.') + '.0/24';
    await reload(d, { 'max-download-attempts': 2, 'insecure-registries': [subnet] });
    const ok = await d.docker(['pull', name]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /Status: (Downloaded newer image|Image is up to date) for/);
    await reload(d, { 'max-download-attempts': 2, 'insecure-registries': [`${ip}:${plain.port}`] });
    const pushed = await d.docker(['push', `${ip}:${plain.port}/pushed:1`]);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.match(pushed.stdout, /^1: digest: sha256:[0-9a-f]{64} size: \d+$/m);
    await reload(d, { 'max-download-attempts': 2 });
    assert.equal((await d.docker(['pull', name])).code, 1, 'no longer insecure after the reload');
  });

  test('TLS registry with basic auth: certs.d trust and client certificate, docker login right and wrong, push and pull', async () => {
    const host = `${ip}:${secure.port}`;
    const untrusted = await d.docker(['login', host, '-u', 'alice', '--password-stdin'], { input: 'wonderland' });
    assert.equal(untrusted.code, 1);
    assert.match(
      untrusted.stderr,
      new RegExp(`Get "https://${host}/v2/": tls: failed to verify certificate: x509: certificate signed by unknown authority`),
    );

    await mkdir(join(certsD, host), { recursive: true });
    await copyFile(certs.caCert, join(certsD, host, 'ca.crt'));
    const noClientCert = await d.request('POST', '/auth', { body: { username: 'alice', password: 'wonderland', serveraddress: host } });
    assert.notEqual(noClientCert.status, 200, 'the registry requires a client certificate');
    assert.match(noClientCert.json().message, /tls/);
    await copyFile(certs.clientCert, join(certsD, host, 'client.cert'));
    await copyFile(certs.clientKey, join(certsD, host, 'client.key'));

    const wrong = await d.docker(['login', host, '-u', 'alice', '--password-stdin'], { input: 'not-it' });
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      new RegExp(`Error response from daemon: login attempt to https://${host}/v2/ failed with status: 401 Unauthorized`),
    );
    const raw = await d.request('POST', '/auth', { body: { username: 'alice', password: 'nope', serveraddress: `https://${host}` } });
    assert.equal(raw.status, 401);
    assert.equal(raw.json().message, `login attempt to https://${host}/v2/ failed with status: 401 Unauthorized`);

    const right = await d.docker(['login', host, '-u', 'alice', '--password-stdin'], { input: 'wonderland' });
    assert.equal(right.code, 0, right.stderr);
    assert.match(right.stdout, /Login Succeeded/);
    assert.deepEqual(
      (await d.request('POST', '/auth', { body: { username: 'alice', password: 'wonderland', serveraddress: host } })).json(),
      { Status: 'Login Succeeded', IdentityToken: '' },
    );

    const name = `${host}/team/busybox:1`;
    await loadBusybox(d, name);
    const push = await d.docker(['push', name]);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stdout, /: Pushed$/m);
    await removeImage(d, name);
    const anonymous = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${host}/team/busybox`)}&tag=1`);
    assert.equal(anonymous.status, 500);
    assert.match(anonymous.json().message, /no basic auth credentials/);
    const pull = await d.docker(['pull', name]);
    assert.equal(pull.code, 0, pull.stderr);
    const run = await d.docker(['run', '--rm', name, 'echo', 'from the TLS registry']);
    assert.equal(run.stdout, 'from the TLS registry\n', run.stderr);
    const logout = await d.docker(['logout', host]);
    assert.equal(logout.code, 0, logout.stderr);
  });

  test('Bearer token auth: challenge, token endpoint, identity token from login', async () => {
    const gw = new TokenGateway(plain.port, 'tok', 'en');
    await gw.start();
    try {
      const wrong = await d.request('POST', '/auth', { body: { username: 'tok', password: 'bad', serveraddress: gw.host } });
      assert.equal(wrong.status, 401);
      assert.equal(
        wrong.json().message,
        `Get "https://${gw.host}/v2/": unauthorized: incorrect username or password`.replace('https', 'http'),
      );
      const login = await d.request('POST', '/auth', { body: { username: 'tok', password: 'en', serveraddress: gw.host } });
      assert.equal(login.status, 200, login.text());
      const identity = login.json().IdentityToken as string;
      assert.match(identity, /^refresh-/);
      assert.ok(
        gw.tokenRequests.some((t) => /offline_token=true&client_id=docker/.test(t)),
        gw.tokenRequests.join('\n'),
      );

      const anon = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${gw.host}/multi`)}&tag=v1`);
      assert.equal(anon.status, 500);
      assert.match(anon.json().message, /unauthorized/);
      const withPassword = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${gw.host}/multi`)}&tag=v1`, {
        headers: authHeader({ username: 'tok', password: 'en', serveraddress: gw.host }),
      });
      assert.equal(withPassword.status, 200, withPassword.text());
      assert.match(lines(withPassword.text()).at(-1)!.status!, /^Status: Downloaded newer image for /);
      assert.ok(
        gw.tokenRequests.some((t) => t.includes('scope=repository%3Amulti%3Apull')),
        gw.tokenRequests.join('\n'),
      );
      const withIdentity = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${gw.host}/multi`)}&tag=v1`, {
        headers: authHeader({ identitytoken: identity, serveraddress: gw.host }),
      });
      assert.equal(withIdentity.status, 200, withIdentity.text());
      assert.ok(
        gw.tokenRequests.some((t) => t.startsWith('POST') && t.includes('grant_type=refresh_token')),
        gw.tokenRequests.join('\n'),
      );
    } finally {
      await gw.stop();
    }
  });

  test('docker pull busybox goes to the registry mirror (a dead mirror first is skipped)', async () => {
    await loadBusybox(d, `${plain.host}/library/busybox:latest`);
    const seed = await d.docker(['push', `${plain.host}/library/busybox:latest`]);
    assert.equal(seed.code, 0, seed.stderr);
    const dead = await startV1OnlyRegistry();
    await dead.stop(); // its port is now closed
    await reload(d, { 'max-download-attempts': 2, 'registry-mirrors': [`http://${dead.host}`, `http://${plain.host}`] });
    try {
      const pull = await d.docker(['pull', 'busybox']);
      assert.equal(pull.code, 0, pull.stderr);
      assert.match(pull.stdout, /^latest: Pulling from library\/busybox$/m);
      assert.match(pull.stdout, /^Status: (Downloaded newer image|Image is up to date) for busybox:latest$/m);
      const run = await d.docker(['run', '--rm', 'busybox', 'echo', 'via mirror']);
      assert.equal(run.stdout, 'via mirror\n', run.stderr);
      const info = (await d.request('GET', '/info')).json();
      assert.deepEqual(info.RegistryConfig.IndexConfigs['docker.io'].Mirrors, [`http://${dead.host}`, `http://${plain.host}`]);
    } finally {
      await reload(d, { 'max-download-attempts': 2 });
    }
  });

  test('identical concurrent pulls share one download', async () => {
    const proxy = new RegistryProxy(plain.port);
    await proxy.start();
    try {
      const layer = await fileLayer({ 'blob.bin': randomBytes(4 << 20) });
      const gz = gzipSync(layer, { level: 1 });
      await pushRawImage(`http://${plain.host}`, 'shared', 'v1', {
        config: config([sha256(busyboxLayer.tar), sha256(layer)]),
        layers: [
          { mediaType: MT_GZ, data: busyboxLayer.gz },
          { mediaType: MT_GZ, data: gz },
        ],
      });
      proxy.throttle = 4 << 20; // ~1 s for the layer, so the pulls overlap
      const path = `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/shared`)}&tag=v1`;
      const results = await Promise.all(
        [0, 1, 2].map(async (i) => {
          await new Promise((r) => setTimeout(r, i * 100));
          return d.request('POST', path);
        }),
      );
      for (const r of results) {
        assert.equal(r.status, 200);
        const ls = lines(r.text());
        assert.equal(ls.at(-1)!.status, `Status: Downloaded newer image for ${proxy.host}/shared:v1`, r.text());
        assert.ok(
          ls.some((l) => l.status === 'Pull complete'),
          'every caller sees the progress',
        );
      }
      assert.equal(proxy.blobGets().filter((g) => g.includes(sha256(gz))).length, 1, proxy.seen.join('\n'));
      // Present now: a pull fetches the manifest and nothing else.
      const blobsBefore = proxy.blobGets().length;
      const again = lines((await d.request('POST', path)).text());
      assert.equal(proxy.blobGets().length, blobsBefore, 'no blob downloaded');
      assert.deepEqual(
        again.filter((l) => l.id && l.id !== 'v1').map((l) => l.status),
        ['Already exists', 'Already exists'],
      );
      assert.equal(again.at(-1)!.status, `Status: Image is up to date for ${proxy.host}/shared:v1`);
      const run = await d.docker(['run', '--rm', `${proxy.host}/shared:v1`, 'sh', '-c', 'wc -c < /blob.bin']);
      assert.equal(run.stdout.trim(), String(4 << 20), run.stderr);
    } finally {
      await proxy.stop();
    }
  });

  test('max-concurrent-downloads is honoured and layers unpack while later ones still download', async () => {
    const proxy = new RegistryProxy(plain.port);
    await proxy.start();
    await reload(d, { 'max-download-attempts': 2, 'max-concurrent-downloads': 2 });
    try {
      // The first layer takes ~0.5 s at the throttle: still in flight when the second's GET comes,
      // even from a stage worker that is only starting on a loaded machine (one clean-clone run saw
      // a 256 KiB first layer done before the second began: one download in flight at most).
      const a = await fileLayer({ 'a.bin': randomBytes(2 << 20) });
      const b = await fileLayer({ 'b.bin': randomBytes(8 << 20) });
      const c = await fileLayer({ 'c.bin': randomBytes(256 << 10) });
      const [ga, gb, gc] = [a, b, c].map((l) => gzipSync(l, { level: 1 }));
      await pushRawImage(`http://${plain.host}`, 'pipelined', 'v1', {
        config: config([sha256(a), sha256(b), sha256(c)]),
        layers: [ga!, gb!, gc!].map((data) => ({ mediaType: MT_GZ, data })),
      });
      proxy.throttle = 4 << 20;
      const r = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/pipelined`)}&tag=v1`);
      assert.equal(r.status, 200);
      const ls = lines(r.text());
      const at = (digest: string, status: string) => ls.findIndex((l) => l.id === digest.slice(7, 19) && l.status === status);
      assert.equal(proxy.maxBlobsInFlight, 2, `two downloads at a time: ${JSON.stringify(ls.map((l) => `${l.id ?? ''} ${l.status}`))}`);
      assert.ok(at(sha256(gc!), 'Waiting') > 0, 'the third layer waited for a download slot');
      assert.ok(
        at(sha256(ga!), 'Pull complete') >= 0 && at(sha256(ga!), 'Pull complete') < at(sha256(gb!), 'Download complete'),
        'the first layer was unpacked before the second finished downloading',
      );
      assert.match(ls.at(-1)!.status!, /^Status: Downloaded newer image/);
    } finally {
      await reload(d, { 'max-download-attempts': 2 });
      await proxy.stop();
    }
  });

  test('push: cross-repository mounts, max-concurrent-uploads, progress', async () => {
    const src = `${plain.host}/pipelined:v1`;
    const pulled = await d.docker(['pull', src]);
    assert.equal(pulled.code, 0, pulled.stderr);
    const c = supervisor(d);
    const reg = await startRegistry();
    const proxy = new RegistryProxy(reg.port);
    await proxy.start();
    try {
      const { target } = await c.images.get(src);
      for (const name of [`${plain.host}/mounted:v1`, `${proxy.host}/uploaded:v1`]) await c.images.create({ name, labels: {}, target });
      const mount = await d.docker(['push', `${plain.host}/mounted:v1`]);
      assert.equal(mount.code, 0, mount.stderr);
      assert.equal((mount.stdout.match(/: Mounted from pipelined$/gm) ?? []).length, 3, mount.stdout);

      await reload(d, { 'max-download-attempts': 2, 'max-concurrent-uploads': 1 });
      proxy.throttle = 16 << 20;
      const r = await d.request('POST', `/images/${proxy.host}/uploaded/push?tag=v1`, { headers: authHeader({}) });
      assert.equal(r.status, 200);
      const ls = lines(r.text());
      assert.deepEqual(ls[0], { status: `The push refers to repository [${proxy.host}/uploaded]` });
      assert.equal(ls.filter((l) => l.status === 'Preparing').length, 3);
      assert.ok(
        ls.some((l) => l.status === 'Waiting'),
        'one upload at a time: the others wait',
      );
      const pushing = ls.find((l) => l.status === 'Pushing')!;
      assert.match(pushing.progress!, /^\[=*>\s*\] +[\d.]+[kM]?B\/[\d.]+[kM]?B$/);
      assert.equal(ls.filter((l) => l.status === 'Pushed').length, 3);
      assert.equal(proxy.maxUploadsInFlight, 1);
      const final = ls.find((l) => l.aux)!;
      assert.deepEqual(Object.keys(final.aux!), ['Tag', 'Digest', 'Size']);
      assert.match(ls.find((l) => l.status?.startsWith('v1: digest:'))!.status!, /^v1: digest: sha256:[0-9a-f]{64} size: \d+$/);
    } finally {
      await reload(d, { 'max-download-attempts': 2 });
      c.close();
      await proxy.stop();
      await reg.cleanup();
    }
  });

  test('blobs whose bytes do not match their digest are refused', async () => {
    const proxy = new RegistryProxy(plain.port);
    await proxy.start();
    await reload(d, { 'max-download-attempts': 1 });
    try {
      const layer = await fileLayer({ 'x.bin': randomBytes(100 << 10) });
      const gz = gzipSync(layer);
      await pushRawImage(`http://${plain.host}`, 'corrupt', 'v1', {
        config: config([sha256(busyboxLayer.tar), sha256(layer)]),
        layers: [
          { mediaType: MT_GZ, data: busyboxLayer.gz },
          { mediaType: MT_GZ, data: gz },
        ],
      });
      const path = `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/corrupt`)}&tag=v1`;
      proxy.corruptBlobsFrom = 4096; // the layer, not the config
      const r = await d.request('POST', path);
      assert.equal(r.status, 200);
      assert.equal(lines(r.text()).at(-1)!.error, `filesystem layer verification failed for digest ${sha256(gz)}`);
      proxy.corruptBlobsFrom = 1; // the config too
      const rc = await d.request('POST', path);
      assert.equal(rc.status, 200);
      assert.match(lines(rc.text()).at(-1)!.error!, /^image config verification failed for digest sha256:[0-9a-f]{64}$/);
      assert.equal((await d.request('GET', `/images/${encodeURIComponent(`${proxy.host}/corrupt:v1`)}/json`)).status, 404);
      proxy.corruptBlobsFrom = 0;
      const ok = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/corrupt`)}&tag=v1`);
      assert.match(lines(ok.text()).at(-1)!.status!, /^Status: Downloaded newer image/);
    } finally {
      await reload(d, { 'max-download-attempts': 2 });
      await proxy.stop();
    }
  });

  test('a pull whose registry dies mid-blob leaves no image behind; the next pull completes', async () => {
    const reg = await startRegistry();
    const proxy = new RegistryProxy(reg.port);
    await proxy.start();
    try {
      const layer = await fileLayer({ 'big.bin': randomBytes(50 << 20) });
      const gz = gzipSync(layer, { level: 1 });
      await pushRawImage(`http://${reg.host}`, 'big', 'v1', {
        config: config([sha256(busyboxLayer.tar), sha256(layer)]),
        layers: [
          { mediaType: MT_GZ, data: busyboxLayer.gz },
          { mediaType: MT_GZ, data: gz },
        ],
      });
      const name = `${proxy.host}/big:v1`;
      proxy.throttle = 20 << 20;
      let killed = false;
      const bigId = sha256(gz).slice(7, 19);
      const res = await streamRequest(d, `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/big`)}&tag=v1`, (l) => {
        if (!killed && l.id === bigId && l.status === 'Downloading' && (l.progressDetail?.current ?? 0) > 5 << 20) {
          killed = true;
          void reg.kill();
        }
      });
      assert.ok(killed, 'the registry was killed mid-download');
      assert.equal(res.status, 200);
      const last = res.lines.at(-1)!;
      assert.ok(last.errorDetail, JSON.stringify(res.lines.slice(-5)));
      assert.ok(
        res.lines.some((l) => l.id === bigId && /^Retrying in \d+ seconds?$/.test(l.status ?? '')),
        'max-download-attempts 2: one retry',
      );
      assert.equal((await d.request('GET', `/images/${encodeURIComponent(name)}/json`)).status, 404);
      const listed = (await d.request('GET', '/images/json')).json() as Array<{ RepoTags: string[] | null }>;
      assert.ok(!listed.some((i) => (i.RepoTags ?? []).includes(name)), 'not listed');
      const c = supervisor(d);
      try {
        assert.deepEqual(
          (await c.leases.list()).filter((l) => l.labels['engine.pull']),
          [],
          'the pull lease is gone',
        );
      } finally {
        c.close();
      }

      await reg.start();
      proxy.throttle = 0;
      const again = await d.docker(['pull', name]);
      assert.equal(again.code, 0, again.stderr);
      const run = await d.docker(['run', '--rm', name, 'sh', '-c', 'wc -c < /big.bin']);
      assert.equal(run.stdout.trim(), String(50 << 20), run.stderr);

      // The client hanging up mid-pull cancels it: lease gone, nothing listed.
      const pullLeases = async () => {
        const c = supervisor(d);
        try {
          return (await c.leases.list()).filter((l) => l.labels['engine.pull']);
        } finally {
          c.close();
        }
      };
      const untilNoPullLease = async () => {
        const deadline = Date.now() + 20_000;
        while ((await pullLeases()).length) {
          if (Date.now() > deadline) throw new Error('a pull lease stayed behind');
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      await removeImage(d, name);
      proxy.throttle = 20 << 20;
      const midway = (l: Line) => l.id === bigId && l.status === 'Downloading' && (l.progressDetail?.current ?? 0) > 5 << 20;
      const hung = await streamRequest(d, `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/big`)}&tag=v1`, (l) =>
        midway(l) ? 'hangup' : undefined,
      );
      assert.ok(hung.lines.some(midway));
      await untilNoPullLease();
      assert.equal((await d.request('GET', `/images/${encodeURIComponent(name)}/json`)).status, 404);

      // kill -9 of the daemon mid-pull: after the restart nothing is listed, the lease is dropped, the pull completes.
      let killedDaemon = false;
      await streamRequest(d, `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/big`)}&tag=v1`, (l) => {
        if (!killedDaemon && midway(l)) {
          killedDaemon = true;
          void d.kill9();
        }
      });
      assert.ok(killedDaemon);
      await d.restart();
      assert.equal((await d.request('GET', `/images/${encodeURIComponent(name)}/json`)).status, 404);
      await untilNoPullLease();
      proxy.throttle = 0;
      const after9 = await d.docker(['pull', name]);
      assert.equal(after9.code, 0, after9.stderr);
      assert.match(after9.stdout, /Status: Downloaded newer image/);

      // A dropped connection is retried (max-download-attempts) and the pull still succeeds.
      const layer2 = await fileLayer({ 'other.bin': randomBytes(2 << 20) });
      await pushRawImage(`http://${reg.host}`, 'big', 'v2', {
        config: config([sha256(busyboxLayer.tar), sha256(layer2)]),
        layers: [
          { mediaType: MT_GZ, data: busyboxLayer.gz },
          { mediaType: MT_TAR, data: layer2 },
        ],
      });
      proxy.cutNextBlobAfter = 1 << 20;
      const retried = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${proxy.host}/big`)}&tag=v2`);
      const rl = lines(retried.text());
      assert.ok(
        rl.some((l) => /^Retrying in/.test(l.status ?? '')),
        retried.text(),
      );
      assert.match(rl.at(-1)!.status ?? '', /^Status: Downloaded newer image/);
    } finally {
      await proxy.stop();
      await reg.cleanup();
    }
  });

  test('docker run of an image that is not there pulls it first', async () => {
    const name = `${plain.host}/multi:v1`;
    await removeImage(d, name).catch(() => undefined);
    const r = await d.docker(['run', '--rm', name, 'cat', '/data/hello.txt']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Unable to find image/);
    assert.equal(r.stdout, 'hello from layer two\n');
  });

  test('search: v2 catalog of a registry without v1 search; docker search', async () => {
    const r = await d.request('GET', `/images/search?term=${encodeURIComponent(`${plain.host}/mult`)}`);
    assert.equal(r.status, 200, r.text());
    const names = (r.json() as Array<{ name: string }>).map((x) => x.name).sort();
    assert.deepEqual(names, [`${plain.host}/multi`, `${plain.host}/multiarch`]);
    assert.deepEqual(r.json()[0], { name: names[0], description: '', star_count: 0, is_official: false, is_automated: false });
    const cli = await d.docker(['search', `${plain.host}/busy`]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`^${plain.host}/busybox\\s`, 'm'));
    const bad = await d.request('GET', `/images/search?term=x&limit=101`);
    assert.equal(bad.status, 400);
  });

  test('registries that speak only the v1 protocol are refused', async () => {
    const v1 = await startV1OnlyRegistry();
    try {
      const r = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${v1.host}/old`)}&tag=latest`);
      assert.equal(r.status, 500);
      assert.match(r.json().message, /does not support the registry v2 API.*v1 protocol are not supported/);
    } finally {
      await v1.stop();
    }
  });

  test('push of an unknown image and of all tags', async () => {
    const missing = await d.request('POST', `/images/${plain.host}/not-here/push?tag=1`, { headers: authHeader({}) });
    assert.equal(missing.status, 404);
    assert.equal(missing.json().message, `An image does not exist locally with the tag: ${plain.host}/not-here`);
    await loadBusybox(d, `${plain.host}/alltags:a`);
    await loadBusybox(d, `${plain.host}/alltags:b`);
    const r = await d.request('POST', `/images/${plain.host}/alltags/push`, { headers: authHeader({}) });
    assert.equal(r.status, 200);
    const ls = lines(r.text());
    assert.deepEqual(ls[0], { status: `The push refers to repository [${plain.host}/alltags]` });
    assert.deepEqual(
      ls.filter((l) => l.aux).map((l) => l.aux!.Tag),
      ['a', 'b'],
    );
    const tags = (await (await fetch(`http://${plain.host}/v2/alltags/tags/list`)).json()) as { tags: string[] };
    assert.deepEqual(tags.tags.sort(), ['a', 'b']);
  });
  test('import from a URL (fromSrc=http://…) with progress', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-tar', 'Content-Length': busyboxLayer.gz.length });
      res.end(busyboxLayer.gz);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/rootfs.tar.gz`;
      const r = await d.request(
        'POST',
        `/images/create?fromSrc=${encodeURIComponent(url)}&repo=from-url&tag=1&changes=${encodeURIComponent('CMD ["echo","imported from a URL"]')}`,
      );
      assert.equal(r.status, 200, r.text());
      const ls = lines(r.text());
      assert.match(ls.at(-1)!.status!, /^sha256:[0-9a-f]{64}$/);
      const run = await d.docker(['run', '--rm', 'from-url:1']);
      assert.equal(run.stdout, 'imported from a URL\n', run.stderr);
    } finally {
      server.close();
    }
  });

  test('proxies from the configuration win over the environment; loopback registries bypass them', async () => {
    const fwd = new ForwardProxy();
    await fwd.start();
    const d2 = await startDaemon({
      args: ['--http-proxy', fwd.url, '--insecure-registry', `${ip}:${plain.port}`],
      env: { HTTP_PROXY: 'http://127.0.0.1:9', HTTPS_PROXY: 'http://127.0.0.1:9', NO_PROXY: '' },
    });
    try {
      const r = await d2.request('POST', `/images/create?fromImage=${encodeURIComponent(`${ip}:${plain.port}/multi`)}&tag=v1`);
      assert.equal(r.status, 200, r.text());
      assert.match(lines(r.text()).at(-1)!.status!, /^Status: Downloaded newer image/);
      assert.ok(
        fwd.seen.some((l) => l.startsWith(`GET http://${ip}:${plain.port}/v2/multi/manifests/v1`)),
        fwd.seen.join('\n'),
      );
      assert.ok(
        fwd.seen.some((l) => l.startsWith(`GET http://${ip}:${plain.port}/v2/multi/blobs/`)),
        fwd.seen.join('\n'),
      );
      const before = fwd.seen.length;
      const lo = await d2.request('POST', `/images/create?fromImage=${encodeURIComponent(`${plain.host}/busybox`)}&tag=latest`);
      assert.equal(lo.status, 200, lo.text());
      assert.equal(fwd.seen.length, before, 'loopback registries are reached directly');
    } finally {
      await d2.cleanup();
      await fwd.stop();
    }
  });
});
