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
