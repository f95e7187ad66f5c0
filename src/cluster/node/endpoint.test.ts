// The manager endpoint and its client over mutual TLS: a node's calls reuse one connection (one TLS
// handshake for many heartbeats), the caller's identity comes from its certificate, and a call
// without a node certificate (GET /ca) stays a connection of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../../test/helpers/ports.ts';
import { Logger } from '../../util/log.ts';
import { createRootCa, issueNodeCert, newKeyPair, type CertIdentity } from '../ca/ca.ts';
import { callManager, startEndpoint, type EndpointHandler } from './endpoint.ts';
import { newId } from '../ids.ts';

test("a node's calls to a manager share one kept-alive TLS connection", async () => {
  const ca = await createRootCa();
  const clusterId = newId();
  const node = async (role: 'manager' | 'worker') => {
    const keys = newKeyPair();
    const certPem = await issueNodeCert(ca, keys.publicKeyPem, { nodeId: newId(), role, clusterId, ips: ['127.0.0.1'] });
    return { caPem: ca.certPem, certPem, keyPem: keys.keyPem };
  };
  const [manager, worker] = [await node('manager'), await node('worker')];
  const seen: string[] = [];
  const handler = {
    caPem: () => ca.certPem,
    heartbeat: async (n: CertIdentity) => (seen.push(n.nodeId), { managers: [], periodSeconds: 5, role: n.role }),
  } as unknown as EndpointHandler;
  const port = await freePort();
  const server = await startEndpoint(
    { host: '127.0.0.1', port },
    manager,
    clusterId,
    handler,
    new Logger({ level: 'error', format: 'text', raw: false }),
  );
  let handshakes = 0;
  server.on('secureConnection', () => handshakes++);
  try {
    const addr = `127.0.0.1:${port}`;
    for (let i = 0; i < 5; i++) {
      const r = await callManager<{ role: string }>(addr, 'POST', '/heartbeat', {}, { caPem: ca.certPem, certs: worker, timeoutMs: 5000 });
      assert.equal(r.role, 'worker');
    }
    assert.equal(handshakes, 1, 'five heartbeats, one connection');
    assert.equal(new Set(seen).size, 1);
    await callManager(addr, 'GET', '/ca', undefined, {});
    assert.equal(handshakes, 2, 'GET /ca has no identity to keep a connection for');
    // A manager reached at an address its certificate does not name: answered all the same.
    const other = await node('manager');
    const r = await callManager<{ role: string }>(
      `localhost:${port}`,
      'POST',
      '/heartbeat',
      {},
      { caPem: ca.certPem, certs: other, timeoutMs: 5000 },
    );
    assert.equal(r.role, 'manager');
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('bodies are checked before a handler sees them; a node route wants a node certificate first', async () => {
  const ca = await createRootCa();
  const clusterId = newId();
  const keys = newKeyPair();
  const manager = {
    caPem: ca.certPem,
    certPem: await issueNodeCert(ca, keys.publicKeyPem, { nodeId: newId(), role: 'manager', clusterId, ips: ['127.0.0.1'] }),
    keyPem: keys.keyPem,
  };
  const joins: unknown[] = [];
  const handler = {
    caPem: () => ca.certPem,
    join: async (req: unknown) => (joins.push(req), { nodeId: 'n' }),
    agentSync: async () => ({ tasks: [] }),
  } as unknown as EndpointHandler;
  const port = await freePort();
  const server = await startEndpoint(
    { host: '127.0.0.1', port },
    manager,
    clusterId,
    handler,
    new Logger({ level: 'error', format: 'text', raw: false }),
  );
  const addr = `127.0.0.1:${port}`;
  const call = (path: string, body: unknown) =>
    callManager(addr, 'POST', path, body, { caPem: ca.certPem, timeoutMs: 5000 }).then(
      () => 'ok',
      (err: Error & { status?: number }) => `${err.status ?? '?'} ${err.message}`,
    );
  try {
    assert.match(
      await call('/join', { token: 7, publicKeyPem: 'k' }),
      /^400 .*cannot unmarshal number 7 into Go struct field JoinRequest\.token of type string/,
    );
    assert.match(await call('/join', { token: 't' }), /^400 JoinRequest: publicKeyPem is required/);
    assert.equal(joins.length, 0, 'no bad body reached the handler');
    assert.equal(await call('/join', { token: 't', publicKeyPem: 'k', extra: 1 }), 'ok');
    assert.deepEqual(joins, [{ token: 't', publicKeyPem: 'k' }], 'unknown fields dropped');
    assert.match(await call('/agent/sync', { reports: 'x' }), /^401 /, 'no node certificate: refused before the body is read');
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
