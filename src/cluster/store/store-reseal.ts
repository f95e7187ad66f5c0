// Rewrites the store's values in the form the record seal now writes (autolock switched on or off):
// each at its version, in transactions of a few dozen, a value changed meanwhile read again.
import type { Etcd3 } from 'etcd3';
import type { EngineError } from '../../errors.ts';
import type { RecordSeal } from '../ca/record-seal.ts';
import { PREFIX, storeDown } from './store-calls.ts';

/** The compare-and-swap writes of the store (store.ts) a rewrite goes through. */
export interface CasWrites {
  batch(writes: Array<{ key: string; value: unknown; version?: number }>): Promise<number>;
  update<T>(key: string, value: T, version: number): Promise<number>;
}

/**
 * Rewrites every value not in the form `seal` now writes. `skip`: keys left as they are (leased
 * ones, which a rewrite would detach from their lease). Returns how many values were rewritten.
 */
export async function resealAll(client: Etcd3, seal: RecordSeal, writes: CasWrites, skip: (key: string) => boolean): Promise<number> {
  let kvs;
  try {
    kvs = (await client.getAll().prefix(PREFIX).exec()).kvs;
  } catch (err) {
    throw storeDown('reseal', err);
  }
  const todo = kvs
    .map((kv) => ({ key: kv.key.toString().slice(PREFIX.length), raw: kv.value, version: Number(kv.mod_revision) }))
    .filter((k) => !skip(k.key) && !seal.inMode(k.key, k.raw));
  let done = 0;
  for (let i = 0; i < todo.length; i += 64) {
    const chunk = todo.slice(i, i + 64);
    try {
      await writes.batch(chunk.map((k) => ({ key: k.key, value: seal.decode(k.key, k.raw), version: k.version })));
      done += chunk.length;
      continue;
    } catch (err) {
      if ((err as EngineError).code !== 'CONFLICT') throw err;
    }
    for (const k of chunk) done += (await resealOne(client, seal, writes, k.key)) ? 1 : 0;
  }
  return done;
}

/** One value read again and rewritten in the current form (false: gone, or already in it). */
async function resealOne(client: Etcd3, seal: RecordSeal, writes: CasWrites, key: string): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    let kv;
    try {
      kv = (await client.get(PREFIX + key).exec()).kvs[0];
    } catch (err) {
      throw storeDown(`get ${key}`, err);
    }
    if (!kv || seal.inMode(key, kv.value)) return false;
    try {
      await writes.update(key, seal.decode(key, kv.value), Number(kv.mod_revision));
      return true;
    } catch (err) {
      const code = (err as EngineError).code;
      if (code !== 'CONFLICT' && code !== 'NOT_FOUND') throw err;
    }
  }
  return false;
}
