import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { invalidParameter } from '../errors.ts';
import { Logger } from '../util/log.ts';
import { parseHead, serialise } from './fast-path.ts';
import { readBody, sendJson } from './http.ts';
import { openListeners, type OpenListener } from './listeners.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { ApiServer } from './server.ts';

describe('fast path: request heads', () => {
  it('takes a body-less HTTP/1.1 GET or HEAD with a Host, nothing after the head', () => {
    assert.deepEqual(parseHead(Buffer.from('GET /_ping HTTP/1.1\r\nHost: d\r\nUser-Agent: curl\r\nAccept: */*\r\n\r\n')), {
      method: 'GET',
      target: '/_ping',
    });
    assert.deepEqual(parseHead(Buffer.from('HEAD /v1.41/_ping HTTP/1.1\r\nhost: d\r\nContent-Length: 0\r\n\r\n')), {
      method: 'HEAD',
      target: '/v1.41/_ping',
    });
  });
  it('leaves everything else to node:http', () => {
    const declined = [
      'POST /_ping HTTP/1.1\r\nHost: d\r\n\r\n',
      'GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n',
      'GET /_ping HTTP/1.1\r\n\r\n', // no Host: node answers 400
      'GET /_ping HTTP/1.1\r\nHost: d\r\nHost: e\r\n\r\n',
      'GET /_ping HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n',
      'GET /_ping HTTP/1.1\r\nHost: d\r\nUpgrade: tcp\r\n\r\n',
      'GET /_ping HTTP/1.1\r\nHost: d\r\nContent-Length: 3\r\n\r\n',
      'GET /_ping HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked\r\n\r\n',
      'GET /_ping HTTP/1.1\r\nHost: d\r\nExpect: 100-continue\r\n\r\n',
      'GET /_ping HTTP/1.1\r\nHost: d\r\n', // head not complete in this read
      'GET /_ping HTTP/1.1\r\nHost: d\r\n\r\nGET /_ping HTTP/1.1\r\nHost: d\r\n\r\n', // pipelined
      'GET /_ping HTTP/1.1\r\nHost: d\r\n folded\r\n\r\n',
      'GET /_ping HTTP/1.1\r\nBad Name: x\r\nHost: d\r\n\r\n',
      'GET /a b HTTP/1.1\r\nHost: d\r\n\r\n',
      `GET /_ping HTTP/1.1\r\nHost: d\r\nX: ${'a'.repeat(9000)}\r\n\r\n`,
    ];
    for (const text of declined) assert.equal(parseHead(Buffer.from(text)), undefined, JSON.stringify(text.slice(0, 80)));
  });
  it('writes HEAD answers without their body and a closing answer with Connection: close', () => {
    const reply = { status: 200, headers: { 'Content-Length': 2 }, body: 'OK' };
    assert.match(serialise('HEAD', reply, 120_000).toString(), /Connection: keep-alive\r\nKeep-Alive: timeout=120\r\n\r\n$/);
    assert.match(serialise('GET', reply, 0).toString(), /Connection: close\r\n\r\nOK$/);
  });
});

/** One raw exchange: writes each part (with a pause between), reads until `answers` answers came or the socket closed. */
async function exchange(socketPath: string, parts: string[], answers: number): Promise<string> {
  const sock = net.connect(socketPath);
  await once(sock, 'connect');
  let got = '';
  const done = new Promise<void>((resolve) => {
    sock.on('data', (d) => {
      got += d.toString('latin1');
      if (countAnswers(got) >= answers) resolve();
    });
    sock.on('close', () => resolve());
  });
  for (const p of parts) {
    sock.write(p);
    await new Promise((r) => setTimeout(r, 30));
  }
  await done;
  sock.destroy();
  return got;
}

/** Answers in a byte stream: complete ones only (head + Content-Length bytes). */
function countAnswers(text: string): number {
  let n = 0;
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) return n;
    const head = text.slice(at, end);
    const len = /content-length: (\d+)/i.exec(head);
    const bodyLen = len ? Number(len[1]) : 0;
    if (text.length < end + 4 + bodyLen) return n;
    n++;
    at = end + 4 + bodyLen;
  }
}

const withoutDate = (s: string) => s.replace(/Date: [^\r]+\r\n/g, '');

describe('fast path: on a real listener, beside node:http', () => {
  let dir: string;
  let fast: OpenListener;
  let plain: OpenListener;
  let routed: string[];
  let upgraded: string[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fast-path-'));
    routed = [];
    upgraded = [];
    const api = new ApiServer(new Logger({ level: 'error', format: 'text', raw: false }, {}, new PassThrough()), {
      serverVersion: '0.0.1',
      experimental: () => false,
    });
    registerSystemRoutes(api.router, {
      version: async () => ({}),
      info: async () => ({}),
      experimental: () => false,
      swarmState: () => 'inactive',
    });
    const list = (bad: boolean) => {
      if (bad) throw invalidParameter('bad list');
      return [{ Id: 'a' }];
    };
    api.router.get('/things', async (ctx) => sendJson(ctx.res, 200, list(ctx.query.bool('bad'))));
    api.router.fast('GET', '/things', async (query) => {
      const body = JSON.stringify(list(query.bool('bad')));
      return { status: 200, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }, body };
    });
    api.router.post('/echo', async (ctx) => sendJson(ctx.res, 200, { got: (await readBody(ctx.req)).toString() }));
    const log = new Logger({ level: 'error', format: 'text', raw: false }, {}, new PassThrough());
    const common = {
      group: '',
      log,
      onRequest: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, prefix: string) => {
        routed.push(`${req.method} ${req.url}`);
        api.handleRequest(req, res, prefix);
      },
      onUpgrade: (req: import('node:http').IncomingMessage, socket: import('node:stream').Duplex) => {
        upgraded.push(`${req.method} ${req.url}`);
        socket.end('HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\nhijacked');
      },
    };
    fast = (
      await openListeners([{ kind: 'unix', path: join(dir, 'fast.sock') }], {
        ...common,
        fastReply: (m, t, p) => api.fastReply(m, t, p),
      })
    )[0]!;
    plain = (await openListeners([{ kind: 'unix', path: join(dir, 'plain.sock') }], common))[0]!;
  });

  after(async () => {
    await fast?.close();
    await plain?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers /_ping, HEAD /_ping and a list byte for byte as node:http does, without node:http', async () => {
    for (const req of [
      'GET /_ping HTTP/1.1\r\nHost: d\r\n\r\n',
      'HEAD /v1.41/_ping HTTP/1.1\r\nHost: d\r\n\r\n',
      'GET /v1.41/things?all=1 HTTP/1.1\r\nHost: d\r\n\r\n',
      'GET /things?bad=1 HTTP/1.1\r\nHost: d\r\n\r\n',
    ]) {
      routed.length = 0;
      const a = await exchange(join(dir, 'fast.sock'), [req], 1);
      assert.deepEqual(routed, [], 'node:http saw no request');
      const b = await exchange(join(dir, 'plain.sock'), [req], 1);
      assert.equal(routed.length, 1);
      assert.equal(withoutDate(a), withoutDate(b), req);
    }
    assert.match(
      await exchange(join(dir, 'fast.sock'), ['GET /things?bad=1 HTTP/1.1\r\nHost: d\r\n\r\n'], 1),
      /^HTTP\/1\.1 400 Bad Request[\s\S]*\{"message":"bad list"\}$/,
    );
  });

  it('hands a keep-alive connection to node:http at its first other request, bodies and all', async () => {
    routed.length = 0;
    const got = await exchange(
      join(dir, 'fast.sock'),
      [
        'GET /_ping HTTP/1.1\r\nHost: d\r\n\r\n',
        'POST /echo HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n',
        '0\r\n\r\n',
        'GET /_ping HTTP/1.1\r\nHost: d\r\n\r\n',
      ],
      3,
    );
    assert.equal(countAnswers(got), 3, got);
    assert.match(got, /\{"got":"abc"\}/);
    assert.deepEqual(routed, ['POST /echo', 'GET /_ping']);
  });

  it('leaves pipelined requests, split heads, upgrades and unknown routes to node:http', async () => {
    routed.length = 0;
    const two = 'GET /_ping HTTP/1.1\r\nHost: d\r\n\r\n'.repeat(2);
    assert.equal(countAnswers(await exchange(join(dir, 'fast.sock'), [two], 2)), 2);
    assert.equal(countAnswers(await exchange(join(dir, 'fast.sock'), ['GET /_pi', 'ng HTTP/1.1\r\nHost: d\r\n\r\n'], 1)), 1);
    assert.match(await exchange(join(dir, 'fast.sock'), ['GET /nothing HTTP/1.1\r\nHost: d\r\n\r\n'], 1), /^HTTP\/1\.1 404 /);
    assert.match(await exchange(join(dir, 'fast.sock'), ['GET /_ping HTTP/1.1\r\n\r\n'], 1), /^HTTP\/1\.1 400 /);
    const hijacked = await exchange(
      join(dir, 'fast.sock'),
      ['POST /exec/x/start HTTP/1.1\r\nHost: d\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n'],
      9,
    );
    assert.match(hijacked, /^HTTP\/1\.1 101 UPGRADED[\s\S]*hijacked$/);
    assert.deepEqual(upgraded, ['POST /exec/x/start']);
    assert.deepEqual(routed, ['GET /_ping', 'GET /_ping', 'GET /_ping', 'GET /nothing']);
  });

  it('lets close() finish with an idle fast-path connection open', async () => {
    const sock = net.connect(join(dir, 'fast.sock'));
    await once(sock, 'connect');
    sock.write('GET /_ping HTTP/1.1\r\nHost: d\r\n\r\n');
    await once(sock, 'data');
    const closed = once(sock, 'close');
    await fast.close();
    await closed;
  });
});
