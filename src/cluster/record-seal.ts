// Record values at rest under autolock: while the cluster is autolocked, every value the store
// writes (but the cluster record, which carries the sealed keys themselves) is sealed with the
// cluster's data key (secret-crypto's AES-256-GCM, the record's key name as associated data, so a
// value copied under another key does not open); key names stay in the clear. Reads take either
// form, so a store half-way through a migration (autolock switched on or off) reads whole. Pure
// but for the mode it holds, which its manager sets from the cluster record.
import { unavailable } from '../errors.ts';
import { open, seal } from './secret-crypto.ts';

/** Marks a sealed value: no JSON text starts with it. */
const MARK = '#';

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

  /** The text to store for `value` at `key`. */
  encode(key: string, value: unknown): string {
    const json = JSON.stringify(value);
    if (clearKey(key)) return json;
    if (!this.known) throw unavailable('the cluster store is not ready yet (its cluster object was not read)');
    if (!this.sealing) return json;
    if (!this.key) throw unavailable(NOT_HELD);
    return MARK + seal(this.key, key, Buffer.from(json));
  }

  /** The value stored at `key` (either form). */
  decode<T>(key: string, raw: Buffer): T {
    if (raw[0] !== MARK.charCodeAt(0)) return JSON.parse(raw.toString()) as T;
    if (!this.key) throw unavailable(NOT_HELD);
    return JSON.parse(open(this.key, key, raw.subarray(1).toString()).toString()) as T;
  }

  /** Whether a stored text is in the form the current mode writes (the migration's test). */
  inMode(key: string, raw: Buffer): boolean {
    return clearKey(key) || (raw[0] === MARK.charCodeAt(0)) === this.sealing;
  }
}
