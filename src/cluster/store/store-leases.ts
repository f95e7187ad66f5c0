// Keys bound to leases this store client keeps: a node's heartbeat key (refreshed without a write
// while it stays bound to this client's lease) and the orchestrator's lock (etcd's election recipe:
// held while its lease lives, its mod revision fencing the holder's writes).
import type { Etcd3, Lease } from 'etcd3';
import type { RecordSeal } from '../ca/record-seal.ts';
import { PREFIX, storeDown } from './store-calls.ts';

export class StoreLeases {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly client: Etcd3,
    /** How values are written (clear, or sealed under autolock). */
    private readonly seal: RecordSeal,
  ) {}

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

  /** The client closes: its leases stop being kept (their keys go when they run out). */
  releaseAll(): void {
    for (const l of this.leases.values()) l.release();
    this.leases.clear();
  }
}
