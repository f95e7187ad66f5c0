// The console listener's checks, on a real listener with a recording stand-in for the API server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { allowedHosts, parseConsoleAddr, sessionSecret, startConsoleServer } from './console-server.ts';

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
