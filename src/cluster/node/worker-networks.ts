// Overlay networks on a worker, which holds no store: the cluster's networks and endpoints fetched
// from a manager (at start, every 2 s — an answer of a digest only while nothing changed — and at
// once after a local change), and the worker's own
// endpoints claimed, published and released through the manager endpoint (POST /overlay/<op>,
// mutual TLS), the manager doing the store's transactions (cluster/networks.ts serveRemote).
import { unavailable } from '../../errors.ts';
import type { OverlayControl, OverlayEndpoint, OverlayHost, SwarmNetwork } from '../../network/overlay/contract.ts';
import type { NetworkCreateBody } from '../../types/networks.ts';
import type { Logger } from '../../util/log.ts';
import { callManager } from './endpoint.ts';
import { firstManager } from './worker.ts';
import type { LocalClusterState, NodeCerts } from './local-state.ts';

const POLL_MS = 2000;
export const WORKER_TEXT =
  "This node is not a swarm manager. Worker nodes can't be used to view or modify cluster state. Please run this command on a manager node or promote the current node to a manager.";

export class WorkerNetworks implements OverlayControl {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private polling: Promise<void> = Promise.resolve();
  /** The digest of the state last applied (the manager's answer to send back). */
  private known: string | undefined;

  constructor(
    private readonly state: LocalClusterState,
    private readonly certs: NodeCerts,
    private readonly host: OverlayHost | undefined,
    private readonly vtep: string,
    private readonly log: Logger,
  ) {}

  /** Any manager that answers (the list the heartbeats keep current). */
  private async call<T>(op: string, body: unknown): Promise<T> {
    let last: Error = unavailable('no manager known');
    const ms = this.state.managers;
    const first = firstManager(this.state.nodeId, ms.length);
    for (const m of [...ms.slice(first), ...ms.slice(0, first)]) {
      try {
        return await callManager<T>(m.Addr, 'POST', `/overlay/${op}`, body, {
          caPem: this.certs.caPem,
          certs: this.certs,
          timeoutMs: 10_000,
        });
      } catch (err) {
        last = err as Error;
        if ((err as { code?: string }).code !== 'UNAVAILABLE') throw err; // the manager's own answer
      }
    }
    throw last;
  }

  async start(): Promise<void> {
    await this.call('reconcile', { keep: this.host?.localEndpoints() ?? [] }).catch((err: Error) =>
      this.log.warn('dropping stale overlay endpoints failed', { error: err.message }),
    );
    await this.poll();
    this.schedule();
  }

  async stop(leaving: boolean): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.polling;
    if (leaving) await this.host?.setNetworks(null, []);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedule()), POLL_MS);
    this.timer.unref();
  }

  private poll(): Promise<void> {
    const host = this.host;
    if (!host || this.stopped) return Promise.resolve();
    const run = this.polling.then(async () => {
      try {
        // With the digest of what it has, the manager answers only `same` while nothing changed.
        const s = await this.call<{
          port: number;
          networks?: SwarmNetwork[];
          endpoints?: OverlayEndpoint[];
          digest?: string;
          same?: boolean;
        }>('state', this.known ? { known: this.known } : {});
        if (this.stopped || s.same) return;
        await host.setNetworks({ nodeId: this.state.nodeId, vtep: this.vtep, port: s.port }, s.networks ?? []);
        await host.setEndpoints(s.endpoints ?? []);
        this.known = s.digest;
      } catch (err) {
        this.log.debug('fetching overlay networks from a manager failed', { error: (err as Error).message });
      }
    });
    this.polling = run;
    return run;
  }

  // ---- OverlayControl ----------------------------------------------------------------------------

  async create(_body: NetworkCreateBody): Promise<{ Id: string }> {
    throw unavailable(WORKER_TEXT);
  }

  async remove(_networkId: string): Promise<void> {
    throw unavailable(WORKER_TEXT);
  }

  async claimAddress(networkId: string, want?: string): Promise<string> {
    return (await this.call<{ ip: string }>('claim', { networkId, ...(want ? { want } : {}) })).ip;
  }

  async publish(ep: Omit<OverlayEndpoint, 'nodeId' | 'vtep'>): Promise<void> {
    await this.call('publish', { ...ep, vtep: this.vtep });
    void this.poll();
  }

  async release(networkId: string, endpointId: string, ip: string): Promise<void> {
    await this.call('release', { networkId, endpointId, ip });
    void this.poll();
  }
}
