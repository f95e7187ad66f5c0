// The container records: the in-memory copies of the store's, looked up by ID, unique ID prefix or
// name, written through to the store, announced on the events stream; the names reserved by creates
// still under way; and the two gates a daemon restart puts on each container while it reconciles it
// (run/restore.ts), which requests on that container wait for (ready, known).
import { invalidParameter, notFound } from '../../errors.ts';
import { containerActor } from '../../events/actors.ts';
import type { ContainerServiceDeps } from './deps.ts';
import type { ContainerRecord } from './record.ts';
import { recordText } from './record-text.ts';

export class ContainerRecords {
  /** Every container by ID (a container being removed leaves the store before this map). */
  readonly byId = new Map<string, ContainerRecord>();
  /** Names taken by creates that have not stored their record yet. */
  readonly reservedNames = new Map<string, string>();
  /** Containers still being reconciled after a daemon restart (restore.ts); requests on them wait. */
  readonly reconciling = new Map<string, Promise<void>>();
  /**
   * Containers whose state after a daemon restart is not known yet (restore.ts: until containerd
   * has been asked); inspect and list wait for these only. A subset of `reconciling`: a container
   * being stopped at start-up is known (running, with its pid) but still reconciling.
   */
  readonly unknownState = new Map<string, Promise<void>>();

  constructor(private readonly d: Pick<ContainerServiceDeps, 'store' | 'events'>) {
    for (const r of d.store.list()) this.byId.set(r.Id, structuredClone(r) as ContainerRecord);
  }

  /**
   * Full ID, unique ID prefix, or name with or without the leading slash. Names and prefixes go
   * through the store's indexes (the name column, a range of the primary key), not a scan of every
   * record: `docker rm` of 2 000 containers by short ID or name was quadratic. A miss is checked by
   * a scan (a container being removed has left the store but not yet the map).
   */
  find(ref: string): ContainerRecord {
    const exact = this.byId.get(ref);
    if (exact) return exact;
    const name = ref.startsWith('/') ? ref : `/${ref}`;
    const namedId = this.d.store.idByName(name);
    const byName = namedId === undefined ? undefined : this.byId.get(namedId);
    if (byName?.Name === name) return byName;
    const hex = /^[a-f0-9]+$/.test(ref);
    if (hex) {
      const hits = this.d.store.idsByPrefix(ref).flatMap((id) => this.byId.get(id) ?? []);
      if (hits.length === 1) return hits[0]!;
      if (hits.length > 1) throw invalidParameter(`multiple IDs found with provided prefix: ${ref}`);
    }
    for (const r of this.byId.values()) if (r.Name === name) return r;
    if (hex) {
      const hits = [...this.byId.values()].filter((r) => r.Id.startsWith(ref));
      if (hits.length === 1) return hits[0]!;
      if (hits.length > 1) throw invalidParameter(`multiple IDs found with provided prefix: ${ref}`);
    }
    throw notFound(`No such container: ${ref}`);
  }

  /** The ID of the container holding (or about to hold: a create in progress) a full name such as '/web'. */
  nameHolder(name: string): string | undefined {
    const reserved = this.reservedNames.get(name);
    if (reserved) return reserved;
    const stored = this.d.store.idByName(name);
    return stored !== undefined && this.byId.get(stored)?.Name === name ? stored : undefined;
  }

  /**
   * find(), once the container's reconciliation after a daemon restart is over (at once otherwise):
   * what a request on one container uses, so it sees the container's real state.
   */
  async ready(ref: string): Promise<ContainerRecord> {
    return this.after(this.reconciling, ref);
  }

  /**
   * find(), once the container's state after a daemon restart is known (true to the host): what
   * inspect uses. The stop at start-up or a restart by its policy may still follow; the state
   * read then is the real one of that moment.
   */
  async known(ref: string): Promise<ContainerRecord> {
    return this.after(this.unknownState, ref);
  }

  private async after(gates: Map<string, Promise<void>>, ref: string): Promise<ContainerRecord> {
    const rec = this.find(ref);
    const pending = gates.get(rec.Id);
    if (!pending) return rec;
    await pending;
    return this.find(rec.Id); // it may have been removed meanwhile (AutoRemove): 404
  }

  /** Writes the record through to the store. */
  persist(rec: ContainerRecord): void {
    this.d.store.put(rec, recordText(rec));
  }

  /** A container event on the events stream (none without one). */
  event(rec: ContainerRecord, action: string, extra: Record<string, string> = {}): void {
    this.d.events?.publish({ Type: 'container', Action: action, Actor: containerActor(rec, extra) });
  }
}
