// A manager's side of sealing records at rest (record-seal.ts): the mode follows the cluster record
// (autolock on: sealed; off: clear) and the data key comes from it, opened with the unlock key this
// manager holds (kept once known: unlock-key rotation re-seals the same data key, as swarmkit keeps
// its raft DEK). When the mode changes, every record is rewritten in the new form: awaited by the
// `swarm update` that switched it, and run by each other manager as it sees the change (so a value
// one of them wrote in the old form just before is rewritten too).
import type { Logger } from '../../util/log.ts';
import { openClusterKeys } from '../ca/autolock.ts';
import type { ClusterStore } from './store.ts';
import type { ClusterRecord } from '../ca/swarm-object.ts';
import { ORCHESTRATOR_LOCK } from '../manager/orchestrator-loop.ts';

/**
 * Leased keys are never rewritten (a rewrite would detach the lease: the orchestrator lock would
 * then outlive its holder). Heartbeats hold only a time; the lock only a manager's ID.
 */
const leased = (key: string): boolean => key.startsWith('heartbeats/') || key === ORCHESTRATOR_LOCK;

export class RecordMode {
  private sweeping: Promise<void> | null = null;
  private again = false;
  /** A sweep failed (e.g. no quorum): tried again at the next `apply`. */
  private pending = false;

  constructor(
    private readonly store: ClusterStore,
    private readonly kek: () => string | null,
    private readonly log: Logger,
    /** Fetches the unlock key of `kekId` from another manager (a manager that just joined). */
    private readonly holdKey?: (kekId: string) => Promise<void>,
  ) {}

  /** Sets the mode from the cluster record; a changed mode (or a failed sweep) sweeps, awaited. */
  async apply(rec: ClusterRecord, opts: { fetchKey?: boolean } = {}): Promise<void> {
    if (opts.fetchKey && rec.autolock && !this.opens(rec)) await this.holdKey?.(rec.autolock.kekId);
    let key: string | null = null;
    try {
      key = openClusterKeys(rec, this.kek()).dataKey ?? null;
    } catch {
      // Sealed with a key this manager does not hold yet: the one it knew (if any) stays.
    }
    const changed = this.store.seal.set(rec.autolock !== undefined, key);
    // A sweep already under way (started by the watch of the cluster record) is waited for too: the
    // `swarm update` that switched the mode answers once the records are rewritten.
    if (changed || this.pending) await this.sweep();
    else if (this.sweeping) await this.sweeping;
  }

  private opens(rec: ClusterRecord): boolean {
    try {
      openClusterKeys(rec, this.kek());
      return true;
    } catch {
      // a wrong key fails to decrypt: that is the answer
      return false;
    }
  }

  /** Rewrites the records not in the current form; one sweep at a time, again if asked meanwhile. */
  sweep(): Promise<void> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      do {
        this.again = false;
        const t0 = Date.now();
        try {
          const n = await this.store.reseal(leased);
          this.pending = false;
          this.log.info(`autolock: ${n} records rewritten ${this.store.seal.sealed ? 'sealed' : 'in the clear'}`, {
            ms: Date.now() - t0,
          });
        } catch (err) {
          this.pending = true;
          this.log.warn('autolock: rewriting the records failed; trying again at the next heartbeat', { error: (err as Error).message });
        }
      } while (this.again);
    })().finally(() => (this.sweeping = null));
    return this.sweeping;
  }
}
