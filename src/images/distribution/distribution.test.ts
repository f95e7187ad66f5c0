import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { EngineError } from '../../errors.ts';
import { decodeAuthHeader, decodeAuthHeaderLenient, hostFromServerAddress } from './auth-config.ts';
import { RegistryError, translatePullError } from './errors.ts';
import { parsePlatform, selectManifest } from './media.ts';
import { encodeMessage, humanSize, renderProgress } from './progress.ts';
import { parseChallenges } from './registry-auth.ts';
import { RegistrySession } from './registry-client.ts';
import { readCertsDir, RegistryHosts } from './registry-hosts.ts';
import { SharedOperations, Semaphore } from './shared.ts';
import { describeNetError, effectiveProxies, RegistryTransport } from './transport.ts';

test('progress text matches dockerd for a 200-column terminal', () => {
  assert.equal(humanSize(49152), '49.15kB');
  assert.equal(humanSize(821033), '821kB');
  assert.equal(humanSize(4335400), '4.335MB');
  assert.equal(humanSize(720), '720B');
  assert.equal(humanSize(2_000_000), '2MB');
  assert.equal(renderProgress(49152, 4335400), '[>                                                  ]  49.15kB/4.335MB');
  assert.equal(renderProgress(1378626, 4335400), '[===============>                                   ]  1.379MB/4.335MB');
  assert.equal(renderProgress(2459, 2459), '[==================================================>]  2.459kB/2.459kB');
  assert.equal(renderProgress(0, 0), '');
  assert.equal(
    encodeMessage({ status: 'Downloading', progressDetail: { current: 1, total: 2 }, progress: 'x', id: 'abc' }),
    '{"status":"Downloading","progressDetail":{"current":1,"total":2},"progress":"x","id":"abc"}\r\n',
  );
  assert.equal(encodeMessage({ errorDetail: { message: 'boom' }, error: 'boom' }), '{"errorDetail":{"message":"boom"},"error":"boom"}\r\n');
});

test('X-Registry-Auth: URL-safe and standard base64, padded or not, odd field names', () => {
  const doc = { username: 'al?ce', password: '???>>>', serveraddress: 'localhost:5000' };
  const std = Buffer.from(JSON.stringify(doc)).toString('base64');
  const url = Buffer.from(JSON.stringify(doc)).toString('base64url');
  assert.notEqual(std.replace(/=+$/, ''), url, 'the sample must differ between the alphabets');
  assert.deepEqual(decodeAuthHeader(std), doc);
  assert.deepEqual(decodeAuthHeader(url), doc);
  assert.deepEqual(decodeAuthHeader(std.replace(/=+$/, '')), doc);
  assert.deepEqual(decodeAuthHeader(Buffer.from('{"Username":"u","Password":"p","IdentityToken":"t"}').toString('base64')), {
    username: 'u',
    password: 'p',
    identitytoken: 't',
  });
  assert.deepEqual(
    decodeAuthHeader(Buffer.from(JSON.stringify({ auth: Buffer.from('bob:se:cret').toString('base64') })).toString('base64')),
    { auth: Buffer.from('bob:se:cret').toString('base64'), username: 'bob', password: 'se:cret' },
  );
  assert.deepEqual(decodeAuthHeader('e30='), {});
  assert.deepEqual(decodeAuthHeader(''), {});
  assert.throws(() => decodeAuthHeader('not base64 json'), /invalid X-Registry-Auth header/);
  assert.deepEqual(decodeAuthHeaderLenient('%%%'), {});
  assert.equal(hostFromServerAddress('https://index.docker.io/v1/'), 'docker.io');
  assert.equal(hostFromServerAddress('https://Registry.Example:5000/'), 'registry.example:5000');
  assert.equal(hostFromServerAddress('localhost:5000'), 'localhost:5000');
});

test('WWW-Authenticate challenges', () => {
  assert.deepEqual(
    parseChallenges('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"'),
    [
      {
        scheme: 'bearer',
        params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/busybox:pull' },
      },
    ],
  );
  assert.deepEqual(parseChallenges('Basic realm="engine test"'), [{ scheme: 'basic', params: { realm: 'engine test' } }]);
  assert.deepEqual(parseChallenges(['Basic realm=x, Bearer realm="a\\"b",service=s']), [
    { scheme: 'basic', params: { realm: 'x' } },
    { scheme: 'bearer', params: { realm: 'a"b', service: 's' } },
  ]);
});

test('insecure registries: loopback always, host:port and CIDR from the configuration', async () => {
  let insecure: string[] = [];
  const hosts = new RegistryHosts(
    () => ({ mirrors: ['http://127.0.0.1:5001', 'https://mirror.example'], insecureRegistries: insecure }),
    () => '/nonexistent',
  );
  assert.equal(await hosts.isInsecure('127.0.0.1:5000'), true);
  assert.equal(await hosts.isInsecure('localhost:5000'), true);
  assert.equal(await hosts.isInsecure('[::1]:5000'), true);
  assert.equal(await hosts.isInsecure('192.0.2.7:5000'), false);
  assert.equal(await hosts.isInsecure('docker.io'), false);
  insecure = ['192.0.2.7:5000'];
  assert.equal(await hosts.isInsecure('192.0.2.7:5000'), true);
  assert.equal(await hosts.isInsecure('192.0.2.7:5001'), false);
  insecure = ['192.0.2.0/24'];
  assert.equal(await hosts.isInsecure('192.0.2.7:5001'), true);
  assert.equal(await hosts.isInsecure('198.51.100.1:5000'), false);

  const eps = await hosts.endpoints('192.0.2.7:5000');
  assert.deepEqual(
    eps.map((e) => e.url),
    ['https://192.0.2.7:5000', 'http://192.0.2.7:5000'],
  );
  assert.equal(eps[0]!.tls.verify, false);
  insecure = [];
  assert.deepEqual(
    (await hosts.endpoints('192.0.2.7:5000')).map((e) => e.url),
    ['https://192.0.2.7:5000'],
  );
  assert.deepEqual(
    (await hosts.endpoints('docker.io', { mirrors: true })).map((e) => [e.url, e.mirror]),
    [
      ['http://127.0.0.1:5001', true],
      ['https://mirror.example', true],
      ['https://registry-1.docker.io', false],
    ],
  );
  assert.deepEqual(
    (await hosts.endpoints('docker.io')).map((e) => e.url),
    ['https://registry-1.docker.io'],
  );
});

test("certs.d: CAs, client pairs, and dockerd's errors for unpaired files", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'engine-certsd-'));
  try {
    await mkdir(join(dir, 'r:5000'));
    await writeFile(join(dir, 'r:5000', 'ca.crt'), 'CA');
    await writeFile(join(dir, 'r:5000', 'client.cert'), 'CERT');
    await writeFile(join(dir, 'r:5000', 'client.key'), 'KEY');
    const got = await readCertsDir(dir, 'r:5000');
    assert.deepEqual(got.ca, ['CA']);
    assert.equal(got.cert?.toString(), 'CERT');
    assert.equal(got.key?.toString(), 'KEY');
    assert.deepEqual(await readCertsDir(dir, 'other:1'), { ca: [] });
    await mkdir(join(dir, 'bad'));
    await writeFile(join(dir, 'bad', 'x.cert'), 'CERT');
    await assert.rejects(readCertsDir(dir, 'bad'), /missing key x\.key for client certificate x\.cert/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('platforms: parsing and selection from an index', () => {
  assert.deepEqual(parsePlatform('linux/amd64'), { os: 'linux', architecture: 'amd64' });
  assert.deepEqual(parsePlatform('linux/arm64/v8'), { os: 'linux', architecture: 'arm64' });
  assert.deepEqual(parsePlatform('linux/arm'), { os: 'linux', architecture: 'arm', variant: 'v7' });
  assert.deepEqual(parsePlatform('arm64'), { os: 'linux', architecture: 'arm64' });
  assert.throws(() => parsePlatform('linux//x'), /unknown operating system or architecture/);
  const m = (digest: string, platform?: Record<string, string>) => ({
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    digest,
    size: 1,
    ...(platform ? { platform: platform as never } : {}),
  });
  const index = {
    schemaVersion: 2,
    manifests: [
      m('a', { os: 'linux', architecture: 'arm', variant: 'v6' }),
      m('b', { os: 'linux', architecture: 'arm', variant: 'v7' }),
      m('c', { os: 'linux', architecture: 'amd64' }),
    ],
  };
  assert.equal(selectManifest(index, parsePlatform('linux/amd64')).digest, 'c');
  assert.equal(selectManifest(index, parsePlatform('linux/arm/v7')).digest, 'b');
  assert.equal(selectManifest(index, parsePlatform('linux/arm/v6')).digest, 'a');
  assert.throws(
    () => selectManifest(index, parsePlatform('linux/s390x')),
    (e: EngineError) => e.code === 'NOT_FOUND' && /no matching manifest for linux\/s390x in the manifest list entries/.test(e.message),
  );
});

test("registry errors are worded and classed like dockerd's", () => {
  const e = (code: string, msg: string, status = 404) =>
    new RegistryError(status, [{ code, message: msg }], `${code.toLowerCase().replace(/_/g, ' ')}: ${msg}`);
  let t = translatePullError(e('MANIFEST_UNKNOWN', 'manifest unknown'), 'r:5000/x:1', 'r:5000/x');
  assert.equal(t.code, 'NOT_FOUND');
  assert.equal(t.message, 'manifest for r:5000/x:1 not found: manifest unknown: manifest unknown');
  t = translatePullError(e('NAME_UNKNOWN', 'repository name not known to registry'), 'r:5000/x:1', 'r:5000/x');
  assert.equal(t.message, 'repository r:5000/x not found: name unknown: repository name not known to registry');
  t = translatePullError(e('DENIED', 'requested access to the resource is denied', 403), 'x:latest', 'x');
  assert.equal(
    t.message,
    "pull access denied for x, repository does not exist or may require 'docker login': denied: requested access to the resource is denied",
  );
  assert.equal(translatePullError(e('UNAUTHORIZED', 'authentication required', 401), 'x:1', 'x').status, 500);
});

test('Go-style transport errors', () => {
  const u = new URL('https://192.0.2.9:5000/v2/');
  assert.equal(
    describeNetError(Object.assign(new Error('write EPROTO …:wrong version number:…'), { code: 'EPROTO' }), u).text,
    'http: server gave HTTP response to HTTPS client',
  );
  assert.equal(
    describeNetError(Object.assign(new Error('x'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }), u).text,
    'tls: failed to verify certificate: x509: certificate signed by unknown authority',
  );
  assert.equal(
    describeNetError(Object.assign(new Error('x'), { code: 'ECONNREFUSED', address: '192.0.2.9', port: 5000 }), u).text,
    'dial tcp 192.0.2.9:5000: connect: connection refused',
  );
  assert.equal(
    describeNetError(Object.assign(new Error('x'), { code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' }), u).text,
    'remote error: tls: certificate required',
  );
});

test('proxy settings: configuration over environment, upper or lower case', () => {
  assert.deepEqual(
    effectiveProxies({ httpProxy: 'http://cfg:1' }, { HTTP_PROXY: 'http://env:1', https_proxy: 'http://env:2', NO_PROXY: 'a,b' }),
    { httpProxy: 'http://cfg:1', httpsProxy: 'http://env:2', noProxy: 'a,b' },
  );
  assert.deepEqual(effectiveProxies({}, {}), {});
});

test('semaphore: limit, waiting callback, release', async () => {
  const sem = new Semaphore(() => 2);
  const r1 = await sem.acquire();
  await sem.acquire();
  let waited = false;
  const third = sem.acquire(() => {
    waited = true;
  });
  assert.equal(waited, true);
  let got = false;
  void third.then(() => {
    got = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(got, false);
  r1();
  await third;
  assert.equal(got, true);
});

test('shared operations: a joiner gets the history and the result; the last leaver cancels', async () => {
  const ops = new SharedOperations<number>();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seenA: string[] = [];
  const seenB: string[] = [];
  let runs = 0;
  const start = async (sink: (m: { status?: string }) => void) => {
    runs++;
    sink({ status: 'one' });
    await gate;
    sink({ status: 'two' });
    return 42;
  };
  const a = ops.run('k', (m) => seenA.push(m.status!), undefined, start);
  const b = ops.run('k', (m) => seenB.push(m.status!), undefined, start);
  release();
  assert.deepEqual(await Promise.all([a, b]), [42, 42]);
  assert.equal(runs, 1);
  assert.deepEqual(seenA, ['one', 'two']);
  assert.deepEqual(seenB, ['one', 'two']);

  const ac = new AbortController();
  let cancelled = false;
  const c = ops.run(
    'k2',
    () => {},
    ac.signal,
    (_s, signal) =>
      new Promise<number>((_r, reject) =>
        signal.addEventListener('abort', () => {
          cancelled = true;
          reject(new Error('cancelled'));
        }),
      ),
  );
  ac.abort();
  // A caller arriving while the cancelled run winds down gets a run of its own.
  const fresh = ops.run(
    'k2',
    () => {},
    undefined,
    async () => 7,
  );
  await assert.rejects(c, /cancelled/);
  assert.equal(cancelled, true);
  assert.equal(await fresh, 7);
});

test('bearer token flow: challenge, token with credentials, retry, refresh token kept', async () => {
  const tokenRequests: string[] = [];
  const srv = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/token') {
      tokenRequests.push(`${req.method} ${url.search} ${req.headers.authorization ?? ''}`);
      if (req.headers.authorization !== 'Basic ' + Buffer.from('u:p').toString('base64')) {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        return res.end('{"details":"incorrect username or password"}');
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(
        JSON.stringify({ token: 'T1', refresh_token: url.searchParams.get('offline_token') ? 'R1' : undefined, expires_in: 300 }),
      );
    }
    if (req.headers.authorization !== 'Bearer T1') {
      res.writeHead(401, {
        'WWW-Authenticate': `Bearer realm="http://127.0.0.1:${(srv.address() as { port: number }).port}/token",service="svc"`,
        'Docker-Distribution-Api-Version': 'registry/2.0',
      });
      return res.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
    }
    res.writeHead(200, { 'Docker-Distribution-Api-Version': 'registry/2.0' });
    res.end('{}');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  const transport = new RegistryTransport();
  try {
    const ep = { url: `http://127.0.0.1:${port}`, registry: `127.0.0.1:${port}`, mirror: false, insecure: true, tls: { verify: false } };
    const ok = new RegistrySession(transport, ep, { username: 'u', password: 'p' }, ['repository:x:pull'], { offlineToken: true });
    const res = await ok.send('GET', '/v2/');
    res.body.resume();
    assert.equal(res.status, 200);
    assert.equal(ok.refreshToken, 'R1');
    assert.match(tokenRequests[0]!, /service=svc&scope=repository%3Ax%3Apull&account=u&offline_token=true&client_id=docker Basic /);
    const bad = new RegistrySession(transport, ep, { username: 'u', password: 'wrong' }, []);
    await assert.rejects(
      bad.send('GET', '/v2/'),
      (e: RegistryError) => e.status === 401 && e.message === 'unauthorized: incorrect username or password',
    );
  } finally {
    transport.close();
    srv.close();
  }
});

test('transport: http-proxy carries requests, no-proxy and loopback bypass it', async (t) => {
  const primary = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  if (!primary) return t.skip('no non-loopback address');
  const target = createServer((_req, res) => res.end('direct'));
  const seen: string[] = [];
  const proxy = createServer((req, res) => {
    seen.push(req.url!);
    res.end('via proxy');
  });
  await new Promise<void>((r) => target.listen(0, '0.0.0.0', () => r()));
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const port = (target.address() as { port: number }).port;
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  const body = async (tr: RegistryTransport, url: string) => {
    const res = await tr.request({ method: 'GET', url });
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString();
  };
  const viaProxy = new RegistryTransport(() => ({ httpProxy: proxyUrl }));
  const bypass = new RegistryTransport(() => ({ httpProxy: proxyUrl, noProxy: primary }));
  try {
    assert.equal(await body(viaProxy, `http://${primary}:${port}/v2/`), 'via proxy');
    assert.deepEqual(seen, [`http://${primary}:${port}/v2/`]);
    assert.equal(await body(viaProxy, `http://127.0.0.1:${port}/v2/`), 'direct');
    assert.equal(await body(bypass, `http://${primary}:${port}/v2/`), 'direct');
    assert.equal(seen.length, 1);
  } finally {
    viaProxy.close();
    bypass.close();
    target.close();
    proxy.close();
  }
});
