// The DER encoding of the certificates the cluster CA makes (X.509 v3, ECDSA P-256 keys signed with
// ecdsa-with-SHA256): a root and node certificates with the few extensions they need. Keys and
// signatures come from node:crypto; this file only lays out the ASN.1, so a certificate costs well
// under a millisecond instead of an `openssl` process (~50 ms idle, several hundred on a loaded
// host) at `swarm init` and each join. Parsing stays with node:crypto's X509Certificate.
import { createHash, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIPv4, parseIPv4 } from '../../network/ipam/ip4.ts';
import { parseIPv6 } from '../../network/ipam/ip6.ts';

function tlv(tag: number, body: Buffer): Buffer {
  const n = body.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, body]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const octets = (b: Buffer) => tlv(0x04, b);
const TRUE = Buffer.from([0x01, 0x01, 0xff]);
/** An explicit context tag [n]. */
const ctx = (n: number, body: Buffer) => tlv(0xa0 | n, body);

/** A non-negative INTEGER from big-endian bytes (minimal, with a 0 byte if the top bit is set). */
function uint(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = bytes.subarray(i);
  return tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const v of rest) {
    const groups = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) groups.unshift((x & 0x7f) | 0x80);
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** BIT STRING of named bits (bit 0 = the most significant bit of the first byte), DER-minimal. */
function namedBits(bits: number[]): Buffer {
  const last = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(last / 8) + 1);
  for (const bit of bits) bytes[bit >> 3]! |= 0x80 >> (bit & 7);
  return tlv(0x03, Buffer.concat([Buffer.from([7 - (last & 7)]), bytes]));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-01-02T03:04:05.678Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  O: '2.5.4.10',
  OU: '2.5.4.11',
  CN: '2.5.4.3',
  subjectKeyId: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyId: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

/** A Name in the given order (as openssl's `-subj /O=…/OU=…/CN=…`). */
function name(parts: Array<[keyof typeof OID, string]>): Buffer {
  return seq(...parts.map(([k, v]) => set(seq(oid(OID[k]), utf8(v)))));
}

const ext = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [TRUE] : []), octets(value));

/** One DER element at `at`: where its value starts and ends (= where the next one starts). */
export function derElement(buf: Buffer, at: number): { start: number; end: number } {
  let len = buf[at + 1]!;
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[at + 2 + i]!;
    start += n;
  }
  return { start, end: start + len };
}

/** The DER of a certificate's subject Name (the issuer of what it signs, byte for byte). */
export function subjectDer(certDer: Buffer): Buffer {
  const tbs = derElement(certDer, derElement(certDer, 0).start); // Certificate → TBSCertificate
  let at = tbs.start;
  if (certDer[at] === 0xa0) at = derElement(certDer, at).end; // [0] version
  for (let i = 0; i < 4; i++) at = derElement(certDer, at).end; // serial, signature, issuer, validity
  return certDer.subarray(at, derElement(certDer, at).end);
}

/** The DER of a certificate's issuer Name (what TLSInfo.CertIssuerSubject shows). */
export function issuerDer(certDer: Buffer): Buffer {
  const tbs = derElement(certDer, derElement(certDer, 0).start);
  let at = tbs.start;
  if (certDer[at] === 0xa0) at = derElement(certDer, at).end; // [0] version
  for (let i = 0; i < 2; i++) at = derElement(certDer, at).end; // serial, signature
  return certDer.subarray(at, derElement(certDer, at).end);
}

/** The key identifier of RFC 5280 4.2.1.2 (1), as openssl makes it: SHA-1 of the key's bits. */
function keyId(spki: Buffer): Buffer {
  const bits = derElement(spki, derElement(spki, 0).start).end; // SEQUENCE { algorithm, BIT STRING }
  return createHash('sha1')
    .update(spki.subarray(derElement(spki, bits).start + 1)) // after the unused-bits byte
    .digest();
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(parseIPv4(ip) >>> 0);
    return b;
  }
  const v = parseIPv6(ip);
  return Buffer.from(v.toString(16).padStart(32, '0'), 'hex');
}

export interface CertTemplate {
  /** Parts, or a Name's DER as it is (cross-signing a CA certificate keeps its subject). */
  subject: Array<['O' | 'OU' | 'CN', string]> | Buffer;
  /** The issuer's Name: parts (self-signed) or its certificate's subject DER. */
  issuer: Array<['O' | 'OU' | 'CN', string]> | Buffer;
  /** The certified key (SPKI PEM or KeyObject) and the signer's private key. */
  publicKey: string | KeyObject;
  signerKey: KeyObject;
  /** The issuer's public key, for the authority key identifier (absent: self-signed). */
  issuerPublicKey?: KeyObject;
  days: number;
  /** Overrides `days` (node certificates follow Spec.CAConfig.NodeCertExpiry, down to 1 hour). */
  lifetimeMs?: number;
  /** Overrides the validity altogether (a cross-signed CA keeps the one of the certificate it copies). */
  validity?: { notBefore: Date; notAfter: Date };
  ca: boolean;
  ips?: string[];
  dnsNames?: string[];
}

/** Builds and signs a certificate; returns its PEM. */
export function makeCertificate(t: CertTemplate): string {
  const key = typeof t.publicKey === 'string' ? createPublicKey(t.publicKey) : t.publicKey;
  const spki = key.export({ type: 'spki', format: 'der' });
  const issuerSpki = (t.issuerPublicKey ?? key).export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and non-zero
  // Backdated a minute: a node whose clock is slightly behind the CA's still accepts it at once.
  const notBefore = t.validity?.notBefore ?? new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const notAfter = t.validity?.notAfter ?? new Date(notBefore.getTime() + 60_000 + (t.lifetimeMs ?? t.days * 86_400_000));
  // An RSA signer (a root CA given with `swarm ca --rotate --ca-key`) signs with PKCS#1 v1.5 SHA-256.
  const rsa = t.signerKey.asymmetricKeyType === 'rsa';
  const alg = rsa ? seq(oid(OID.sha256WithRsa), Buffer.from([0x05, 0x00])) : seq(oid(OID.ecdsaWithSha256));
  const sans = [...(t.ips ?? []).map((ip) => tlv(0x87, ipBytes(ip))), ...(t.dnsNames ?? []).map((n) => tlv(0x82, Buffer.from(n, 'ascii')))];
  const extensions = [
    ext(OID.basicConstraints, true, t.ca ? seq(TRUE) : seq()),
    // CA: keyCertSign (5), cRLSign (6); node: digitalSignature (0), keyEncipherment (2).
    ext(OID.keyUsage, true, namedBits(t.ca ? [5, 6] : [0, 2])),
    ...(t.ca ? [] : [ext(OID.extKeyUsage, false, seq(oid(OID.serverAuth), oid(OID.clientAuth)))]),
    ...(sans.length ? [ext(OID.subjectAltName, false, seq(...sans))] : []),
    ext(OID.subjectKeyId, false, octets(keyId(spki))),
    ...(t.issuerPublicKey ? [ext(OID.authorityKeyId, false, seq(tlv(0x80, keyId(issuerSpki))))] : []),
  ];
  const tbs = seq(
    ctx(0, uint(Buffer.from([2]))), // v3
    uint(serial),
    alg,
    Buffer.isBuffer(t.issuer) ? t.issuer : name(t.issuer),
    seq(time(notBefore), time(notAfter)),
    Buffer.isBuffer(t.subject) ? t.subject : name(t.subject),
    spki,
    ctx(3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, t.signerKey); // DER ECDSA-Sig-Value, or the RSA signature
  const der = seq(tbs, alg, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`;
}
