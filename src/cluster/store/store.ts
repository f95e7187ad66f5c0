// The typed client of the replicated store (etcd, through npm etcd3 over grpc-js with mutual TLS).
// Objects are JSON values under one prefix; an object's API `Version.Index` is its etcd
// mod_revision, so an update carrying a stale version fails in the same transaction that would
// have written it (compare-and-swap), and creation refuses a key that exists. Also: leases for
// heartbeats, prefix watches and the member list of the etcd cluster. Every value goes through
// `seal` (record-seal.ts): sealed with the data key while the cluster is autolocked.
// etcd3 is loaded on first use only: a node outside a cluster never pays for it.
import type { Etcd3, Lease, Watcher } from 'etcd3';
import { conflict, EngineError, notFound, unavailable } from '../../errors.ts';
import { RecordSeal } from '../ca/record-seal.ts';

/**
 * A membership call's own deadline: a member removing itself may stop before it answers, and a
 * call without one would wait for good (a `swarm leave --force` once hung 120 s in a loaded run).
 */
const MEMBER_CALL_MS = 10_000;

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

export interface StoreMember {
  id: string;
  name: string;
  peerUrls: string[];
  clientUrls: string[];
}

/**
 * A condition added to a write: it succeeds only while `key` is still at mod revision `version`
 * (the orchestrator's lock, so a manager that lost it writes nothing more).
 */
export interface Fence {
  key: string;
  version: number;
}

/** The message swarmkit gives an update against a stale version. */
export const OUT_OF_SEQUENCE = 'update out of sequence';

/** swarmkit's answer (as dockerd shows it) when the managers have no quorum, so no leader. */
export const NO_LEADER =
  "rpc error: code = Unknown desc = The swarm does not have a leader. It's possible that too few managers are online. Make sure more than half of the managers are online.";

/** How long one store call may take: a member cut off from its peers must not hang a request. */
const CALL_DEADLINE_MS = 6_000;

/** etcd's answers when its member has no leader (or lost it while the call waited). */
const NO_LEADER_RE = /no leader|request timed out|leader changed|Deadline exceeded|DEADLINE_EXCEEDED|not have a leader/i;

const PREFIX = '/engine/';

/** Maps an etcd/grpc failure to the API's 503 with a word of what failed. */
function storeDown(what: string, err: unknown): Error {
  if (err instanceof EngineError) return err;
  if (NO_LEADER_RE.test((err as Error)?.message ?? String(err))) return unavailable(NO_LEADER, err);
  return unavailable(`cluster store: ${what} failed: ${(err as Error)?.message ?? String(err)}`, err);
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
  private readonly leases = new Map<string, Lease>();
  /** How values are written (clear, or sealed under autolock) and read. */
  readonly seal = new RecordSeal();

  private constructor(private readonly client: Etcd3) {}

  /** Starts loading the client module (~0.2 s) while etcd starts, so `open` finds it loaded. */
  static preload(): void {
    import('etcd3').catch(() => undefined); // a failure shows in `open`
  }

  static async open(endpoints: string[], tls: StoreTls, opts: { dialTimeoutMs?: number } = {}): Promise<ClusterStore> {
    const { Etcd3: Client } = await import('etcd3');
    const client = new Client({
      hosts: endpoints,
      credentials: { rootCertificate: Buffer.from(tls.caPem), privateKey: Buffer.from(tls.keyPem), certChain: Buffer.from(tls.certPem) },
      dialTimeout: opts.dialTimeoutMs ?? 10_000,
      // A deadline on every unary call (never on watch or keep-alive streams).
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + CALL_DEADLINE_MS }),
      // No retries or circuit breaker in the client: a failure is answered at once (the callers
      // retry where it makes sense), and a healed member serves at once instead of after a pause.
      faultHandling: { host: () => passThrough as never, global: passThrough as never },
      // grpc's default of 4 MiB per answer is too small for a cluster's tasks (10 000 tasks are ~7 MiB).
      grpcOptions: { 'grpc.max_receive_message_length': 512 * 1024 * 1024 },
    });
    requireLeader(client);
    return new ClusterStore(client);
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
    try {
      const r = await this.client
        .getAll()
        .prefix(PREFIX + prefix)
        .exec();
      return r.kvs.map((kv) => this.stored<T>(kv));
    } catch (err) {
      throw storeDown(`list ${prefix}`, err);
    }
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
      if (fence) {
        const cond =
          version === undefined
            ? this.client.if(PREFIX + fence.key, 'Mod', '==', fence.version)
            : this.fenced(this.client.if(PREFIX + key, 'Mod', '==', version), fence);
        const r = await cond.then(this.client.delete().key(PREFIX + key)).commit();
        if (!r.succeeded) throw conflict(OUT_OF_SEQUENCE);
        return true;
      }
      if (version === undefined)
        return (
          Number(
            (
              await this.client
                .delete()
                .key(PREFIX + key)
                .exec()
            ).deleted,
          ) > 0
        );
      const r = await this.client
        .if(PREFIX + key, 'Mod', '==', version)
        .then(this.client.delete().key(PREFIX + key))
        .commit();
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

  /**
   * Puts `value` at `key` bound to a lease of `ttlSeconds` that this call refreshes: the key
   * disappears `ttlSeconds` after the last call (a node's heartbeat). A refresh of a key still bound
   * to this client's lease is a lease keep-alive and a read, no write: no Raft proposal, no fsync on
   * every member, no revision, no watch event (the value is not rewritten, so it stays the first
   * call's). Only a key bound to another lease (another manager served the node meanwhile) or gone
   * is written again.
   */
  async putLeased<T>(key: string, value: T, ttlSeconds: number): Promise<void> {
    const existing = this.leases.get(key);
    if (existing) {
      try {
        const [, id, cur] = await Promise.all([existing.keepaliveOnce(), existing.grant(), this.client.get(PREFIX + key).exec()]);
        if (cur.kvs[0]?.lease === id) return;
        await existing.put(PREFIX + key).value(this.seal.encode(key, value));
        return;
      } catch {
        // The lease expired (the node was silent too long) or was revoked: grant a new one below.
        this.leases.delete(key);
        existing.release();
      }
    }
    const lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
    lease.on('lost', () => this.leases.get(key) === lease && this.leases.delete(key));
    try {
      await lease.put(PREFIX + key).value(this.seal.encode(key, value));
    } catch (err) {
      lease.release();
      throw storeDown(`put ${key} with a lease`, err);
    }
    this.leases.set(key, lease);
  }

  /**
   * Holds `key` for this client under a lease of `ttlSeconds` that each call refreshes (a lock, as
   * etcd's election recipe): the key's mod revision while this client holds it (a fence for its
   * writes), null while another client does. Taken only if `take` and the key is free. A held lock
   * costs a keep-alive and a read per call, no write.
   */
  async holdLock(key: string, ttlSeconds: number, value: unknown, take: boolean): Promise<number | null> {
    let lease = this.leases.get(key);
    try {
      if (lease) await lease.keepaliveOnce();
      const cur = (await this.client.get(PREFIX + key).exec()).kvs[0];
      if (cur && lease && cur.lease === (await lease.grant())) return Number(cur.mod_revision);
      if (cur || !take) return null;
      if (!lease) {
        lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
        const l = lease;
        l.on('lost', () => this.leases.get(key) === l && this.leases.delete(key));
        this.leases.set(key, l);
      }
      const r = await this.client
        .if(PREFIX + key, 'Create', '==', 0)
        .then(
          this.client
            .put(PREFIX + key)
            .value(JSON.stringify(value))
            .lease(await lease.grant()),
        )
        .commit();
      return r.succeeded ? Number(r.header.revision) : null;
    } catch (err) {
      // Our lease expired (or the store is away): a new one next time.
      if (lease && this.leases.get(key) === lease) {
        this.leases.delete(key);
        lease.release();
      }
      throw storeDown(`lock ${key}`, err);
    }
  }

  /** Gives up a lock of holdLock (its key goes with the lease). */
  async releaseLock(key: string): Promise<void> {
    const lease = this.leases.get(key);
    if (!lease) return;
    this.leases.delete(key);
    await lease.revoke().catch(() => lease.release());
  }

  /** The highest mod revision of the keys under `prefix` (0: none). */
  async lastRevision(prefix: string): Promise<number> {
    try {
      const kv = (
        await this.client
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

  /** Calls `onChange(key)` for every put or delete under `prefix`; returns the stop function. */
  async watch(prefix: string, onChange: (key: string, deleted: boolean) => void): Promise<() => Promise<void>> {
    let w: Watcher;
    try {
      w = await this.client
        .watch()
        .prefix(PREFIX + prefix)
        .create();
    } catch (err) {
      throw storeDown(`watch ${prefix}`, err);
    }
    w.on('put', (kv) => onChange(kv.key.toString().slice(PREFIX.length), false));
    w.on('delete', (kv) => onChange(kv.key.toString().slice(PREFIX.length), true));
    return () => w.cancel();
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

  /**
   * Every change under `prefix` from `revision` on, in order, with the value (none for a delete) and
   * the revision of the change; `onError` when the watch ends for good (e.g. the revision was
   * compacted away). etcd3 resumes a watch that lost its connection from where it was.
   */
  async watchFrom<T>(
    prefix: string,
    revision: number,
    onChange: (c: { key: string; value?: T; version: number; created: number }) => void,
    onError: (err: Error) => void,
  ): Promise<() => Promise<void>> {
    let w: Watcher;
    try {
      w = await this.client
        .watch()
        .prefix(PREFIX + prefix)
        .startRevision(String(revision))
        .create();
    } catch (err) {
      throw storeDown(`watch ${prefix}`, err);
    }
    const key = (kv: { key: Buffer }) => kv.key.toString().slice(PREFIX.length);
    w.on('put', (kv) => {
      let value: T;
      try {
        value = this.seal.decode<T>(key(kv), kv.value);
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

  private stored<T>(kv: { key: Buffer; value: Buffer; mod_revision: string; create_revision: string }): Stored<T> {
    const key = kv.key.toString().slice(PREFIX.length);
    return { key, value: this.seal.decode<T>(key, kv.value), version: Number(kv.mod_revision), created: Number(kv.create_revision) };
  }

  /**
   * Rewrites every value not in the form `seal` now writes (autolock switched on or off), each at
   * its version, in transactions of a few dozen; a value changed meanwhile is read again. `skip`:
   * keys left as they are (leased ones, which a rewrite would detach from their lease). Returns how
   * many values were rewritten.
   */
  async reseal(skip: (key: string) => boolean): Promise<number> {
    let kvs;
    try {
      kvs = (await this.client.getAll().prefix(PREFIX).exec()).kvs;
    } catch (err) {
      throw storeDown('reseal', err);
    }
    const todo = kvs
      .map((kv) => ({ key: kv.key.toString().slice(PREFIX.length), raw: kv.value, version: Number(kv.mod_revision) }))
      .filter((k) => !skip(k.key) && !this.seal.inMode(k.key, k.raw));
    let done = 0;
    for (let i = 0; i < todo.length; i += 64) {
      const chunk = todo.slice(i, i + 64);
      try {
        await this.batch(chunk.map((k) => ({ key: k.key, value: this.seal.decode(k.key, k.raw), version: k.version })));
        done += chunk.length;
        continue;
      } catch (err) {
        if ((err as EngineError).code !== 'CONFLICT') throw err;
      }
      for (const k of chunk) done += (await this.resealOne(k.key)) ? 1 : 0;
    }
    return done;
  }

  /** One value read again and rewritten in the current form (false: gone, or already in it). */
  private async resealOne(key: string): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      let kv;
      try {
        kv = (await this.client.get(PREFIX + key).exec()).kvs[0];
      } catch (err) {
        throw storeDown(`get ${key}`, err);
      }
      if (!kv || this.seal.inMode(key, kv.value)) return false;
      try {
        await this.update(key, this.seal.decode(key, kv.value), Number(kv.mod_revision));
        return true;
      } catch (err) {
        const code = (err as EngineError).code;
        if (code !== 'CONFLICT' && code !== 'NOT_FOUND') throw err;
      }
    }
    return false;
  }

  async members(): Promise<StoreMember[]> {
    try {
      const r = await this.client.cluster.memberList({}, { deadline: Date.now() + MEMBER_CALL_MS });
      return r.members.map((m) => ({ id: String(m.ID), name: m.name, peerUrls: m.peerURLs, clientUrls: m.clientURLs }));
    } catch (err) {
      throw storeDown('member list', err);
    }
  }

  /**
   * Adds a member by its peer URL, as a learner (no vote, so a member that never starts costs the
   * cluster no quorum); returns the member list after the change (the new one unnamed).
   */
  async addMember(peerUrl: string): Promise<{ id: string; members: StoreMember[] }> {
    // As for removeMember: right after another member joined, etcd refuses ("unhealthy cluster")
    // until that one has been connected for a few seconds.
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const r = await this.client.cluster.memberAdd({ peerURLs: [peerUrl], isLearner: true });
        return {
          id: String(r.member.ID),
          members: r.members.map((m) => ({ id: String(m.ID), name: m.name, peerUrls: m.peerURLs, clientUrls: m.clientURLs })),
        };
      } catch (err) {
        const unhealthy = /unhealthy cluster|circuit breaker is open/i.test(err instanceof Error ? err.message : String(err));
        if (!unhealthy || Date.now() > deadline) throw storeDown(`adding member ${peerUrl}`, err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Makes a learner a voting member; etcd refuses until the learner has caught up. */
  async promoteMember(id: string): Promise<void> {
    try {
      await this.client.cluster.memberPromote({ ID: id });
    } catch (err) {
      throw storeDown(`promoting member ${id}`, err);
    }
  }

  async removeMember(id: string): Promise<void> {
    // etcd refuses a reconfiguration ("unhealthy cluster") until every member has been connected for
    // a few seconds (its strict reconfig check), as happens right after a member restarts: retry (the
    // etcd3 client opens its circuit breaker after a few such failures; that passes as well).
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await this.client.cluster.memberRemove({ ID: id }, { deadline: Date.now() + MEMBER_CALL_MS });
        return;
      } catch (err) {
        const unhealthy = /unhealthy cluster|circuit breaker is open/i.test(err instanceof Error ? err.message : String(err));
        if (!unhealthy || Date.now() > deadline) throw storeDown(`removing member ${id}`, err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** The ID of the etcd member that leads, and the member this client talks to. */
  async leader(): Promise<{ leader: string; member: string }> {
    try {
      const s = await this.client.maintenance.status({});
      return { leader: String(s.leader), member: String(s.header.member_id) };
    } catch (err) {
      throw storeDown('status', err);
    }
  }

  close(): void {
    for (const l of this.leases.values()) l.release();
    this.leases.clear();
    this.client.close();
  }
}
