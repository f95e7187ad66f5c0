// Join tokens as Docker writes them: `SWMTKN-1-<digest>-<secret>`, where <digest> is the SHA-256 of
// the cluster's root CA certificate (its PEM text) in base 36, padded to 50 characters, and <secret>
// 128 random bits in base 36, padded to 25. A joining node checks the CA a manager presents against
// the digest before it trusts it; the manager checks the secret to decide the role.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { invalidParameter } from '../../errors.ts';
import { base36 } from '../ids.ts';

const DIGEST_LEN = 50;
const SECRET_LEN = 25;
const TOKEN_RE = /^SWMTKN-1-([0-9a-z]{50})-([0-9a-z]{25})$/;

/** The CA digest as it appears in a join token. */
export function caDigest(caCertPem: string): string {
  return base36(BigInt(`0x${createHash('sha256').update(caCertPem).digest('hex')}`), DIGEST_LEN);
}

/** A new join token for the CA. */
export function newJoinToken(caCertPem: string): string {
  return `SWMTKN-1-${caDigest(caCertPem)}-${base36(BigInt(`0x${randomBytes(16).toString('hex')}`), SECRET_LEN)}`;
}

export interface ParsedJoinToken {
  digest: string;
  secret: string;
}

/** Splits a token; a malformed one is a 400 with dockerd's wording. */
export function parseJoinToken(token: string): ParsedJoinToken {
  const m = TOKEN_RE.exec(token);
  if (!m) throw invalidParameter('invalid join token');
  return { digest: m[1]!, secret: m[2]! };
}

/** Whether the CA certificate is the one the token was made for. */
export function tokenMatchesCa(token: string, caCertPem: string): boolean {
  return parseJoinToken(token).digest === caDigest(caCertPem);
}

/** Constant-time comparison of two tokens. */
export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
