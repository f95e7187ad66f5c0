// Record values at rest under autolock: while the cluster is autolocked, every value the store
// writes (but the cluster record, which carries the sealed keys themselves) is sealed with the
// cluster's data key (AES-256-GCM, a fresh 12-byte nonce per value, the record's key name as
// associated data, so a value copied under another key does not open); key names stay in the clear.
// Binary, `#` + nonce + ciphertext + tag: 29 bytes more than the JSON, no base64. Reads take either
// form, so a store half-way through a migration (autolock switched on or off) reads whole. Pure
// but for the mode it holds, which its manager sets from the cluster record.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { unavailable } from '../../errors.ts';
import { keyOf } from './secret-crypto.ts';

/** Marks a sealed value: no JSON text starts with it. */
const MARK = 0x23; // '#'
const NONCE = 12;
const TAG = 16;

function sealValue(key: string, name: string, plain: Buffer): Buffer {
  const nonce = randomBytes(NONCE);
  const c = createCipheriv('aes-256-gcm', keyOf(key), nonce);
  c.setAAD(Buffer.from(name));
  const body = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([Buffer.of(MARK), nonce, body, c.getAuthTag()]);
}

function openValue(key: string, name: string, sealed: Buffer): Buffer {
  if (sealed.length < 1 + NONCE + TAG) throw new Error(`${name}: not a sealed value`);
  const d = createDecipheriv('aes-256-gcm', keyOf(key), sealed.subarray(1, 1 + NONCE));
  d.setAAD(Buffer.from(name));
  d.setAuthTag(sealed.subarray(sealed.length - TAG));
  return Buffer.concat([d.update(sealed.subarray(1 + NONCE, sealed.length - TAG)), d.final()]);
}

/** Keys never sealed: the cluster record (it holds the sealed data key). */
export const clearKey = (key: string): boolean => key === 'cluster';

const NOT_HELD = "the cluster's records are sealed (autolock) with a data key this manager does not hold yet; try again shortly";

export class RecordSeal {
  /** Whether writes are sealed (the cluster record says autolock is on). */
  private sealing = false;
  /** The data key, once known (it stays the same across unlock-key rotations). */
  private key: string | null = null;
  /** Whether the mode is known: if not, only the cluster record may be written (see `hold`). */
  private known = true;

  /** Until the next `set`, writes (but the cluster record's) are refused: a manager's store, opened before it read the record. */
  hold(): void {
    this.known = false;
  }

  /** Sets the mode; a null key keeps the one already known. Returns whether the mode changed. */
  set(sealing: boolean, key: string | null): boolean {
    if (key) this.key = key;
    const changed = sealing !== this.sealing;
    this.sealing = sealing;
    this.known = true;
    return changed;
  }

  get sealed(): boolean {
    return this.sealing;
  }

  /** What to store for `value` at `key`: JSON text, or the sealed bytes. */
  encode(key: string, value: unknown): string | Buffer {
    const json = JSON.stringify(value);
    if (clearKey(key)) return json;
    if (!this.known) throw unavailable('the cluster store is not ready yet (its cluster object was not read)');
    if (!this.sealing) return json;
    if (!this.key) throw unavailable(NOT_HELD);
    return sealValue(this.key, key, Buffer.from(json));
  }

  /** The value stored at `key` (either form). */
  decode<T>(key: string, raw: Buffer): T {
    if (raw[0] !== MARK) return JSON.parse(raw.toString()) as T;
    if (!this.key) throw unavailable(NOT_HELD);
    return JSON.parse(openValue(this.key, key, raw).toString()) as T;
  }

  /** Whether a stored text is in the form the current mode writes (the migration's test). */
  inMode(key: string, raw: Buffer): boolean {
    return clearKey(key) || (raw[0] === MARK) === this.sealing;
  }
}
