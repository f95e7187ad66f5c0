// Unit tests of simple-http.ts: the request head (and what it leaves to node:http), answers by
// Content-Length, chunked (split anywhere), until close, interim 100s, and a real exchange with a
// node:http server on a unix socket (answer, error status, a refused connection, an abort).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { exchange, parseResponse, requestHead, upgradeExchange } from './simple-http.ts';

test('simple http: the request head; odd paths and header values are left to node:http', () => {
  assert.equal(
    requestHead('GET', '/v1.51/containers/json?all=1', { Host: 'engine', 'X-A': ['1', '2'], 'X-None': undefined }, 0),
    'GET /v1.51/containers/json?all=1 HTTP/1.1\r\nHost: engine\r\nX-A: 1\r\nX-A: 2\r\nConnection: close\r\n\r\n',
  );
  assert.equal(requestHead('GET', '/_ping', {}, 0), 'GET /_ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  assert.match(
    requestHead('POST', '/x', { 'Content-Type': 'application/json', Connection: 'keep-alive' }, 2)!,
    /\r\nContent-Type: application\/json\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 2\r\n\r\n$/,
  );
  assert.match(requestHead('POST', '/x', {}, 0)!, /Content-Length: 0\r\n\r\n$/);
  assert.equal(requestHead('GET', '/a b', {}, 0), undefined);
  assert.equal(requestHead('GET', '/a', { 'X-Bad': 'a\r\nInjected: 1' }, 0), undefined);
  assert.equal(requestHead('GET', '/a', { 'Bad Name': 'x' }, 0), undefined);
});

test('simple http: answers by length, chunked, until close; interim 100 skipped; incomplete ones wait', () => {
  const head = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nApi-Version: 1.51\r\n';
  const byLen = Buffer.from(`${head}Content-Length: 7\r\n\r\n{"a":1}`);
  for (let i = 0; i < byLen.length; i++) assert.equal(parseResponse(byLen.subarray(0, i), false), undefined);
  const r = parseResponse(byLen, false)!;
  assert.equal(r.status, 200);
  assert.equal(r.headers['api-version'], '1.51');
  assert.equal(r.body.toString(), '{"a":1}');
  const chunked = Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n4;x=y\r\n":1}\r\n0\r\n\r\n`);
  for (let i = 0; i < chunked.length - 2; i++) assert.equal(parseResponse(chunked.subarray(0, i), false), undefined, String(i));
  assert.equal(parseResponse(chunked, false)!.body.toString(), '{"a":1}');
  const untilClose = Buffer.from(`${head}\r\nabc`);
  assert.equal(parseResponse(untilClose, false), undefined);
  assert.equal(parseResponse(untilClose, true)!.body.toString(), 'abc');
  assert.equal(parseResponse(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'), false)!.body.length, 0);
  const interim = parseResponse(Buffer.from(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno`), false)!;
  assert.equal(interim.status, 404);
  assert.equal(interim.body.toString(), 'no');
  assert.throws(() => parseResponse(Buffer.from(`${head}Content-Length: 9\r\n\r\nab`), true), /middle of its answer/);
  assert.throws(() => parseResponse(Buffer.from('garbage\r\n\r\n'), false), /malformed/);
});

test('simple http: a hijack hands over the connection after the 101, bytes that came with the head first', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'simple-http-'));
  const sock = join(dir, 's.sock');
  const server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end('{"message":"No such container: x"}');
  });
  server.on('upgrade', (req, socket) => {
    assert.equal(req.headers.upgrade, 'tcp');
    // The 101 and the first output in one write; then echo what the client sends, upper-cased, until it half-closes.
    socket.write(
      'HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\nfirst;',
    );
    socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
    socket.on('end', () => socket.end('bye'));
  });
  await new Promise<void>((r) => server.listen(sock, r));
  try {
    const h = await upgradeExchange(connect(sock), requestHead('POST', '/attach', { Host: 'engine', Upgrade: 'x' }, 0, true)!, undefined);
    assert.equal(h.status, 101);
    assert.equal(h.headers['content-type'], 'application/vnd.docker.raw-stream');
    const stream = h.stream!;
    let out = '';
    stream.on('data', (d: Buffer) => (out += d));
    const ended = new Promise((r) => stream.on('end', r));
    stream.write('hello');
    await new Promise((r) => setTimeout(r, 100));
    stream.end();
    await ended;
    assert.equal(out, 'first;HELLObye');
    const refused = await upgradeExchange(connect(sock), requestHead('POST', '/x', {}, 0, false)!, undefined);
    assert.equal(refused.status, 404);
    assert.equal(refused.stream, undefined);
    assert.match(refused.body!.toString(), /No such container/);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  }
});

test('simple http: an exchange with a node:http server on a unix socket', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'simple-http-'));
  const sock = join(dir, 's.sock');
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/slow') return; // never answers
      if (req.url === '/later') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        setTimeout(() => res.end('{"StatusCode":0}'), 100);
        return;
      }
      res.statusCode = req.url === '/missing' ? 404 : 200;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ method: req.method, url: req.url, body, connection: req.headers.connection }));
    });
  });
  await new Promise<void>((r) => server.listen(sock, r));
  try {
    const head = requestHead('POST', '/echo', { Host: 'engine' }, 5)!;
    const ok = await exchange(connect(sock), head, Buffer.from('hello'));
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.body.toString()), { method: 'POST', url: '/echo', body: 'hello', connection: 'close' });
    const missing = await exchange(connect(sock), requestHead('GET', '/missing', {}, 0)!, undefined);
    assert.equal(missing.status, 404);
    await assert.rejects(exchange(connect(join(dir, 'none.sock')), head, undefined), { code: 'ENOENT' });
    // The head first (a wait is registered), the body later.
    let headAt = 0;
    const later = await exchange(connect(sock), requestHead('POST', '/later', {}, 0)!, undefined, undefined, (status) => {
      assert.equal(status, 200);
      headAt = Date.now();
    });
    assert.ok(headAt > 0 && Date.now() - headAt >= 50, 'the head was reported before the body came');
    assert.equal(later.body.toString(), '{"StatusCode":0}');
    const ac = new AbortController();
    const slow = exchange(connect(sock), requestHead('GET', '/slow', {}, 0)!, undefined, ac.signal);
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(slow, { name: 'AbortError' });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  }
});
