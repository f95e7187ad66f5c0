// Unit tests of the rootlesskit port client (network/rootlesskit-ports.ts) against a stand-in of
// rootlesskit's API on a unix socket: expose posts the spec (after dropping a stale one for the same
// port), close deletes it and closes the local listener, API errors surface with their message.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RootlesskitPorts } from './rootlesskit-ports.ts';

const dir = mkdtempSync(join(tmpdir(), 'engine-rk-ports-'));
const calls: string[] = [];
let ports: Array<{ id: number; spec: Record<string, unknown> }> = [
  { id: 7, spec: { proto: 'tcp', parentIP: '0.0.0.0', parentPort: 8080, childPort: 8080 } },
];
let nextId = 10;
let server: Server;

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      calls.push(`${req.method} ${req.url}${body ? ` ${body}` : ''}`);
      const reply = (status: number, v: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      if (req.method === 'GET' && req.url === '/v1/ports') return reply(200, ports);
      if (req.method === 'POST' && req.url === '/v1/ports') {
        const spec = JSON.parse(body) as Record<string, unknown>;
        if (spec.parentPort === 1) return reply(500, { message: 'listen tcp 0.0.0.0:1: bind: permission denied' });
        const p = { id: nextId++, spec };
        ports.push(p);
        return reply(200, p);
      }
      const m = /^\/v1\/ports\/(\d+)$/.exec(req.url ?? '');
      if (req.method === 'DELETE' && m) {
        ports = ports.filter((p) => p.id !== Number(m[1]));
        res.writeHead(200);
        return res.end();
      }
      reply(404, { message: 'not found' });
    });
  });
  await new Promise<void>((r) => server.listen(join(dir, 'api.sock'), r));
});
after(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

test('expose replaces a stale port, and close undoes both sides', async () => {
  let localClosed = false;
  const client = new RootlesskitPorts(dir);
  const h = await client.expose(
    { proto: 'tcp', hostIp: '0.0.0.0', hostPort: 8080 },
    {
      pid: 42,
      close: async () => {
        localClosed = true;
      },
    },
  );
  assert.equal(h.pid, 42);
  assert.deepEqual(calls, [
    'GET /v1/ports',
    'DELETE /v1/ports/7',
    'POST /v1/ports {"proto":"tcp","parentIP":"0.0.0.0","parentPort":8080,"childPort":8080}',
  ]);
  assert.deepEqual(
    ports.map((p) => p.id),
    [10],
  );
  await h.close();
  assert.equal(localClosed, true);
  assert.deepEqual(ports, []);
  assert.equal(calls.at(-1), 'DELETE /v1/ports/10');
});

test("an API error carries rootlesskit's message", async () => {
  const client = new RootlesskitPorts(dir);
  await assert.rejects(
    client.expose({ proto: 'tcp', hostIp: '0.0.0.0', hostPort: 1 }, { close: async () => undefined }),
    /rootlesskit POST \/v1\/ports: 500 listen tcp 0.0.0.0:1: bind: permission denied/,
  );
});
