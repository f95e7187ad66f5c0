// The console listener's checks, on a real listener with a recording stand-in for the API server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { allowedHosts, parseConsoleAddr, sessionSecret, startConsoleServer } from './console-server.ts';
import { until } from '../../test/helpers/until.ts';

const quiet = { info() {}, warn() {}, debug() {} };

function get(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('parseConsoleAddr: host:port forms; a bare port is loopback, never all addresses', () => {
  assert.deepEqual(parseConsoleAddr('127.0.0.1:9090'), { host: '127.0.0.1', port: 9090 });
  assert.deepEqual(parseConsoleAddr('[::1]:9090'), { host: '::1', port: 9090 });
  assert.deepEqual(parseConsoleAddr(':9090'), { host: '127.0.0.1', port: 9090 });
  assert.throws(() => parseConsoleAddr('9090'), /invalid console-addr/);
  assert.throws(() => parseConsoleAddr('127.0.0.1:99999'), /invalid console-addr/);
});

test('allowedHosts: the listener’s names; loopback takes its three spellings; 0.0.0.0 takes IP literals only', () => {
  assert.deepEqual([...(allowedHosts('127.0.0.1', 9090) as Set<string>)].sort(), ['127.0.0.1:9090', '[::1]:9090', 'localhost:9090']);
  assert.deepEqual([...(allowedHosts('10.0.0.5', 80) as Set<string>)], ['10.0.0.5:80']);
  assert.equal(allowedHosts('0.0.0.0', 80), 'ip-literals');
});

test('the page sets the session; /api needs it, the own origin and a known Host; assets gzipped', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-assets-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html>');
  writeFileSync(join(dir, 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'app.js.gz'), gzipSync('console.log(1)'));
  const seen: string[] = [];
  const server = await startConsoleServer({
    addr: '127.0.0.1:0',
    assetsDir: dir,
    log: quiet,
    api: {
      handleRequest: (req, res, prefix) => {
        seen.push(`${req.method} ${req.url} ${prefix} cookie=${req.headers.cookie ?? ''}`);
        res.end('{}');
      },
      handleUpgrade: () => assert.fail('no upgrade expected'),
    },
  });
  const port = Number(new URL(server.address).port);
  const host = `127.0.0.1:${port}`;
  try {
    const page = await get(port, '/', { Host: host });
    assert.equal(page.status, 200);
    const session = String(page.headers['set-cookie']).split(';')[0]!;
    assert.equal((await get(port, '/app.js', { Host: host, 'Accept-Encoding': 'gzip' })).headers['content-encoding'], 'gzip');
    assert.equal((await get(port, '/app.js', { Host: host })).body.toString(), 'console.log(1)');
    assert.equal((await get(port, '/../etc/passwd', { Host: host })).status, 404);
    assert.equal((await get(port, '/app.js.gz', { Host: host })).status, 404, 'a .gz twin is no file of its own');
    assert.equal((await get(port, '/', { Host: `evil.example:${port}` })).status, 421);

    assert.equal((await get(port, '/api/v1.51/info', { Host: host })).status, 403);
    assert.equal((await get(port, '/api/v1.51/info', { Host: host, Cookie: session, Origin: 'http://evil.example' })).status, 403);
    assert.equal(
      (await get(port, '/api/v1.51/info', { Host: `localhost:${port}`, Cookie: session, Origin: `http://localhost:${port}` })).status,
      200,
    );
    assert.equal(
      (await get(port, '/api/v1.51/info', { Host: host, Cookie: `other=1; ${session}`, 'Sec-Fetch-Site': 'same-origin' })).status,
      200,
    );
    assert.deepEqual(
      seen,
      [`GET /v1.51/info  cookie=`, `GET /v1.51/info  cookie=`],
      'the API sees the request as a socket client sends it, without the cookie',
    );
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the session secret is kept in its file (0600) and read back; a damaged file is replaced', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-secret-'));
  try {
    const file = join(dir, 'console.secret');
    const first = await sessionSecret(file, quiet);
    assert.match(first, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(await sessionSecret(file, quiet), first);
    writeFileSync(file, 'short');
    const next = await sessionSecret(file, quiet);
    assert.notEqual(next, first);
    assert.equal(await sessionSecret(file, quiet), next);
    assert.notEqual(await sessionSecret(undefined, quiet), await sessionSecret(undefined, quiet));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Raw bytes to the listener; resolves with everything it answered once it closes or `ms` pass. */
function rawExchange(port: number, bytes: Buffer, ms: number, onData?: (all: Buffer, sock: Socket) => void): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const sock = connect(port, '127.0.0.1', () => sock.write(bytes));
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(Buffer.concat(chunks));
    };
    const timer = setTimeout(done, ms);
    sock.on('data', (b: Buffer) => {
      chunks.push(b);
      onData?.(Buffer.concat(chunks), sock);
    });
    sock.on('close', done);
    sock.on('error', done);
  });
}

test('stats websocket: the same GET made in-process, its bytes in binary frames; closing it ends the request', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-ws-'));
  const secretFile = join(dir, 'console.secret');
  const SECRET = 'S'.repeat(43);
  const SESSION = `engine_console=${SECRET}`;
  writeFileSync(secretFile, SECRET);
  const requests: string[] = [];
  let ended = 0;
  const server = await startConsoleServer({
    addr: '127.0.0.1:0',
    assetsDir: null,
    secretFile,
    log: quiet,
    api: {
      handleRequest: (req, res) => {
        requests.push(`${req.method} ${req.url} cookie=${req.headers.cookie ?? ''}`);
        if (req.url!.includes('/nope/')) {
          res.writeHead(404, { 'Content-Type': 'application/json' });
          return res.end(JSON.stringify({ message: 'No such container: nope' }));
        }
        res.writeHead(200);
        let n = 0;
        const timer = setInterval(() => res.write(`{"n":${n++}}\n`), 20);
        res.on('close', () => {
          clearInterval(timer);
          ended++;
        });
      },
      handleUpgrade: () => assert.fail('the stats websocket is the console’s own'),
    },
  });
  const port = Number(new URL(server.address).port);
  const host = `127.0.0.1:${port}`;
  const upgrade = (path: string, headers: string[]) =>
    Buffer.from(
      [
        `GET ${path} HTTP/1.1`,
        `Host: ${host}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version: 13',
        ...headers,
        '',
        '',
      ].join('\r\n'),
    );
  try {
    // Three frames of the stream, then the client's close frame (masked, code 1000).
    let frames = 0;
    const out = await rawExchange(port, upgrade('/api/v1.51/containers/c1/stats?stream=1', [`Cookie: ${SESSION}`]), 10_000, (all, sock) => {
      const body = all.subarray(all.indexOf('\r\n\r\n') + 4);
      const count = body.toString('latin1').split('{"n":').length - 1;
      if (count >= 3 && frames < 3) sock.write(Buffer.from([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]));
      frames = count;
    });
    const text = out.toString('latin1');
    assert.match(text, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    const body = out.subarray(out.indexOf('\r\n\r\n') + 4);
    assert.equal(body[0], 0x82, 'a binary frame, FIN set');
    assert.equal(body.subarray(2, 2 + body[1]!).toString(), '{"n":0}\n', 'the first frame carries the answer’s first bytes');
    assert.equal(body.subarray(-4).toString('hex'), '880203e8', 'the server closes with 1000');
    assert.deepEqual(requests, ['GET /v1.51/containers/c1/stats?stream=1 cookie='], 'the API sees the GET, without the cookie');
    await until('the in-process request ended with the websocket', () => (ended === 1 ? true : undefined));

    // A refusal: closed with 4000 + status and the daemon's message.
    const refused = await rawExchange(port, upgrade('/api/v1.51/containers/nope/stats', [`Cookie: ${SESSION}`]), 10_000);
    const rb = refused.subarray(refused.indexOf('\r\n\r\n') + 4);
    assert.equal(rb[0], 0x88);
    assert.equal(rb.readUInt16BE(2), 4404);
    assert.equal(rb.subarray(4, 2 + rb[1]!).toString(), 'No such container: nope');

    // Without the session, or from another origin: a JSON answer, no upgrade, no request.
    for (const headers of [[], [`Cookie: ${SESSION}`, 'Origin: http://evil.example']]) {
      const no = (await rawExchange(port, upgrade('/api/v1.51/containers/c1/stats', headers), 10_000)).toString();
      assert.match(no, /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*Content-Type: application\/json[\s\S]*\r\n\r\n\{"message":"/);
    }
    const wrongHost = (await rawExchange(port, Buffer.from(`GET / HTTP/1.1\r\nConnection: close\r\n\r\n`), 10_000)).toString();
    assert.match(wrongHost, /^HTTP\/1\.1 421 [\s\S]*\{"message":"unknown host \\"\\""\}$/, 'no Host: a JSON 421');
    const connectAnswer = (await rawExchange(port, Buffer.from(`CONNECT e:443 HTTP/1.1\r\nHost: e:443\r\n\r\n`), 10_000)).toString();
    assert.match(connectAnswer, /^HTTP\/1\.1 405 [\s\S]*\{"message":"method not allowed"\}$/);
    assert.equal(requests.length, 2);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
