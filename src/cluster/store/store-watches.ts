// The store's prefix watches: which keys change (a manager's followers of nodes, heartbeats, the
// cluster record), every change with its value from a revision on (the cluster cache's feed), and
// the last revision under a prefix (how far a follower has to have seen).
import type { Etcd3, Watcher } from 'etcd3';
import type { RecordSeal } from '../ca/record-seal.ts';
import { PREFIX, storeDown } from './store-calls.ts';

/** A put (with the value) or a delete (without) and the revision of the change. */
export interface Change<T> {
  key: string;
  value?: T;
  version: number;
  created: number;
}

/** A watch of the keys under `prefix`, from `revision` on when given; etcd down is storeDown. */
async function openWatch(client: Etcd3, prefix: string, revision?: number): Promise<Watcher> {
  const b = client.watch().prefix(PREFIX + prefix);
  try {
    return await (revision === undefined ? b : b.startRevision(String(revision))).create();
  } catch (err) {
    throw storeDown(`watch ${prefix}`, err);
  }
}

/** Calls `onChange(key)` for every put or delete under `prefix`; returns the stop function. */
export async function watchKeys(
  client: Etcd3,
  prefix: string,
  onChange: (key: string, deleted: boolean) => void,
): Promise<() => Promise<void>> {
  const w = await openWatch(client, prefix);
  w.on('put', (kv) => onChange(kv.key.toString().slice(PREFIX.length), false));
  w.on('delete', (kv) => onChange(kv.key.toString().slice(PREFIX.length), true));
  return () => w.cancel();
}

/**
 * Every change under `prefix` from `revision` on, in order, with the value (none for a delete) and
 * the revision of the change; `onError` when the watch ends for good (e.g. the revision was
 * compacted away). etcd3 resumes a watch that lost its connection from where it was.
 */
export async function watchChanges<T>(
  client: Etcd3,
  seal: RecordSeal,
  prefix: string,
  revision: number,
  onChange: (c: Change<T>) => void,
  onError: (err: Error) => void,
): Promise<() => Promise<void>> {
  const w = await openWatch(client, prefix, revision);
  const key = (kv: { key: Buffer }) => kv.key.toString().slice(PREFIX.length);
  w.on('put', (kv) => {
    let value: T;
    try {
      value = seal.decode<T>(key(kv), kv.value);
    } catch (err) {
      // A value this manager cannot open (autolock's key not fetched yet): the watch ends and the
      // caller reads again later, as after any lost watch.
      void w.cancel().catch(() => undefined); // the watch may be over already: nothing to cancel
      onError(err as Error);
      return;
    }
    onChange({ key: key(kv), value, version: Number(kv.mod_revision), created: Number(kv.create_revision) });
  });
  w.on('delete', (kv) => onChange({ key: key(kv), version: Number(kv.mod_revision), created: 0 }));
  w.on('error', (err: Error) => onError(err));
  return () => w.cancel();
}

/** The highest mod revision of the keys under `prefix` (0: none). */
export async function lastRevision(client: Etcd3, prefix: string): Promise<number> {
  try {
    const kv = (
      await client
        .getAll()
        .prefix(PREFIX + prefix)
        .sort('Mod', 'Descend')
        .limit(1)
        .exec()
    ).kvs[0];
    return kv ? Number(kv.mod_revision) : 0;
  } catch (err) {
    throw storeDown(`list ${prefix}`, err);
  }
}
