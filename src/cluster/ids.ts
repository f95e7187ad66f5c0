// Identifiers in the shape swarmkit gives them: 128 random bits written in base 36, left-padded
// with zeros to 25 characters (node, cluster and object IDs, the secret half of a join token).
import { randomBytes } from 'node:crypto';

/** A non-negative integer in base 36, left-padded with zeros to `width`. */
export function base36(n: bigint, width: number): string {
  return n.toString(36).padStart(width, '0');
}

/** A fresh 25-character base-36 ID from 128 random bits. */
export function newId(): string {
  return base36(BigInt(`0x${randomBytes(16).toString('hex')}`), 25);
}

/** Whether a string looks like an ID this module makes. */
export function isId(s: string): boolean {
  return /^[0-9a-z]{25}$/.test(s);
}
