// Overlay networks in the replicated store (a manager's side of network/overlay/contract.ts): the
// network records and their allocations (network-records.ts); the endpoints each node publishes;
// workers' requests through the manager endpoint; and a watch that pushes every change to this
// node's overlay driver (OverlayHost).
import { createHash } from 'node:crypto';
import { invalidParameter, notFound } from '../../errors.ts';
import type { OverlayControl, OverlayEndpoint, OverlayHost, OverlayNode, SwarmNetwork } from '../../network/overlay/contract.ts';
import { parseIPv4 } from '../../network/ipam/ip4.ts';
import type { NetworkCreateBody } from '../../types/networks.ts';
import type { Logger } from '../../util/log.ts';
import type { ClusterStore } from '../store/store.ts';
import type { ClusterRecord } from '../ca/swarm-object.ts';
import { claimNetworkAddress, epPrefix, ipPrefix, NetworkRecords } from './network-records.ts';

/** What a worker's poll gets (`digest` filled on first use). */
interface OverlayView {
  networks: SwarmNetwork[];
  endpoints: OverlayEndpoint[];
  digest?: string;
}

export interface ClusterNetworksDeps {
  store: ClusterStore;
  log: Logger;
  host: OverlayHost | undefined;
  /** This node's ID and data-path address. */
  nodeId: string;
  vtep: string;
  cluster: () => Promise<ClusterRecord>;
}

export class ClusterNetworks implements OverlayControl {
  private stopWatches: Array<() => Promise<void>> = [];
  private pending: NodeJS.Timeout | null = null;
  private syncing: Promise<void> = Promise.resolve();
  private port = 4789;
  /** After the first push, changes are events (not the networks found at start). */
  private pushed = false;
  /**
   * The networks and endpoints as the last sync read them, kept while no change has been seen since
   * (a watch event or a write through this manager drops it): workers' polls (every 2 s each) are
   * answered from it instead of two reads of the store each, and with only its digest when the
   * worker already has it.
   */
  private view: OverlayView | undefined;
  private gen = 0;
  /** Network records: create and remove with their name, VNI and subnet claims. */
  private readonly records: NetworkRecords;

  constructor(private readonly d: ClusterNetworksDeps) {
    this.records = new NetworkRecords(d);
  }

  /** Watches networks and endpoints and pushes the current ones to this node. */
  async start(): Promise<void> {
    this.port = (await this.d.cluster()).DataPathPort || 4789;
    const kick = () => {
      this.stale();
      this.schedule();
    };
    this.stopWatches.push(
      await this.d.store.watch('networks/', kick),
      await this.d.store.watch('endpoints/', kick),
      // A node removed from the cluster (node rm): its endpoints and addresses go.
      await this.d.store.watch('nodes/', (_key, deleted) => deleted && kick()),
    );
    await this.reconcile(this.d.nodeId, this.d.host?.localEndpoints() ?? []).catch((err: Error) =>
      this.d.log.warn('dropping stale overlay endpoints failed', { error: err.message }),
    );
    await this.sync();
  }

  /**
   * Endpoints a node published that it no longer has (it restarted, or its containers went while
   * the cluster was out of reach) are dropped with their addresses.
   */
  async reconcile(nodeId: string, keep: string[]): Promise<void> {
    const kept = new Set(keep);
    for (const s of await this.d.store.list<OverlayEndpoint>('endpoints/')) {
      const e = s.value;
      if (e.nodeId === nodeId && !kept.has(e.endpointId)) await this.release(e.networkId, e.endpointId, e.ip);
    }
  }

  /** A worker's overlay request, through the manager endpoint (workers hold no store). */
  async serveRemote(nodeId: string, op: string, body: unknown): Promise<unknown> {
    const b = (body ?? {}) as Record<string, unknown>;
    const str = (k: string) => {
      if (typeof b[k] !== 'string') throw invalidParameter(`invalid overlay request: ${k} must be a string`);
      return b[k];
    };
    if (op !== 'state') {
      try {
        return await this.serveWrite(nodeId, op, b, str);
      } finally {
        this.stale(); // the worker's next poll sees its own write
      }
    }
    let v = this.view;
    if (!v) {
      const [nets, eps] = await Promise.all([
        this.d.store.list<SwarmNetwork>('networks/'),
        this.d.store.list<OverlayEndpoint>('endpoints/'),
      ]);
      v = { networks: nets.map((s) => s.value), endpoints: eps.map((s) => s.value) };
    }
    v.digest ??= createHash('sha1')
      .update(JSON.stringify([this.port, v.networks, v.endpoints]))
      .digest('hex');
    if (b.known === v.digest) return { port: this.port, digest: v.digest, same: true };
    return { port: this.port, networks: v.networks, endpoints: v.endpoints, digest: v.digest };
  }

  private stale(): void {
    this.gen++;
    this.view = undefined;
  }

  private async serveWrite(nodeId: string, op: string, b: Record<string, unknown>, str: (k: string) => string): Promise<unknown> {
    switch (op) {
      case 'claim':
        return { ip: await this.claimAddress(str('networkId'), typeof b.want === 'string' ? b.want : undefined) };
      case 'publish': {
        const ep = b as unknown as OverlayEndpoint;
        for (const k of ['networkId', 'endpointId', 'containerId', 'name', 'ip', 'mac', 'vtep']) str(k);
        await this.put({ ...ep, aliases: Array.isArray(ep.aliases) ? ep.aliases.map(String) : [], nodeId });
        return {};
      }
      case 'release':
        await this.release(str('networkId'), str('endpointId'), str('ip'));
        return {};
      case 'reconcile':
        await this.reconcile(nodeId, Array.isArray(b.keep) ? b.keep.map(String) : []);
        return {};
      default:
        throw notFound(`no such overlay request ${op}`);
    }
  }

  async stop(leaving: boolean): Promise<void> {
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
    await Promise.all(this.stopWatches.map((s) => s().catch(() => undefined))); // A watch whose store connection is already gone has nothing left to cancel.
    this.stopWatches = [];
    if (leaving) await this.d.host?.setNetworks(null, []);
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      void this.sync();
    }, 20);
  }

  /** Brings this node's networking up to date with the store now (not at the next watch event). */
  refresh(): Promise<void> {
    return this.sync();
  }

  private sync(): Promise<void> {
    const host = this.d.host;
    if (!host) return Promise.resolve();
    const run = this.syncing.then(async () => {
      const gen = this.gen;
      try {
        const [nets, all, nodes] = await Promise.all([
          this.d.store.list<SwarmNetwork>('networks/'),
          this.d.store.list<OverlayEndpoint>('endpoints/'),
          this.d.store.list('nodes/'),
        ]);
        const known = new Set(nodes.map((s) => s.key.slice('nodes/'.length)));
        // Service VIPs (service-vips.ts) belong to no node.
        const eps = all.filter((s) => s.value.vip || known.has(s.value.nodeId));
        for (const s of all)
          if (!s.value.vip && !known.has(s.value.nodeId))
            await this.release(s.value.networkId, s.value.endpointId, s.value.ip).catch((err: Error) =>
              // The next sync (any store change) tries again; the endpoint is left out of the plan meanwhile.
              this.d.log.debug("releasing a removed node's overlay endpoint failed", { error: err.message }),
            );
        // Kept for workers' polls unless something changed while this sync read.
        if (gen === this.gen) this.view = { networks: nets.map((s) => s.value), endpoints: eps.map((s) => s.value) };
        const node: OverlayNode = { nodeId: this.d.nodeId, vtep: this.d.vtep, port: this.port };
        await host.setNetworks(
          node,
          nets.map((s) => s.value),
          { events: this.pushed },
        );
        this.pushed = true;
        await host.setEndpoints(eps.map((s) => s.value));
      } catch (err) {
        this.d.log.warn('syncing overlay networks from the store failed', { error: (err as Error).message });
      }
    });
    this.syncing = run;
    return run;
  }

  // ---- OverlayControl ----------------------------------------------------------------------------

  create(body: NetworkCreateBody): Promise<{ Id: string }> {
    return this.records.create(body);
  }

  remove(networkId: string): Promise<void> {
    return this.records.remove(networkId);
  }

  claimAddress(networkId: string, want?: string): Promise<string> {
    return claimNetworkAddress(this.d.store, networkId, want);
  }

  async publish(ep: Omit<OverlayEndpoint, 'nodeId' | 'vtep'>): Promise<void> {
    await this.put({ ...ep, nodeId: this.d.nodeId, vtep: this.d.vtep });
  }

  private async put(ep: OverlayEndpoint): Promise<void> {
    await this.d.store.put(`${epPrefix(ep.networkId)}${ep.endpointId}`, ep);
  }

  async release(networkId: string, endpointId: string, ip: string): Promise<void> {
    await this.d.store.delete(`${epPrefix(networkId)}${endpointId}`);
    parseIPv4(ip);
    await this.d.store.delete(ipPrefix(networkId) + ip);
  }
}
