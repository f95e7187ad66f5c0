// The typed client of the replicated store (etcd, through npm etcd3 over grpc-js with mutual TLS).
// Objects are JSON values under one prefix; an object's API `Version.Index` is its etcd
// mod_revision, so an update carrying a stale version fails in the same transaction that would
// have written it (compare-and-swap), and creation refuses a key that exists. Beside it: leased
// keys (store-leases.ts), watches (store-watches.ts), the etcd membership (etcd-membership.ts), the
// failures' answers (store-calls.ts), re-sealing (store-reseal.ts). Every value goes through
// `seal` (record-seal.ts): sealed with the data key while the cluster is autolocked.
// etcd3 is loaded on first use only: a node outside a cluster never pays for it.
import type { Etcd3 } from 'etcd3';
import { conflict, notFound } from '../../errors.ts';
import { RecordSeal } from '../ca/record-seal.ts';
import { EtcdMembership } from './etcd-membership.ts';
import { CALL_DEADLINE_MS, OUT_OF_SEQUENCE, PREFIX, storeDown } from './store-calls.ts';
import { StoreLeases } from './store-leases.ts';
import { resealAll } from './store-reseal.ts';
import { lastRevision, watchChanges, watchKeys, type Change } from './store-watches.ts';

export { NO_LEADER, OUT_OF_SEQUENCE } from './store-calls.ts';
export type { StoreMember } from './etcd-membership.ts';

export interface StoreTls {
  caPem: string;
  certPem: string;
  keyPem: string;
}

export interface Stored<T> {
  key: string;
  value: T;
  /** mod_revision: the object's Version.Index. */
  version: number;
  /** create_revision. */
  created: number;
}

/**
 * A condition added to a write: it succeeds only while `key` is still at mod revision `version`
 * (the orchestrator's lock, so a manager that lost it writes nothing more).
 */
export interface Fence {
  key: string;
  version: number;
}

/**
 * A fault-handling policy that only runs the call (the etcd3 pool calls nothing else on it). Async:
 * the pool's markFailed hands it a function that throws synchronously and catches the promise.
 */
const passThrough = { execute: async <T>(fn: () => Promise<T> | T) => fn() };

/**
 * Every call carries etcd's `hasleader` metadata, so a member without a leader (a partitioned
 * minority, a cluster without quorum) refuses at once ("etcdserver: no leader") rather than holding
 * the call until its timeout. etcd3 builds a fresh, empty Metadata per call when no auth is set.
 */
function requireLeader(client: Etcd3): void {
  const auth = (client as unknown as { pool: { authenticator: { getMetadata(): Promise<{ set(k: string, v: string): void }> } } }).pool
    .authenticator;
  const original = auth.getMetadata.bind(auth);
  auth.getMetadata = async () => {
    const md = await original();
    md.set('hasleader', 'true');
    return md;
  };
}

export class ClusterStore {
  /** How values are written (clear, or sealed under autolock) and read. */
  readonly seal = new RecordSeal();
  /** Heartbeat keys and the orchestrator's lock, bound to this client's leases (store-leases.ts). */
  readonly leases: StoreLeases;
  /** The etcd members and which one leads (etcd-membership.ts). */
  readonly membership: EtcdMembership;

  private constructor(private readonly client: Etcd3) {
    this.leases = new StoreLeases(client, this.seal);
    this.membership = new EtcdMembership(client);
  }

  /** Starts loading the client module (~0.2 s) while etcd starts, so `open` finds it loaded. */
  static preload(): void {
    import('etcd3').catch(() => undefined); // a failure shows in `open`
  }

  static async open(endpoints: string[], tls: StoreTls, opts: { dialTimeoutMs?: number } = {}): Promise<ClusterStore> {
    return new ClusterStore(await connect(endpoints, tls, opts.dialTimeoutMs ?? 10_000));
  }

  async get<T>(key: string): Promise<Stored<T> | null> {
    try {
      const r = await this.client.get(PREFIX + key).exec();
      const kv = r.kvs[0];
      if (!kv) return null;
      return { key, value: this.seal.decode<T>(key, kv.value), version: Number(kv.mod_revision), created: Number(kv.create_revision) };
    } catch (err) {
      throw storeDown(`get ${key}`, err);
    }
  }

  async list<T>(prefix: string): Promise<Stored<T>[]> {
    return (await this.snapshot<T>(prefix)).items;
  }

  /** The compare of a fence (none: a condition that always holds). */
  private fenced(txn: ReturnType<Etcd3['if']>, fence: Fence | undefined): ReturnType<Etcd3['if']> {
    return fence ? txn.and(PREFIX + fence.key, 'Mod', '==', fence.version) : txn;
  }

  /** Writes a new key; 409 if it exists. Returns the new version. */
  async create<T>(key: string, value: T, fence?: Fence): Promise<number> {
    let r;
    try {
      r = await this.fenced(this.client.if(PREFIX + key, 'Create', '==', 0), fence)
        .then(this.client.put(PREFIX + key).value(this.seal.encode(key, value)))
        .commit();
    } catch (err) {
      throw storeDown(`create ${key}`, err);
    }
    if (!r.succeeded) throw conflict(`${key} already exists`);
    return Number(r.header.revision);
  }

  /** Writes `value` if the key is still at `version`; 409 "update out of sequence" if not, 404 if gone. */
  async update<T>(key: string, value: T, version: number, fence?: Fence): Promise<number> {
    let r;
    try {
      // The else branch reads the key in the same transaction: gone (404) or changed (409).
      r = await this.fenced(this.client.if(PREFIX + key, 'Mod', '==', version), fence)
        .then(this.client.put(PREFIX + key).value(this.seal.encode(key, value)))
        .else(this.client.get(PREFIX + key))
        .commit();
    } catch (err) {
      throw storeDown(`update ${key}`, err);
    }
    if (r.succeeded) return Number(r.header.revision);
    if (!r.responses[0]?.response_range?.kvs?.length) throw notFound(`${key} not found`);
    throw conflict(OUT_OF_SEQUENCE);
  }

  /**
   * Several writes in one transaction (one Raft proposal and one fsync for all): each with a
   * `version` only at that version, each without only if the key does not exist. All or none:
   * 409 if any condition failed (the caller then writes them one by one). Returns the revision.
   */
  async batch(writes: Array<{ key: string; value: unknown; version?: number }>, fence?: Fence): Promise<number> {
    if (!writes.length) return 0;
    let r;
    try {
      const [first, ...rest] = writes;
      const cond = (w: typeof first) => [PREFIX + w!.key, w!.version === undefined ? 'Create' : 'Mod', '==', w!.version ?? 0] as const;
      let txn = this.fenced(this.client.if(...cond(first)), fence);
      for (const w of rest) txn = txn.and(...cond(w));
      r = await txn.then(...writes.map((w) => this.client.put(PREFIX + w.key).value(this.seal.encode(w.key, w.value)))).commit();
    } catch (err) {
      throw storeDown(`batch of ${writes.length} writes`, err);
    }
    if (!r.succeeded) throw conflict(OUT_OF_SEQUENCE);
    return Number(r.header.revision);
  }

  /** Writes unconditionally (state the node itself owns, such as its status). */
  async put<T>(key: string, value: T): Promise<number> {
    try {
      const r = await this.client
        .put(PREFIX + key)
        .value(this.seal.encode(key, value))
        .exec();
      return Number(r.header.revision);
    } catch (err) {
      throw storeDown(`put ${key}`, err);
    }
  }

  /** Deletes a key (if `version` is given, only at that version). Returns whether it existed. */
  async delete(key: string, version?: number, fence?: Fence): Promise<boolean> {
    try {
      const del = this.client.delete().key(PREFIX + key);
      if (!fence && version === undefined) return Number((await del.exec()).deleted) > 0;
      const cond =
        version === undefined
          ? this.client.if(PREFIX + fence!.key, 'Mod', '==', fence!.version)
          : this.fenced(this.client.if(PREFIX + key, 'Mod', '==', version), fence);
      const r = await cond.then(del).commit();
      if (!r.succeeded) throw conflict(OUT_OF_SEQUENCE);
      return true;
    } catch (err) {
      throw storeDown(`delete ${key}`, err);
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    try {
      await this.client
        .delete()
        .prefix(PREFIX + prefix)
        .exec();
    } catch (err) {
      throw storeDown(`delete ${prefix}*`, err);
    }
  }

  /** The highest mod revision of the keys under `prefix` (0: none). */
  lastRevision(prefix: string): Promise<number> {
    return lastRevision(this.client, prefix);
  }

  /** Calls `onChange(key)` for every put or delete under `prefix`; returns the stop function. */
  watch(prefix: string, onChange: (key: string, deleted: boolean) => void): Promise<() => Promise<void>> {
    return watchKeys(this.client, prefix, onChange);
  }

  /** A prefix's objects and the store revision they were read at (to watch from the next one). */
  async snapshot<T>(prefix: string): Promise<{ items: Stored<T>[]; revision: number }> {
    try {
      const r = await this.client
        .getAll()
        .prefix(PREFIX + prefix)
        .exec();
      return {
        items: r.kvs.map((kv) => this.stored<T>(kv)),
        revision: Number(r.header.revision),
      };
    } catch (err) {
      throw storeDown(`list ${prefix}`, err);
    }
  }

  /** Every change under `prefix` from `revision` on, values opened (store-watches.ts watchChanges). */
  watchFrom<T>(
    prefix: string,
    revision: number,
    onChange: (c: Change<T>) => void,
    onError: (err: Error) => void,
  ): Promise<() => Promise<void>> {
    return watchChanges(this.client, this.seal, prefix, revision, onChange, onError);
  }

  private stored<T>(kv: { key: Buffer; value: Buffer; mod_revision: string; create_revision: string }): Stored<T> {
    const key = kv.key.toString().slice(PREFIX.length);
    return { key, value: this.seal.decode<T>(key, kv.value), version: Number(kv.mod_revision), created: Number(kv.create_revision) };
  }

  /**
   * Rewrites every value not in the form `seal` now writes (autolock switched on or off), each at
   * its version (store-reseal.ts). `skip`: keys left as they are (leased ones). Returns how many.
   */
  reseal(skip: (key: string) => boolean): Promise<number> {
    return resealAll(this.client, this.seal, this, skip);
  }

  close(): void {
    this.leases.releaseAll();
    this.client.close();
  }
}

/** An etcd3 client over mutual TLS: a deadline on every unary call, no retries, leader required. */
async function connect(endpoints: string[], tls: StoreTls, dialTimeoutMs: number): Promise<Etcd3> {
  const { Etcd3: Client } = await import('etcd3');
  const client = new Client({
    hosts: endpoints,
    credentials: { rootCertificate: Buffer.from(tls.caPem), privateKey: Buffer.from(tls.keyPem), certChain: Buffer.from(tls.certPem) },
    dialTimeout: dialTimeoutMs,
    // A deadline on every unary call (never on watch or keep-alive streams).
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + CALL_DEADLINE_MS }),
    // No retries or circuit breaker in the client: a failure is answered at once (the callers
    // retry where it makes sense), and a healed member serves at once instead of after a pause.
    faultHandling: { host: () => passThrough as never, global: passThrough as never },
    // grpc's default of 4 MiB per answer is too small for a cluster's tasks (10 000 tasks are ~7 MiB).
    grpcOptions: { 'grpc.max_receive_message_length': 512 * 1024 * 1024 },
  });
  requireLeader(client);
  return client;
}
