// The cluster CA's configuration (Spec.CAConfig) as swarmkit applies it: the node certificate
// lifetime (NodeCertExpiry, at least 1 hour), root rotation (ForceRotate bumped: a new root made here;
// SigningCACert + SigningCAKey: the root given), the signer certificates are issued by while a
// rotation runs (the new root's key, its certificate cross-signed by the old root sent after each
// leaf), and the end of a rotation once every node reports a certificate of the new root (the new root
// becomes the cluster's and the join tokens change to its digest). External CAs are a 501.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { invalidParameter, notImplemented } from '../../errors.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import { createRootCa, crossSign, splitPems, type RootCa } from './ca.ts';
import type { ClusterRecord } from './cluster-record.ts';
import { newJoinToken } from './tokens.ts';

/** swarmkit's ca.MinNodeCertExpiration (1 h) and DefaultNodeCertExpiration (90 days), in ns. */
export const MIN_NODE_CERT_EXPIRY_NS = 3_600_000_000_000;
export const DEFAULT_NODE_CERT_EXPIRY_NS = 7_776_000_000_000_000;
/** A root given to rotate to must be valid for a year more (swarmkit's minRootExpiration). */
const MIN_ROOT_VALIDITY_MS = 365 * 86_400_000;
/** Past rotations' cross-signed roots kept in chains (managers' etcd loaded its trust at start). */
const MAX_CHAIN = 4;

type CaConfig = { NodeCertExpiry?: unknown; ExternalCAs?: unknown; SigningCACert?: unknown; SigningCAKey?: unknown; ForceRotate?: unknown };

const caConfigOf = (spec: ClusterObject): CaConfig => (spec.CAConfig ?? {}) as CaConfig;

/** The checks of Spec.CAConfig that need no cluster (init and update). */
export function checkCaConfig(spec: ClusterObject): void {
  const ca = caConfigOf(spec);
  const expiry = ca.NodeCertExpiry;
  // A Go time.Duration: int64 nanoseconds (about 292 years).
  if (expiry !== undefined && (typeof expiry !== 'number' || !Number.isFinite(expiry) || Math.abs(expiry) > 9.223372036854776e18))
    throw invalidParameter('invalid CAConfig.NodeCertExpiry: must be a duration in nanoseconds');
  if (typeof expiry === 'number' && expiry < MIN_NODE_CERT_EXPIRY_NS)
    throw invalidParameter('rpc error: code = InvalidArgument desc = minimum certificate expiry time is: 1h0m0s');
  if (Array.isArray(ca.ExternalCAs) && ca.ExternalCAs.length > 0)
    throw notImplemented(
      'external CAs (CAConfig.ExternalCAs, the cfssl protocol) are not built in this engine: the cluster signs with its own root CA key',
    );
  if (ca.ForceRotate !== undefined && (typeof ca.ForceRotate !== 'number' || ca.ForceRotate < 0 || !Number.isInteger(ca.ForceRotate)))
    throw invalidParameter('invalid CAConfig.ForceRotate: must be a non-negative integer');
  for (const f of ['SigningCACert', 'SigningCAKey'] as const)
    if (ca[f] !== undefined && ca[f] !== null && typeof ca[f] !== 'string')
      throw invalidParameter(`invalid CAConfig.${f}: must be a PEM string`);
  if (ca.ExternalCAs !== undefined && ca.ExternalCAs !== null && !Array.isArray(ca.ExternalCAs))
    throw invalidParameter('invalid CAConfig.ExternalCAs: must be an array');
  const cert = typeof ca.SigningCACert === 'string' ? ca.SigningCACert.trim() : '';
  const key = typeof ca.SigningCAKey === 'string' ? ca.SigningCAKey.trim() : '';
  if (key && !cert)
    throw invalidParameter(
      'rpc error: code = InvalidArgument desc = if a signing CA key is provided, the signing CA cert must also be provided',
    );
  if (cert && !key)
    throw notImplemented(
      'a signing CA certificate without its key needs an external CA to sign with, and external CAs are not built in this engine: give --ca-key as well',
    );
}

/** The lifetime of the node certificates a spec asks for. */
export function lifetimeOf(spec: ClusterObject): number {
  const ns = caConfigOf(spec).NodeCertExpiry;
  return typeof ns === 'number' && ns >= MIN_NODE_CERT_EXPIRY_NS ? ns / 1e6 : DEFAULT_NODE_CERT_EXPIRY_NS / 1e6;
}

/** The lifetime of the node certificates the cluster issues. */
export function nodeCertLifetimeMs(rec: ClusterRecord): number {
  return lifetimeOf(rec.Spec);
}

/** The root CA of a new cluster: the one the init request gives (SigningCACert + SigningCAKey), or a new one. */
export async function initialRoot(spec: ClusterObject): Promise<RootCa> {
  const ca = caConfigOf(spec);
  const cert = typeof ca.SigningCACert === 'string' ? ca.SigningCACert.trim() : '';
  return cert ? givenRoot(cert, String(ca.SigningCAKey ?? '')) : createRootCa();
}

/** The spec as stored: the signing CA certificate and key are kept in the record's CA, not the spec. */
export function storedSpec(spec: ClusterObject): ClusterObject {
  const ca = { ...caConfigOf(spec) } as Record<string, unknown>;
  delete ca.SigningCACert;
  delete ca.SigningCAKey;
  return { ...spec, CAConfig: ca };
}

/** What signs node certificates now: the new root while a rotation runs (with its cross-signed certificate). */
export function signerOf(rec: ClusterRecord, root: RootCa): RootCa {
  if (rec.rotation)
    return { certPem: rec.rotation.certPem, keyPem: rec.rotation.keyPem, chain: [rec.rotation.crossPem, ...(rec.chain ?? [])] };
  return { certPem: root.certPem, keyPem: root.keyPem, chain: rec.chain ?? [] };
}

/** The public key (SPKI DER, base64) node certificates should be issued by: a node with another renews. */
export function desiredIssuerKey(rec: ClusterRecord): string {
  return new X509Certificate(rec.rotation?.certPem ?? rec.ca.certPem).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
}

const samePem = (a: string, b: string) => a.trim() === b.trim();

/** A root given with `swarm ca --rotate --ca-cert --ca-key`, checked as swarmkit does. */
function givenRoot(certText: string, keyText: string): RootCa {
  const pems = splitPems(certText);
  if (pems.length === 0) throw invalidParameter('rpc error: code = InvalidArgument desc = could not parse the desired CA certificate');
  if (pems.length > 1)
    throw invalidParameter('rpc error: code = InvalidArgument desc = the desired CA certificate cannot contain multiple certificates');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pems[0]!);
  } catch {
    throw invalidParameter('rpc error: code = InvalidArgument desc = could not parse the desired CA certificate');
  }
  let key;
  try {
    key = createPrivateKey(keyText);
  } catch (err) {
    throw invalidParameter(`rpc error: code = InvalidArgument desc = malformed private key: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ec' && key.asymmetricKeyType !== 'rsa')
    throw invalidParameter('rpc error: code = InvalidArgument desc = unknown or unsupported certificate public key algorithm');
  if (!cert.checkPrivateKey(key)) throw invalidParameter('rpc error: code = InvalidArgument desc = certificate key mismatch');
  if (!cert.ca) throw invalidParameter('rpc error: code = InvalidArgument desc = certificate not a CA');
  if (new Date(cert.validTo).getTime() < Date.now() + MIN_ROOT_VALIDITY_MS)
    throw invalidParameter('rpc error: code = InvalidArgument desc = CA certificate expires too soon');
  return { certPem: pems[0]!, keyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

type CaFields = Pick<ClusterRecord, 'rotation' | 'lastForcedRotation'>;

/**
 * swarmkit's validateCAConfig for an update: the record's new rotation fields, or null for no change.
 * `root` is the current root with its key (opened, under autolock).
 */
export async function caUpdate(rec: ClusterRecord, spec: ClusterObject, root: RootCa): Promise<CaFields | null> {
  const ca = caConfigOf(spec);
  const force = typeof ca.ForceRotate === 'number' ? ca.ForceRotate : 0;
  const certText = typeof ca.SigningCACert === 'string' ? ca.SigningCACert.trim() : '';
  const start = (next: RootCa): CaFields => {
    if (rec.autolock) throw notImplemented('rotating the root CA of a cluster with autolock on is not built yet in this engine');
    return { rotation: { ...next, crossPem: crossSign(root, next.certPem) }, lastForcedRotation: force };
  };
  if (!certText) return force !== (rec.lastForcedRotation ?? 0) ? start(await createRootCa()) : null;
  const next = givenRoot(certText, String(ca.SigningCAKey ?? ''));
  // The current root given back: a rotation in progress is abandoned (swarmkit's way to abort one).
  if (samePem(next.certPem, rec.ca.certPem)) return { rotation: undefined, lastForcedRotation: force };
  if (
    new X509Certificate(next.certPem).publicKey.export({ type: 'spki', format: 'pem' }) ===
    new X509Certificate(rec.ca.certPem).publicKey.export({ type: 'spki', format: 'pem' })
  )
    throw invalidParameter('rpc error: code = InvalidArgument desc = Cannot update to a cert with an identical key');
  if (rec.rotation && samePem(rec.rotation.certPem, next.certPem))
    return { rotation: { ...rec.rotation, keyPem: next.keyPem }, lastForcedRotation: force };
  return start(next);
}

/**
 * The end of a rotation (swarmkit's finishRootRotation), once every node reports a certificate issued
 * by the new root: it becomes the cluster's root, the join tokens change to its digest, and its
 * cross-signed certificate stays in the chain leaves are sent with (see MAX_CHAIN). Null: not yet.
 */
export function finishRotation(rec: ClusterRecord, nodeIssuerKeys: string[]): ClusterRecord | null {
  const r = rec.rotation;
  if (!r) return null;
  const want = desiredIssuerKey(rec);
  if (!nodeIssuerKeys.every((k) => k === want)) return null;
  const next: ClusterRecord = {
    ...rec,
    ca: { certPem: r.certPem, keyPem: r.keyPem },
    chain: [r.crossPem, ...(rec.chain ?? [])].slice(0, MAX_CHAIN),
    JoinTokens: { Worker: newJoinToken(r.certPem), Manager: newJoinToken(r.certPem) },
    UpdatedAt: new Date().toISOString(),
  };
  delete next.rotation;
  return next;
}
