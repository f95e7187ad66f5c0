// The network layer's state: the networks and the containers' network facts, in memory and written
// through to the store (records.ts) on every change; each network's address space (addresses.ts);
// lookups over them; and the network events. Every other network service reads and changes state
// only through here.
import { invalidParameter, notFound } from '../errors.ts';
import type { EventPublisher } from '../events/bus.ts';
import type { EngineDatabase } from '../store/database.ts';
import { AddressBook } from './ipam/addresses.ts';
import { NetworkStore, type ActiveEndpoint, type ContainerNet, type NetworkRecord } from './records.ts';

export class NetworkState {
  private readonly store: NetworkStore;
  private readonly nets = new Map<string, NetworkRecord>();
  private readonly cons = new Map<string, ContainerNet>();
  /** The address space of every bridge network (filled by addresses.add once its bridge is up). */
  readonly addresses = new AddressBook();
  /**
   * Change counters for cached views (docker ps): one for the networks, one per container's
   * network facts; every write below moves them (a change is always written through).
   */
  private networksGeneration = 0;
  private readonly containerGenerations = new Map<string, number>();
  private generationSeq = 0;

  constructor(
    db: EngineDatabase,
    private readonly events?: EventPublisher,
  ) {
    this.store = new NetworkStore(db);
  }

  /** Networks and container facts from the store (start-up). */
  load(): void {
    this.networksGeneration = ++this.generationSeq;
    for (const n of this.store.networks.list()) this.nets.set(n.Id, n);
    for (const c of this.store.containers.list()) this.cons.set(c.id, c);
  }

  // ---- networks ----------------------------------------------------------------------------------

  network(id: string): NetworkRecord | undefined {
    return this.nets.get(id);
  }

  networks(): NetworkRecord[] {
    return [...this.nets.values()];
  }

  saveNetwork(n: NetworkRecord): void {
    this.networksGeneration = ++this.generationSeq;
    this.nets.set(n.Id, n);
    this.store.networks.put(n.Id, n);
  }

  /** Forgets the network and its address space. */
  deleteNetwork(n: NetworkRecord): void {
    this.networksGeneration = ++this.generationSeq;
    this.nets.delete(n.Id);
    this.addresses.drop(n.Id);
    this.store.networks.delete(n.Id);
  }

  /** A cluster's swarm network: shown here, kept in the replicated store only (overlay/driver.ts). */
  putSwarmNetwork(n: NetworkRecord): void {
    this.networksGeneration = ++this.generationSeq;
    this.nets.set(n.Id, n);
  }

  dropSwarmNetwork(n: NetworkRecord): void {
    this.networksGeneration = ++this.generationSeq;
    this.nets.delete(n.Id);
    this.addresses.drop(n.Id);
  }

  /** Full ID, exact name, then unique ID prefix (dockerd's order). */
  findNetwork(ref: string): NetworkRecord {
    const all = this.networks();
    const byId = this.nets.get(ref);
    if (byId) return byId;
    const byName = all.filter((n) => n.Name === ref);
    if (byName.length === 1) return byName[0]!;
    if (byName.length > 1) throw invalidParameter(`network ${ref} is ambiguous (${byName.length} matches found on name)`);
    const byPrefix = ref ? all.filter((n) => n.Id.startsWith(ref)) : [];
    if (byPrefix.length === 1) return byPrefix[0]!;
    if (byPrefix.length > 1) throw invalidParameter(`network ${ref} is ambiguous (${byPrefix.length} matches found based on ID prefix)`);
    throw notFound(`network ${ref} not found`);
  }

  defaultBridge(): NetworkRecord | undefined {
    return this.networks().find((n) => n.x.defaultBridge);
  }

  hasIPv6Networks(): boolean {
    return this.networks().some((n) => n.x.subnet6);
  }

  // ---- containers --------------------------------------------------------------------------------

  container(id: string): ContainerNet | undefined {
    return this.cons.get(id);
  }

  containers(): ContainerNet[] {
    return [...this.cons.values()];
  }

  /** Changes whenever the networks or this container's network facts were written. */
  viewGeneration(id: string): string {
    return `${this.networksGeneration}.${this.containerGenerations.get(id) ?? 0}`;
  }

  persist(c: ContainerNet): void {
    this.containerGenerations.set(c.id, ++this.generationSeq);
    this.cons.set(c.id, c);
    this.store.containers.put(c.id, c);
  }

  forgetContainer(id: string): void {
    this.containerGenerations.delete(id); // no facts: the view is computed from the record alone again
    this.cons.delete(id);
    this.store.containers.delete(id);
  }

  /** The active endpoints on a network, with their containers. */
  endpointsOn(netId: string): Array<{ c: ContainerNet; ep: ActiveEndpoint }> {
    const out: Array<{ c: ContainerNet; ep: ActiveEndpoint }> = [];
    for (const c of this.cons.values()) for (const ep of c.sandbox?.endpoints ?? []) if (ep.networkId === netId) out.push({ c, ep });
    return out;
  }

  /** Some container is configured for this user network (running or not). */
  configuredOn(netId: string): boolean {
    for (const c of this.cons.values())
      if (c.attachments.some((a) => a.networkId === netId) && !this.nets.get(netId)?.x.predefined) return true;
    return false;
  }

  // ---- events ------------------------------------------------------------------------------------

  /** network create/destroy/connect/disconnect. */
  event(n: NetworkRecord, action: string, container?: string, scope?: 'swarm'): void {
    this.events?.publish({
      Type: 'network',
      Action: action,
      Actor: { ID: n.Id, Attributes: { name: n.Name, type: n.Driver, ...(container ? { container } : {}) } },
      ...(scope ? { scope } : {}),
    });
  }
}
