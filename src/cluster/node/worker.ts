// A worker's runtime: no store; it heartbeats to one of the managers it knows over mutual TLS with
// its node certificate, moves to the next manager when one does not answer, and keeps the list of
// managers each answer carries (saved, so a restarted worker finds them again). An answer saying the
// node is a manager now (a promotion) is handed to the service, which turns the node into one.
import { createHash } from 'node:crypto';
import type { TLSInfo } from '../../types/api/index.ts';
import type { GoJson } from '../../types/go-nil.ts';
import type { Logger } from '../../util/log.ts';
import { callManager, type HeartbeatResponse } from './endpoint.ts';
import type { LocalClusterState, LocalStateFiles, NodeCerts } from './local-state.ts';
import { HEARTBEAT_PERIOD_NS } from '../ca/swarm-object.ts';

/**
 * The manager (an index into the list) a worker talks to first: spread by its node ID, so workers
 * share the managers' load (swarmkit picks at random, weighted) instead of all heartbeating,
 * syncing and polling the first manager of the list.
 */
export function firstManager(nodeId: string, count: number): number {
  if (count <= 1) return 0;
  return createHash('sha1').update(nodeId).digest().readUInt32BE(0) % count;
}

export class Worker {
  private timer: NodeJS.Timeout | null = null;
  private next: number;
  private stopped = false;
  /** The last heartbeat failure, shown as /info's Swarm.Error while no manager answers. */
  lastError = '';

  constructor(
    readonly state: LocalClusterState,
    private readonly certs: NodeCerts,
    private readonly files: LocalStateFiles,
    private readonly log: Logger,
    /** A heartbeat answer says the node is a manager now (a promotion): the service switches it. */
    private readonly onPromoted?: (r: HeartbeatResponse) => void,
    /** The node's TLSInfo sent with each heartbeat, and the answer's view of the cluster CA (cert-renewer.ts). */
    private readonly tls?: { info(): GoJson<TLSInfo>; check(ca: HeartbeatResponse['ca']): void },
  ) {
    this.next = firstManager(state.nodeId, state.managers.length);
  }

  /** Sends the first heartbeat (its failure is the caller's) and keeps beating. */
  async start(): Promise<void> {
    const startedAt = performance.now();
    const period = await this.beat(true);
    this.schedule(period, startedAt);
  }

  /**
   * The next beat `seconds` after the start of the last one, not after its answer: the lease is
   * three periods, and on a loaded machine slow round trips added to each period let it lapse.
   */
  private schedule(seconds: number, lastStartedAt: number): void {
    if (this.stopped) return;
    const delay = Math.max(0, seconds * 1000 - (performance.now() - lastStartedAt));
    this.timer = setTimeout(() => {
      const startedAt = performance.now();
      this.beat(false).then(
        (p) => this.schedule(p, startedAt),
        (err: Error) => {
          this.log.debug('worker heartbeat round failed', { error: err.message });
          this.schedule(HEARTBEAT_PERIOD_NS / 1e9, startedAt);
        },
      );
    }, delay);
    this.timer.unref();
  }

  /** One heartbeat, trying each known manager once; returns the period to wait. */
  private async beat(throwOnFailure: boolean): Promise<number> {
    const managers = this.state.managers;
    let lastErr: Error | null = null;
    for (let i = 0; i < managers.length; i++) {
      const m = managers[(this.next + i) % managers.length]!;
      try {
        const r = await callManager<HeartbeatResponse>(m.Addr, 'POST', '/heartbeat', this.tls ? { tlsInfo: this.tls.info() } : {}, {
          caPem: this.certs.caPem,
          certs: this.certs,
          timeoutMs: 10_000,
        });
        this.next = (this.next + i) % managers.length;
        this.lastError = '';
        if (r.managers.length && JSON.stringify(r.managers) !== JSON.stringify(this.state.managers)) {
          this.state.managers = r.managers;
          this.files.write(this.state);
          // Managers came or went: spread again over the new list.
          this.next = firstManager(this.state.nodeId, r.managers.length);
        }
        if (r.role === 'manager' && r.certPem && r.etcd && !this.stopped) this.onPromoted?.(r);
        else if (!this.stopped) this.tls?.check(r.ca);
        return r.periodSeconds;
      } catch (err) {
        lastErr = err as Error;
        this.log.debug('heartbeat to a manager failed', { manager: m.Addr, error: lastErr.message });
      }
    }
    this.lastError = lastErr ? `no manager answers: ${lastErr.message}` : 'no manager known';
    if (throwOnFailure && lastErr) throw lastErr;
    return HEARTBEAT_PERIOD_NS / 1e9;
  }

  /** An extra heartbeat shortly (the node's TLS info changed: a root rotation waits on it). */
  beatSoon(): void {
    if (this.stopped) return;
    setTimeout(() => void this.beat(false).catch(() => undefined), 100).unref(); // beat() logs the failure and records it in lastError
  }

  /** One call to the first manager that answers (the agent's sync). */
  async call<T>(path: string, body: unknown): Promise<T> {
    const managers = this.state.managers;
    let lastErr: Error | null = null;
    for (let i = 0; i < managers.length; i++) {
      const m = managers[(this.next + i) % managers.length]!;
      try {
        return await callManager<T>(m.Addr, 'POST', path, body, { caPem: this.certs.caPem, certs: this.certs, timeoutMs: 10_000 });
      } catch (err) {
        lastErr = err as Error;
      }
    }
    throw lastErr ?? new Error('no manager known');
  }

  /** Tells a manager this node leaves (it shows as down at once); best effort. */
  async announceLeave(): Promise<void> {
    for (const m of this.state.managers) {
      try {
        await callManager(m.Addr, 'POST', '/leave', {}, { caPem: this.certs.caPem, certs: this.certs, timeoutMs: 5000 });
        return;
      } catch (err) {
        this.log.debug('leave announcement to a manager failed', { manager: m.Addr, error: (err as Error).message });
      }
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
