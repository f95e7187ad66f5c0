// A blob's GET on a bare socket (socket-get.ts), against raw TCP servers that answer exactly what
// each case needs: the body in order through one reused buffer, also when the caller makes it wait
// and when the head and the first bytes come in one read; declined (nothing given to the caller)
// for anything but a plain 200 of the expected length; a cut connection and an abort once the body
// began.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { socketGet, socketGetFits } from './socket-get.ts';

const BLOB = randomBytes(3 << 20);

/** A TCP server: `answer` gets the request's text and the socket. */
async function tcp(answer: (request: string, s: Socket) => void): Promise<{ server: Server; url: URL }> {
  const server = createServer((s) => {
    let req = '';
    s.on('data', (d) => {
      req += d.toString('latin1');
      if (req.includes('\r\n\r\n')) answer(req, s);
    });
    s.on('error', () => undefined); // the client cut it: what some cases do
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/x/blobs/sha256:abc`) };
}

const ok = (length: number, extra = '') => `HTTP/1.1 200 OK\r\nContent-Length: ${length}\r\n${extra}\r\n`;

function collect(waitEvery = 0) {
  const parts: Buffer[] = [];
  let calls = 0;
  let responses = 0;
  return {
    parts,
    get responses() {
      return responses;
    },
    hooks: {
      response: () => void responses++,
      chunk: (c: Buffer) => {
        parts.push(Buffer.from(c)); // a view of the reused buffer: copied
        // Every few chunks the caller is busy: the socket must not overwrite the bytes meanwhile.
        if (waitEvery && ++calls % waitEvery === 0) return new Promise<void>((r) => setTimeout(r, 2));
        return undefined;
      },
    },
  };
}

test('a 200 of the expected length: every byte in order, the request carrying the headers; waits of the caller hold the reads', async () => {
  let seen = '';
  const { server, url } = await tcp((req, s) => {
    seen = req;
    // The head and the first bytes in one write, then the rest in pieces.
    s.write(Buffer.concat([Buffer.from(ok(BLOB.length)), BLOB.subarray(0, 1000)]));
    for (let off = 1000; off < BLOB.length; off += 100_000) s.write(BLOB.subarray(off, off + 100_000));
    s.end();
  });
  try {
    for (const waitEvery of [0, 3]) {
      const c = collect(waitEvery);
      assert.equal(await socketGet(url, { Authorization: 'Bearer t' }, BLOB.length, new AbortController().signal, c.hooks), 'done');
      assert.equal(c.responses, 1);
      assert.ok(Buffer.concat(c.parts).equals(BLOB), `the bytes in order (a wait every ${waitEvery} chunks)`);
    }
    // The head in pieces (its end split between two reads), the body after it.
    const drip = await tcp((_req, s) => {
      s.setNoDelay(true);
      const pieces = [ok(BLOB.length).slice(0, 20), ok(BLOB.length).slice(20, -1), '\n', BLOB];
      const next = () => {
        const p = pieces.shift();
        if (p === undefined) return void s.end();
        s.write(p);
        setTimeout(next, 15);
      };
      next();
    });
    const d = collect();
    assert.equal(await socketGet(drip.url, {}, BLOB.length, new AbortController().signal, d.hooks), 'done');
    assert.ok(Buffer.concat(d.parts).equals(BLOB), 'a head in pieces');
    drip.server.close();
    // An empty blob: done at the head.
    const empty = await tcp((_req, s) => s.end(ok(0)));
    const e = collect();
    assert.equal(await socketGet(empty.url, {}, 0, new AbortController().signal, e.hooks), 'done');
    assert.deepEqual([e.responses, e.parts.length], [1, 0]);
    empty.server.close();
    assert.match(seen, /^GET \/v2\/x\/blobs\/sha256:abc HTTP\/1\.1\r\n/);
    assert.match(seen, new RegExp(`\r\nHost: 127\\.0\\.0\\.1:${url.port}\r\n`));
    assert.match(seen, /\r\nAuthorization: Bearer t\r\n/);
  } finally {
    server.close();
  }
});

test('anything but a plain 200 of the expected length is declined before the caller hears of it', async () => {
  const answers: Record<string, string> = {
    '/404': 'HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}',
    '/307': 'HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere/b\r\nContent-Length: 0\r\n\r\n',
    '/chunked': `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${BLOB.length.toString(16)}\r\n`,
    '/length': ok(BLOB.length + 1),
    '/nolength': 'HTTP/1.1 200 OK\r\n\r\n',
    '/garbage': 'SSH-2.0-OpenSSH\r\n\r\n',
    '/conflict': `HTTP/1.1 200 OK\r\nContent-Length: ${BLOB.length}\r\nContent-Length: 5\r\n\r\n`,
  };
  const { server, url } = await tcp((req, s) => {
    const path = /^GET (\S+)/.exec(req)![1]!;
    if (path === '/closed') return void s.destroy();
    if (path === '/endless') return void s.write('HTTP/1.1 200 OK\r\nX-Pad: ' + 'a'.repeat(20_000)); // a head over 16 KiB
    s.end(answers[path]!);
  });
  try {
    for (const path of [...Object.keys(answers), '/closed', '/endless']) {
      const c = collect();
      const r = await socketGet(new URL(path, url), {}, BLOB.length, new AbortController().signal, c.hooks);
      assert.equal(r, 'declined', path);
      assert.deepEqual([c.responses, c.parts.length], [0, 0], `${path}: the caller heard nothing`);
    }
  } finally {
    server.close();
  }
  const c = collect();
  assert.equal(await socketGet(url, {}, 10, new AbortController().signal, c.hooks), 'declined', 'connection refused');
  assert.equal(
    await socketGet(url, { X: 'a\r\nInjected: 1' }, 10, new AbortController().signal, c.hooks),
    'declined',
    'a header with a line break',
  );
});

test('once the body began: a cut connection is an unexpected EOF, an abort rejects with its reason', async () => {
  const { server, url } = await tcp((req, s) => {
    s.write(ok(BLOB.length));
    s.write(BLOB.subarray(0, 1 << 20));
    if (req.startsWith('GET /cut')) setTimeout(() => s.destroy(), 20);
  });
  try {
    const cut = await socketGet(new URL('/cut', url), {}, BLOB.length, new AbortController().signal, collect().hooks).catch(
      (e: Error) => e,
    );
    assert.equal((cut as Error).message, 'unexpected EOF');
    const ac = new AbortController();
    const c = collect();
    const hooks = { ...c.hooks, response: () => setTimeout(() => ac.abort(new Error('pull canceled')), 20) };
    const aborted = await socketGet(new URL('/stall', url), {}, BLOB.length, ac.signal, hooks).catch((e: Error) => e);
    assert.equal((aborted as Error).message, 'pull canceled');
  } finally {
    server.close();
  }
});

test('only plain HTTP without a proxy goes this way', () => {
  assert.ok(socketGetFits(new URL('http://registry:5000/v2/'), false));
  assert.ok(!socketGetFits(new URL('https://registry/v2/'), false));
  assert.ok(!socketGetFits(new URL('http://registry:5000/v2/'), true));
});
