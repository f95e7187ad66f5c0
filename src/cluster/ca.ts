// The cluster's certificate authority: an ECDSA P-256 root made at `swarm init`, and node
// certificates signed by it with the node ID as CN, the role as OU and the cluster ID as O (as
// swarmkit names them). Keys come from node:crypto; the X.509 encoding is done by the `openssl`
// command (Debian's openssl 3, already on every host as a dependency of ca-certificates), which
// spares the daemon an ASN.1 library: certificates are made only at init, join and renewal.
import { execFile } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { internal, invalidParameter } from '../errors.ts';

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
}

export interface NodeCertRequest {
  nodeId: string;
  role: NodeRole;
  clusterId: string;
  /** IP addresses the node answers on (its advertise and listen addresses). */
  ips: string[];
}

export function newKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function openssl(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(internal(`openssl ${args[0]} failed: ${stderr.trim() || err.message}`, err));
      else resolve(stdout);
    });
  });
}

async function withScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-ca-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Creates a new self-signed root CA. */
export async function createRootCa(): Promise<RootCa> {
  const { keyPem } = newKeyPair();
  return withScratch(async (dir) => {
    await writeFile(join(dir, 'ca.key'), keyPem, { mode: 0o600 });
    await openssl(
      [
        'req',
        '-x509',
        '-new',
        '-key',
        'ca.key',
        '-subj',
        `/CN=${ROOT_CN}`,
        '-days',
        String(ROOT_DAYS),
        '-out',
        'ca.pem',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
    return { certPem: await readFile(join(dir, 'ca.pem'), 'utf8'), keyPem };
  });
}

const SUBJECT_PART = /^[0-9A-Za-z.\-]+$/;

/** Signs a node certificate for `publicKeyPem` (usable as TLS server and client). */
export async function issueNodeCert(ca: RootCa, publicKeyPem: string, req: NodeCertRequest): Promise<string> {
  for (const part of [req.nodeId, req.clusterId])
    if (!SUBJECT_PART.test(part)) throw invalidParameter(`invalid certificate subject part ${JSON.stringify(part)}`);
  try {
    createPublicKey(publicKeyPem);
  } catch (err) {
    throw invalidParameter('invalid public key in certificate request', err);
  }
  const ips = [...new Set(req.ips.filter((ip) => /^[0-9a-fA-F.:]+$/.test(ip)))];
  const san = [...ips.map((ip) => `IP:${ip}`), `DNS:${ROLE_OU[req.role]}`, `DNS:${req.nodeId}`].join(',');
  return withScratch(async (dir) => {
    await Promise.all([
      writeFile(join(dir, 'ca.pem'), ca.certPem),
      writeFile(join(dir, 'ca.key'), ca.keyPem, { mode: 0o600 }),
      writeFile(join(dir, 'node.pub'), publicKeyPem),
      writeFile(
        join(dir, 'ext.cnf'),
        [
          'basicConstraints=CA:FALSE',
          'keyUsage=critical,digitalSignature,keyEncipherment',
          'extendedKeyUsage=serverAuth,clientAuth',
          `subjectAltName=${san}`,
          '',
        ].join('\n'),
      ),
    ]);
    await openssl(
      [
        'x509',
        '-new',
        '-subj',
        `/O=${req.clusterId}/OU=${ROLE_OU[req.role]}/CN=${req.nodeId}`,
        '-force_pubkey',
        'node.pub',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-days',
        String(NODE_CERT_DAYS),
        '-extfile',
        'ext.cnf',
        '-set_serial',
        `0x${randomBytes(12).toString('hex')}`,
        '-out',
        'node.pem',
      ],
      dir,
    );
    return readFile(join(dir, 'node.pem'), 'utf8');
  });
}

/**
 * A node certificate for another role (a promotion or demotion): the same key, node, cluster and IP
 * addresses as `certPem`, which the node presented over mutual TLS.
 */
export function reissueForRole(ca: RootCa, certPem: string, role: NodeRole): Promise<string> {
  const cert = new X509Certificate(certPem);
  const id = identityOf(certPem);
  const ips = (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((s) => s.startsWith('IP Address:'))
    .map((s) => s.slice('IP Address:'.length));
  const publicKeyPem = cert.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return issueNodeCert(ca, publicKeyPem, { nodeId: id.nodeId, role, clusterId: id.clusterId, ips });
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

/** One DER element: where its value starts and ends. */
function derElement(buf: Buffer, at: number): { start: number; end: number; next: number } {
  let len = buf[at + 1]!;
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[at + 2 + i]!;
    start += n;
  }
  return { start, end: start + len, next: start + len };
}

/** The DER of a certificate's subject and public key, base64, as TLSInfo shows them. */
export function tlsInfoOf(certPem: string): { TrustRoot: string; CertIssuerSubject: string; CertIssuerPublicKey: string } {
  const cert = new X509Certificate(certPem);
  const der = cert.raw;
  const tbs = derElement(der, derElement(der, 0).start); // Certificate → TBSCertificate
  let at = tbs.start;
  if (der[at] === 0xa0) at = derElement(der, at).next; // [0] version
  for (let i = 0; i < 4; i++) at = derElement(der, at).next; // serial, signature, issuer, validity
  const subject = der.subarray(at, derElement(der, at).end);
  return {
    TrustRoot: certPem,
    CertIssuerSubject: subject.toString('base64'),
    CertIssuerPublicKey: cert.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}
