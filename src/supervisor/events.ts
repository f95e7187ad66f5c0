// Events.Subscribe that survives containerd restarts.
//
// The hard part is knowing when a subscription is live: containerd sends no response headers on
// this stream until the first event, so "the call is open" does not mean "the server has registered
// us". We add a filter for a topic only we publish to and publish a probe event on it until it comes
// back; from then on no event can be missed. Only after that do we report `ready` (first time) or
// call onResubscribed (after a restart), so a consumer reconciling there sees every later change.

import { randomBytes } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { timestampToDate, type AnyMessage, type Timestamp } from './protos.ts';
import type { SupervisorCalls } from './calls.ts';
import type { SupervisorEvent } from './types.ts';

export const PROBE_TOPIC_PREFIX = '/engine/subscription-probe/';
const PROBE_EVERY_MS = 50;

export interface SubscribeOptions {
  /** Called once the subscription is live again after the stream broke (containerd restarted). */
  onResubscribed?: () => void;
  /** Stream failures and exceptions thrown by onEvent (for logging); the subscription goes on. */
  onError?: (err: unknown) => void;
  /** Delay before re-subscribing, doubled per failed attempt up to 2 s. */
  retryMs?: number;
}

interface Envelope {
  timestamp: Timestamp | null;
  namespace: string;
  topic: string;
  event: AnyMessage | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class EventSubscription {
  /** Resolves once the first subscription is live. */
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private rejectReady!: (e: unknown) => void;
  private closed = false;
  /** Whether the subscription has ended (closed, or its client was). */
  get ended(): boolean {
    return this.closed;
  }
  private stream: grpc.ClientReadableStream<Envelope> | null = null;
  /** How many times the subscription was (re)established. */
  generation = 0;

  constructor(
    private readonly client: SupervisorCalls,
    private readonly filters: string[],
    private readonly onEvent: (e: SupervisorEvent) => void,
    private readonly opts: SubscribeOptions = {},
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // closed before live: not an unhandled rejection
    void this.run();
  }

  /** Ends the subscription (also happens when the client is closed). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream?.cancel();
    this.rejectReady(new Error('subscription closed'));
  }

  private async run(): Promise<void> {
    const initialRetry = this.opts.retryMs ?? 100;
    let retry = initialRetry;
    while (!this.closed && !this.client.closed) {
      let live = false;
      try {
        live = await this.subscribeOnce();
      } catch (err) {
        this.opts.onError?.(err);
      }
      if (this.closed || this.client.closed) break;
      if (live) retry = initialRetry;
      await sleep(retry);
      retry = Math.min(retry * 2, 2000);
    }
    this.close();
  }

  /** One Subscribe call, from open to break. Returns whether it became live. */
  private async subscribeOnce(): Promise<boolean> {
    const probeTopic = PROBE_TOPIC_PREFIX + randomBytes(8).toString('hex');
    // Filters are ORed; no filters means everything, which our probe filter alone would narrow.
    const filters = this.filters.length ? this.filters : ['topic~="/"'];
    const stream = this.client.serverStream<Envelope>(
      'events',
      'Subscribe',
      { filters: [...filters, `topic=="${probeTopic}"`] },
      { namespace: null, waitForReady: true },
    );
    this.stream = stream;
    let live = false;
    let markLive!: () => void;
    const becameLive = new Promise<void>((r) => (markLive = r));

    stream.on('data', (env: Envelope) => {
      if (env.topic === probeTopic) {
        if (!live) {
          live = true;
          markLive();
          this.generation++;
          if (this.generation === 1) this.resolveReady();
          else this.safely(() => this.opts.onResubscribed?.());
        }
        return;
      }
      if (env.topic.startsWith(PROBE_TOPIC_PREFIX)) return; // another subscriber's probe
      this.safely(() =>
        this.onEvent({
          topic: env.topic,
          namespace: env.namespace,
          timestamp: timestampToDate(env.timestamp),
          type: env.event?.type_url ?? '',
          event: this.client.protos.decodeAny(env.event),
        }),
      );
    });
    const ended = new Promise<void>((resolve) => {
      stream.on('error', (err) => {
        if (!this.closed) this.opts.onError?.(err);
      });
      stream.on('status', () => resolve());
    });
    let streamDone = false;
    void ended.then(() => (streamDone = true));

    // The Subscribe may be registered after our first Publish lands, so repeat until one is seen.
    while (!live && !streamDone && !this.closed) {
      try {
        await this.client.call(
          'events',
          'Publish',
          {
            topic: probeTopic,
            event: { type_url: 'google.protobuf.Empty', value: Buffer.alloc(0) },
          },
          { namespace: this.client.namespace || 'default', waitForReady: true, deadlineMs: 10_000 },
        ); // Publish needs one
      } catch (err) {
        if (!this.closed) this.opts.onError?.(err);
        stream.cancel();
        break;
      }
      await Promise.race([becameLive, ended, sleep(PROBE_EVERY_MS)]);
    }
    await ended;
    return live;
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.onError?.(err);
    }
  }
}
