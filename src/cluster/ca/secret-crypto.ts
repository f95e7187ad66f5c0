// Encryption of secret and config data at rest in the cluster store: AES-256-GCM with the cluster's
// data key (32 random bytes kept in the cluster record), a fresh 12-byte nonce per value, the
// object's ID as associated data (a sealed value moved to another object does not open). Pure.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const VERSION = 'v1';

/** A new data key, base64. */
export function newDataKey(): string {
  return randomBytes(32).toString('base64');
}

/** Keys as KeyObjects, made once: a cipher from raw key bytes costs OpenSSL ~3 times as much. */
const keyObjects = new Map<string, KeyObject>();

export function keyOf(b64: string): KeyObject {
  let k = keyObjects.get(b64);
  if (k) return k;
  const raw = Buffer.from(b64, 'base64');
  if (raw.length !== 32) throw new Error('the cluster data key is not 32 bytes');
  k = createSecretKey(raw);
  if (keyObjects.size >= 16) keyObjects.clear(); // a few keys at most (data key, KEKs): never grows
  keyObjects.set(b64, k);
  return k;
}

/** `v1.<nonce>.<ciphertext>.<tag>`, each base64. */
export function seal(keyB64: string, id: string, data: Buffer): string {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(keyB64), nonce);
  c.setAAD(Buffer.from(id));
  const body = Buffer.concat([c.update(data), c.final()]);
  return [VERSION, nonce.toString('base64'), body.toString('base64'), c.getAuthTag().toString('base64')].join('.');
}

/** Opens a sealed value; throws if the key, the ID or the bytes do not match. */
export function open(keyB64: string, id: string, sealed: string): Buffer {
  const [v, nonce, body, tag] = sealed.split('.');
  if (v !== VERSION || nonce === undefined || body === undefined || tag === undefined) throw new Error('not a sealed value');
  const d = createDecipheriv('aes-256-gcm', keyOf(keyB64), Buffer.from(nonce, 'base64'));
  d.setAAD(Buffer.from(id));
  d.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([d.update(Buffer.from(body, 'base64')), d.final()]);
}
