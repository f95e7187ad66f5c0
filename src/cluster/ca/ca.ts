// The cluster's certificate authority: an ECDSA P-256 root made at `swarm init`, and node
// certificates signed by it with the node ID as CN, the role as OU and the cluster ID as O (as
// swarmkit names them). Keys and signatures come from node:crypto, the X.509 encoding from x509.ts
// (no `openssl` process: at `swarm init` two of them took 0.1-0.6 s on a loaded host).
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { invalidParameter } from '../../errors.ts';
import { issuerDer, makeCertificate, subjectDer } from './x509.ts';

export type NodeRole = 'manager' | 'worker';
/** The OU of a node certificate, as swarmkit writes it. */
export const ROLE_OU: Record<NodeRole, string> = { manager: 'swarm-manager', worker: 'swarm-worker' };
const ROOT_CN = 'swarm-ca';
const ROOT_DAYS = 7300; // swarmkit: 20 years
export const NODE_CERT_DAYS = 90; // swarmkit's default NodeCertExpiry

export interface KeyPair {
  keyPem: string;
  publicKeyPem: string;
}

export interface RootCa {
  certPem: string;
  keyPem: string;
  /**
   * Certificates sent after each leaf it signs: during a root rotation the new root cross-signed by
   * the old one, so nodes that still trust only the old root accept the new leaves (swarmkit's way).
   */
  chain?: string[];
}

export interface NodeCertRequest {
  nodeId: string;
  role: NodeRole;
  clusterId: string;
  /** IP addresses the node answers on (its advertise and listen addresses). */
  ips: string[];
  /** Spec.CAConfig.NodeCertExpiry (default 90 days). */
  lifetimeMs?: number;
}

export function newKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** Creates a new self-signed root CA. */
export async function createRootCa(): Promise<RootCa> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const certPem = makeCertificate({
    subject: [['CN', ROOT_CN]],
    issuer: [['CN', ROOT_CN]],
    publicKey,
    signerKey: privateKey,
    days: ROOT_DAYS,
    ca: true,
  });
  return { certPem, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

const SUBJECT_PART = /^[0-9A-Za-z.\-]+$/;

/** Signs a node certificate for `publicKeyPem` (usable as TLS server and client). */
export async function issueNodeCert(ca: RootCa, publicKeyPem: string, req: NodeCertRequest): Promise<string> {
  for (const part of [req.nodeId, req.clusterId])
    if (!SUBJECT_PART.test(part)) throw invalidParameter(`invalid certificate subject part ${JSON.stringify(part)}`);
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(publicKeyPem);
  } catch (err) {
    throw invalidParameter('invalid public key in certificate request', err);
  }
  if (publicKey.asymmetricKeyType !== 'ec') throw invalidParameter('invalid public key in certificate request: not an EC key');
  const ips = [...new Set(req.ips.filter((ip) => isIP(ip) !== 0))];
  const caCert = new X509Certificate(ca.certPem);
  const leaf = makeCertificate({
    subject: [
      ['O', req.clusterId],
      ['OU', ROLE_OU[req.role]],
      ['CN', req.nodeId],
    ],
    issuer: subjectDer(caCert.raw),
    publicKey,
    signerKey: createPrivateKey(ca.keyPem),
    issuerPublicKey: caCert.publicKey,
    days: NODE_CERT_DAYS,
    ...(req.lifetimeMs ? { lifetimeMs: req.lifetimeMs } : {}),
    ca: false,
    ips,
    dnsNames: [ROLE_OU[req.role], req.nodeId],
  });
  return leaf + (ca.chain ?? []).join('');
}

/**
 * A node certificate for another role (a promotion or demotion): the same key, node, cluster and IP
 * addresses as `certPem`, which the node presented over mutual TLS.
 */
export function reissueForRole(ca: RootCa, certPem: string, role: NodeRole, lifetimeMs?: number): Promise<string> {
  const cert = new X509Certificate(certPem);
  const id = identityOf(certPem);
  const ips = (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((s) => s.startsWith('IP Address:'))
    .map((s) => s.slice('IP Address:'.length));
  const publicKeyPem = cert.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return issueNodeCert(ca, publicKeyPem, { nodeId: id.nodeId, role, clusterId: id.clusterId, ips, ...(lifetimeMs ? { lifetimeMs } : {}) });
}

/** The IP SANs of a certificate (a renewal keeps them). */
export function certIps(certPem: string): string[] {
  return (new X509Certificate(certPem).subjectAltName ?? '')
    .split(/,\s*/)
    .filter((s) => s.startsWith('IP Address:'))
    .map((s) => s.slice('IP Address:'.length));
}

export interface CertIdentity {
  nodeId: string;
  role: NodeRole;
  clusterId: string;
  notAfter: Date;
}

/** The identity a node certificate carries (CN, OU, O). */
export function identityOf(certPem: string | Buffer): CertIdentity {
  const cert = new X509Certificate(certPem);
  const field = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(cert.subject)?.[1] ?? '';
  const ou = field('OU');
  const role = ou === ROLE_OU.manager ? 'manager' : ou === ROLE_OU.worker ? 'worker' : null;
  if (!role) throw invalidParameter(`certificate has no node role (OU ${JSON.stringify(ou)})`);
  return { nodeId: field('CN'), role, clusterId: field('O'), notAfter: new Date(cert.validTo) };
}

/** Whether `certPem` was signed by the CA. */
export function signedBy(certPem: string, caPem: string): boolean {
  return new X509Certificate(certPem).verify(new X509Certificate(caPem).publicKey);
}

/** The certificates of a PEM bundle, in order. */
export function splitPems(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)?.map((p) => p.trimEnd() + '\n') ?? [];
}

/**
 * The certificate that signed the leaf of `chainPem` (the root itself, or an intermediate sent with
 * the leaf that leads to the root), or null when the chain does not lead to `rootPem`.
 */
export function issuerInChain(chainPem: string, rootPem: string): X509Certificate | null {
  const [leaf, ...rest] = splitPems(chainPem).map((p) => new X509Certificate(p));
  const root = new X509Certificate(rootPem);
  if (!leaf) return null;
  const leads = (c: X509Certificate, depth: number): boolean => {
    if (c.checkIssued(root) && c.verify(root.publicKey)) return true;
    if (depth > 4) return false;
    return rest.some((i) => i !== c && c.checkIssued(i) && c.verify(i.publicKey) && leads(i, depth + 1));
  };
  if (leaf.checkIssued(root) && leaf.verify(root.publicKey)) return root;
  return rest.find((i) => leaf.checkIssued(i) && leaf.verify(i.publicKey) && leads(i, 1)) ?? null;
}

/**
 * The old root's signature on the new root's certificate (same subject, key and validity), sent after
 * leaves of the new root during a rotation: nodes still trusting the old root verify them through it.
 */
export function crossSign(oldRoot: RootCa, newRootPem: string): string {
  const next = new X509Certificate(newRootPem);
  const old = new X509Certificate(oldRoot.certPem);
  return makeCertificate({
    subject: subjectDer(next.raw),
    issuer: subjectDer(old.raw),
    publicKey: next.publicKey,
    signerKey: createPrivateKey(oldRoot.keyPem),
    issuerPublicKey: old.publicKey,
    days: 0,
    validity: { notBefore: new Date(next.validFrom), notAfter: new Date(next.validTo) },
    ca: true,
  });
}

/** A node's Description.TLSInfo: the root it trusts, and the subject and key of its certificate's issuer. */
export function nodeTlsInfo(
  trustRootPem: string,
  chainPem: string,
): { TrustRoot: string; CertIssuerSubject: string; CertIssuerPublicKey: string } {
  const leaf = new X509Certificate(splitPems(chainPem)[0] ?? chainPem);
  const issuer = issuerInChain(chainPem, trustRootPem);
  return {
    TrustRoot: trustRootPem,
    CertIssuerSubject: issuerDer(leaf.raw).toString('base64'),
    CertIssuerPublicKey: issuer ? issuer.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') : '',
  };
}

/** The DER of a certificate's subject and public key, base64, as TLSInfo shows them. */
export function tlsInfoOf(certPem: string): { TrustRoot: string; CertIssuerSubject: string; CertIssuerPublicKey: string } {
  const cert = new X509Certificate(certPem);
  const subject = subjectDer(cert.raw);
  return {
    TrustRoot: certPem,
    CertIssuerSubject: subject.toString('base64'),
    CertIssuerPublicKey: cert.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}
