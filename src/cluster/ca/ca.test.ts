// The cluster CA and join tokens: a root (DER from x509.ts) signs node certificates whose CN/OU/O
// carry the identity, and tokens carry the digest of exactly that CA. `openssl verify` and `openssl
// x509 -text` check the encoding with a parser other than node's.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRootCa, identityOf, issueNodeCert, newKeyPair, signedBy } from './ca.ts';
import { newId } from '../ids.ts';
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

test('openssl accepts the chain for TLS server and client use and reads every extension', async () => {
  const ca = await createRootCa();
  const nodeId = newId();
  const clusterId = newId();
  const pem = await issueNodeCert(ca, newKeyPair().publicKeyPem, { nodeId, role: 'manager', clusterId, ips: ['10.1.2.3', 'fd00::1:2'] });
  const dir = mkdtempSync(join(tmpdir(), 'ca-test-'));
  try {
    writeFileSync(join(dir, 'ca.pem'), ca.certPem);
    writeFileSync(join(dir, 'node.pem'), pem);
    for (const purpose of ['sslserver', 'sslclient']) {
      const out = execFileSync('openssl', ['verify', '-purpose', purpose, '-CAfile', join(dir, 'ca.pem'), join(dir, 'node.pem')], {
        encoding: 'utf8',
      });
      assert.match(out, /node\.pem: OK/);
    }
    const text = execFileSync('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'node.pem')], { encoding: 'utf8' });
    assert.match(text, /Version: 3 \(0x2\)/);
    assert.match(text, new RegExp(`Subject: O ?= ?${clusterId}, OU ?= ?swarm-manager, CN ?= ?${nodeId}`));
    assert.match(text, /Issuer: CN ?= ?swarm-ca/);
    assert.match(text, /X509v3 Basic Constraints: critical\s+CA:FALSE/);
    assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    assert.match(text, /TLS Web Server Authentication, TLS Web Client Authentication/);
    assert.match(text, /IP Address:10\.1\.2\.3, IP Address:FD00:0:0:0:0:0:1:2, DNS:swarm-manager, DNS:/);
    const caText = execFileSync('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'ca.pem')], { encoding: 'utf8' });
    assert.match(caText, /X509v3 Basic Constraints: critical\s+CA:TRUE/);
    assert.match(caText, /X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign/);
    // The node's authority key ID is the root's subject key ID (openssl's own method).
    const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(caText)?.[1];
    assert.ok(ski);
    assert.match(text, new RegExp(`Authority Key Identifier:\\s+(keyid:)?${ski}`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
