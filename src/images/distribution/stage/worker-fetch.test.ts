// A stage worker's own GET of a blob (worker-fetch.ts), against a local HTTP server: the bytes in
// order, a status other than 200 answered (not thrown: the main thread repeats the GET), the
// registry's Content-Length checked against the manifest, a cut connection worded as the main
// thread's download words it, and errors rebuilt across the thread boundary as the same classes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { TransportError } from '../transport.ts';
import { errorOf, failureOf, fetchBlob, type BlobFetch } from './worker-fetch.ts';

const BLOB = randomBytes(3 << 20);

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/x/blobs/sha256:abc` };
}

const request = (url: string, size = BLOB.length): BlobFetch => ({
  url,
  headers: { Authorization: 'Bearer t' },
  tls: { verify: true },
  proxies: {},
  size,
  digest: 'sha256:abc',
});

test('a 200 streams every byte in order; another status is answered, not thrown', async () => {
  let auth = '';
  const { server, url } = await serve((req, res) => {
    auth = req.headers.authorization ?? '';
    if (req.url!.endsWith('missing')) return void res.writeHead(404).end('{"errors":[]}');
    res.writeHead(200, { 'content-length': BLOB.length }).end(BLOB);
  });
  try {
    const parts: Buffer[] = [];
    const seen: string[] = [];
    const status = await fetchBlob(request(url), new AbortController().signal, {
      response: () => seen.push('response'),
      chunk: (c) => void parts.push(Buffer.from(c)), // a view of a reused buffer: copied
      received: () => seen.push('received'),
    });
    assert.equal(status, 200);
    assert.deepEqual(seen, ['response', 'received']);
    assert.ok(Buffer.concat(parts).equals(BLOB));
    assert.equal(auth, 'Bearer t');
    const none = () => undefined;
    assert.equal(
      await fetchBlob(request(`${url}missing`), new AbortController().signal, { response: none, chunk: none, received: none }),
      404,
    );
  } finally {
    server.close();
  }
});

test("a wrong Content-Length, a cut connection and a refused connection fail as the main thread's download does", async () => {
  const { server, url } = await serve((req, res) => {
    if (req.url!.endsWith('short')) {
      res.writeHead(200, { 'content-length': BLOB.length });
      res.write(BLOB.subarray(0, 1 << 20));
      setTimeout(() => res.socket?.destroy(), 50);
      return;
    }
    res.writeHead(200, { 'content-length': BLOB.length + 1 }).end(Buffer.concat([BLOB, Buffer.from('x')]));
  });
  const none = () => undefined;
  const hooks = { response: none, chunk: none, received: none };
  try {
    const long = await fetchBlob(request(url), new AbortController().signal, hooks).catch((e: unknown) => e);
    assert.match((long as Error).message, /the registry sent \d+ bytes, the manifest says/);
    assert.equal(failureOf(long).badLength, true);
    const cut = await fetchBlob(request(`${url}short`), new AbortController().signal, hooks).catch((e: unknown) => e);
    assert.equal((cut as Error).message, 'unexpected EOF');
  } finally {
    server.close();
  }
  const refused = await fetchBlob(request(url), new AbortController().signal, hooks).catch((e: unknown) => e);
  assert.ok(refused instanceof TransportError);
  const rebuilt = errorOf(failureOf(refused));
  assert.ok(rebuilt instanceof TransportError, 'a TransportError after the trip between threads');
  assert.match(rebuilt.message, /connect: connection refused/);
  assert.equal(rebuilt.code, 'ECONNREFUSED');
});
