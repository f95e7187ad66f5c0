// The cluster CA and join tokens: a root made by openssl signs node certificates whose CN/OU/O carry
// the identity, and tokens carry the digest of exactly that CA.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { createRootCa, identityOf, issueNodeCert, newKeyPair, signedBy } from './ca.ts';
import { newId } from './ids.ts';
import { caDigest, newJoinToken, parseJoinToken, tokenMatchesCa } from './tokens.ts';

test('a node certificate carries the node ID, role and cluster and is signed by the root', async () => {
  const ca = await createRootCa();
  const other = await createRootCa();
  const nodeId = newId();
  const clusterId = newId();
  const { publicKeyPem } = newKeyPair();
  const pem = await issueNodeCert(ca, publicKeyPem, { nodeId, role: 'worker', clusterId, ips: ['127.0.0.11'] });
  const id = identityOf(pem);
  assert.equal(id.nodeId, nodeId);
  assert.equal(id.role, 'worker');
  assert.equal(id.clusterId, clusterId);
  assert.ok(id.notAfter.getTime() > Date.now() + 80 * 86400_000);
  assert.ok(signedBy(pem, ca.certPem));
  assert.ok(!signedBy(pem, other.certPem));
  const x = new X509Certificate(pem);
  assert.match(x.subjectAltName ?? '', /IP Address:127\.0\.0\.11/);
  assert.ok(x.checkIP('127.0.0.11'));
  assert.equal(x.publicKey.export({ type: 'spki', format: 'pem' }).toString(), publicKeyPem);
  await assert.rejects(issueNodeCert(ca, 'not a key', { nodeId, role: 'manager', clusterId, ips: [] }), /invalid public key/);
  await assert.rejects(
    issueNodeCert(ca, publicKeyPem, { nodeId: 'a/b', role: 'manager', clusterId, ips: [] }),
    /invalid certificate subject/,
  );
});

test("join tokens have Docker's shape and bind the CA digest", async () => {
  const ca = await createRootCa();
  const other = await createRootCa();
  const t1 = newJoinToken(ca.certPem);
  const t2 = newJoinToken(ca.certPem);
  assert.match(t1, /^SWMTKN-1-[0-9a-z]{50}-[0-9a-z]{25}$/);
  assert.notEqual(t1, t2);
  assert.equal(parseJoinToken(t1).digest, parseJoinToken(t2).digest);
  assert.equal(parseJoinToken(t1).digest, caDigest(ca.certPem));
  assert.ok(tokenMatchesCa(t1, ca.certPem));
  assert.ok(!tokenMatchesCa(t1, other.certPem));
  assert.throws(() => parseJoinToken('SWMTKN-1-abc-def'), /invalid join token/);
  assert.throws(() => parseJoinToken(t1.replace('SWMTKN-1', 'SWMTKN-2')), /invalid join token/);
});
