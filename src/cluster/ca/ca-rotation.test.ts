// Spec.CAConfig and root rotation without a cluster: NodeCertExpiry's minimum and the lifetime it
// gives, swarmkit's refusals of a given root, the cross-signed chain (checked by `openssl verify`
// against the old and the new root), the end of a rotation, node TLS info and the renewal point.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRootCa, crossSign, issueNodeCert, issuerInChain, newKeyPair, nodeTlsInfo, splitPems, tlsInfoOf, type RootCa } from './ca.ts';
import { caUpdate, checkCaConfig, desiredIssuerKey, finishRotation, nodeCertLifetimeMs, signerOf } from './ca-rotation.ts';
import { renewAt } from '../node/cert-renewer.ts';
import { newId } from '../ids.ts';
import { withDefaults, type ClusterRecord } from './swarm-object.ts';
import { caDigest, newJoinToken, parseJoinToken } from './tokens.ts';
import { opensslVerifies } from '../../../test/helpers/openssl.ts';

const status = (n: number) => (e: Error & { status?: number }) => e.status === n;

function record(ca: RootCa, caConfig: Record<string, unknown> = {}): ClusterRecord {
  return {
    ID: 'c1',
    CreatedAt: '',
    UpdatedAt: '',
    Spec: withDefaults({ CAConfig: caConfig }),
    DataPathPort: 4789,
    DefaultAddrPool: ['10.0.0.0/8'],
    SubnetSize: 24,
    JoinTokens: { Worker: newJoinToken(ca.certPem), Manager: newJoinToken(ca.certPem) },
    ca,
  };
}

const node = (ca: RootCa, lifetimeMs?: number) =>
  issueNodeCert(ca, newKeyPair().publicKeyPem, {
    nodeId: newId(),
    role: 'worker',
    clusterId: newId(),
    ips: ['127.0.0.1'],
    ...(lifetimeMs ? { lifetimeMs } : {}),
  });

const opensslVerify = (rootPem: string, chainPem: string) => opensslVerifies(rootPem, chainPem, 'sslclient');

test("NodeCertExpiry: swarmkit's 1 hour minimum; the lifetime of issued certificates follows it", async () => {
  assert.throws(
    () => checkCaConfig({ CAConfig: { NodeCertExpiry: 3_599_000_000_000 } }),
    (e: Error & { status?: number }) =>
      e.status === 400 && e.message === 'rpc error: code = InvalidArgument desc = minimum certificate expiry time is: 1h0m0s',
  );
  checkCaConfig({ CAConfig: { NodeCertExpiry: 3_600_000_000_000 } });
  assert.throws(() => checkCaConfig({ CAConfig: { ExternalCAs: [{ Protocol: 'cfssl', URL: 'https://ca' }] } }), status(501));
  assert.throws(() => checkCaConfig({ CAConfig: { SigningCACert: 'x' } }), status(501));
  assert.throws(() => checkCaConfig({ CAConfig: { SigningCAKey: 'x' } }), /signing CA cert must also be provided/);
  assert.throws(() => checkCaConfig({ CAConfig: { SigningCACert: 7 } }), status(400));
  assert.throws(() => checkCaConfig({ CAConfig: { NodeCertExpiry: '1h' } }), status(400));
  assert.throws(() => checkCaConfig({ CAConfig: { NodeCertExpiry: 1e30 } }), status(400));
  checkCaConfig({ CAConfig: { NodeCertExpiry: 9e18 } }); // 285 years: a valid Go duration
  assert.throws(() => checkCaConfig({ CAConfig: { ForceRotate: -1 } }), status(400));
  assert.throws(() => checkCaConfig({ CAConfig: { ExternalCAs: {} } }), status(400));
  const ca = await createRootCa();
  const rec = record(ca, { NodeCertExpiry: 7_200_000_000_000 });
  assert.equal(nodeCertLifetimeMs(rec), 7_200_000);
  const x = new X509Certificate(await node(ca, nodeCertLifetimeMs(rec)));
  const life = new Date(x.validTo).getTime() - new Date(x.validFrom).getTime();
  assert.ok(life >= 7_200_000 && life <= 7_200_000 + 61_000, `lifetime ${life}`);
  assert.equal(nodeCertLifetimeMs(record(ca)), 90 * 86_400_000, 'default 90 days');
  assert.match(new X509Certificate(await node(ca, 9e12)).validTo, /2[23]\d\d/, 'the longest Go duration encodes (GeneralizedTime)');
  // Renewal point: between 50 % and 80 % of the validity.
  const pem = splitPems(await node(ca, 3_600_000))[0]!;
  const from = new Date(new X509Certificate(pem).validFrom).getTime();
  const to = new Date(new X509Certificate(pem).validTo).getTime();
  assert.equal(renewAt(pem, 0), from + (to - from) * 0.5);
  assert.equal(renewAt(pem, 1), from + (to - from) * 0.8);
});

test('ForceRotate: a new root, leaves chained through its cross-signed certificate to the old root and the new', async () => {
  const old = await createRootCa();
  const rec = record(old);
  assert.equal(await caUpdate(rec, rec.Spec, old), null, 'nothing asked: no change');
  const fields = await caUpdate(rec, withDefaults({ CAConfig: { ForceRotate: 1 } }), old);
  assert.ok(fields?.rotation);
  assert.equal(fields.lastForcedRotation, 1);
  const rotating: ClusterRecord = { ...rec, ...fields };
  const leaf = await node(signerOf(rotating, old));
  assert.equal(splitPems(leaf).length, 2, 'leaf + cross-signed root');
  assert.ok(opensslVerify(old.certPem, leaf), 'a node trusting the old root accepts it');
  assert.ok(opensslVerify(fields.rotation.certPem, leaf), 'a node trusting the new root accepts it');
  assert.ok(issuerInChain(leaf, old.certPem) && issuerInChain(leaf, fields.rotation.certPem));
  assert.ok(!opensslVerify((await createRootCa()).certPem, leaf));
  // A node's TLS info names the new root as its issuer whichever root it trusts.
  const info = nodeTlsInfo(old.certPem, leaf);
  assert.equal(info.CertIssuerPublicKey, desiredIssuerKey(rotating));
  assert.equal(info.CertIssuerSubject, tlsInfoOf(fields.rotation.certPem).CertIssuerSubject);
  const oldLeaf = await node(signerOf(rec, old));
  assert.notEqual(nodeTlsInfo(old.certPem, oldLeaf).CertIssuerPublicKey, desiredIssuerKey(rotating));
  // Not done while a node holds an old-root certificate; done: new root, tokens of its digest.
  assert.equal(finishRotation(rotating, [info.CertIssuerPublicKey, nodeTlsInfo(old.certPem, oldLeaf).CertIssuerPublicKey]), null);
  const done = finishRotation(rotating, [info.CertIssuerPublicKey]);
  assert.ok(done && !done.rotation);
  assert.equal(done.ca.certPem, fields.rotation.certPem);
  assert.equal(parseJoinToken(done.JoinTokens.Worker).digest, caDigest(fields.rotation.certPem));
  assert.notEqual(done.JoinTokens.Worker, rec.JoinTokens.Worker);
  // After it, leaves still carry the cross-signed root (etcd members loaded the old one at start).
  const after = await node(signerOf(done, done.ca));
  assert.ok(opensslVerify(done.ca.certPem, after) && opensslVerify(old.certPem, after));
  // The same ForceRotate again: no new rotation.
  assert.equal(await caUpdate(done, withDefaults({ CAConfig: { ForceRotate: 1 } }), done.ca), null);
});

test("a given root (--ca-cert/--ca-key, EC or RSA): swarmkit's refusals, rotation, abort", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ca-given-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'ec.key',
      '-out',
      'ec.pem',
      '-days',
      '800',
      '-subj',
      '/CN=given-ec',
    );
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'rsa.key', '-out', 'rsa.pem', '-days', '800', '-subj', '/CN=given-rsa');
    ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'short.key',
      '-out',
      'short.pem',
      '-days',
      '30',
      '-subj',
      '/CN=short',
    );
    const f = (n: string) => readFileSync(join(dir, n), 'utf8');
    const old = await createRootCa();
    const rec = record(old);
    const spec = (cert: string, key: string) => withDefaults({ CAConfig: { SigningCACert: cert, SigningCAKey: key } });
    await assert.rejects(caUpdate(rec, spec(f('ec.pem'), f('rsa.key')), old), /certificate key mismatch/);
    await assert.rejects(caUpdate(rec, spec(f('short.pem'), f('short.key')), old), /CA certificate expires too soon/);
    await assert.rejects(caUpdate(rec, spec(f('ec.pem') + f('rsa.pem'), f('ec.key')), old), /cannot contain multiple certificates/);
    await assert.rejects(caUpdate(rec, spec(f('ec.pem'), 'junk'), old), /malformed private key/);
    // Another certificate of the current root's key (swarmkit: not a rotation).
    await assert.rejects(
      caUpdate(rec, spec(crossSign(old, old.certPem), old.keyPem), old),
      /Cannot update to a cert with an identical key/,
    );
    for (const kind of ['ec', 'rsa']) {
      const fields = await caUpdate(rec, spec(f(`${kind}.pem`), f(`${kind}.key`)), old);
      assert.ok(fields?.rotation, kind);
      const leaf = await node(signerOf({ ...rec, ...fields }, old));
      assert.ok(opensslVerify(old.certPem, leaf), `${kind}: old root`);
      assert.ok(opensslVerify(f(`${kind}.pem`), leaf), `${kind}: given root`);
      // Giving the current root back abandons the rotation.
      const abort = await caUpdate({ ...rec, ...fields }, spec(old.certPem, old.keyPem), old);
      assert.deepEqual(abort, { rotation: undefined, lastForcedRotation: 0 });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
