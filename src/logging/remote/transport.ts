// How the remote drivers reach their receivers, never blocking the event loop: UDP datagrams
// (gelf, syslog over udp) and byte streams over TCP or a unix socket (gelf tcp, syslog tcp/unix,
// fluentd), with a bounded queue while the receiver is away and reconnection with a delay.

import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { connect as netConnect, type Socket } from 'node:net';
import { lookup } from 'node:dns/promises';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

export interface Transport {
  /** The first connection; a stream transport that must reach its receiver at start rejects. */
  connect(): Promise<void>;
  /** Queues one record's packets (datagrams, or frames of a stream). */
  write(packets: Buffer[]): void;
  /** Bytes accepted and not yet handed to the kernel. */
  readonly queued: number;
  /** Records dropped by the transport (queue over its limit, datagram refused). */
  readonly dropped: number;
  /** Settles once queued ≤ low, or the transport is closed. */
  waitForRoom(low: number): Promise<void>;
  /** Sends what is queued (a bounded wait) and closes. */
  close(): Promise<void>;
}

/** How long close() waits for queued bytes to leave. */
const CLOSE_GRACE_MS = 5000;

abstract class QueueBase {
  abstract readonly queued: number;
  dropped = 0;
  protected closed = false;
  private waiters: { low: number; resolve: () => void }[] = [];

  waitForRoom(low: number): Promise<void> {
    if (this.queued <= low || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ low, resolve }));
  }

  protected get waiting(): boolean {
    return this.waiters.length > 0;
  }

  protected wake(): void {
    if (this.waiters.length === 0) return;
    const keep: typeof this.waiters = [];
    for (const w of this.waiters) this.queued <= w.low || this.closed ? w.resolve() : keep.push(w);
    this.waiters = keep;
  }
}

/** UDP: each packet one datagram to host:port. */
export class DatagramTransport extends QueueBase implements Transport {
  /** Bytes written before the socket was connected. */
  private held = 0;
  private poll?: NodeJS.Timeout;
  private sock?: DgramSocket;
  private ready?: Promise<void>;
  private readonly pending: Buffer[] = [];
  lastError?: Error;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    super();
  }

  connect(): Promise<void> {
    this.ready ??= (async () => {
      const address = isIP(this.host) ? this.host : (await lookup(this.host)).address;
      const sock = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
      sock.on('error', (err) => (this.lastError = err)); // ECONNREFUSED from an ICMP port unreachable, or a failed send without a callback
      await new Promise<void>((resolve, reject) => {
        sock.once('error', reject);
        sock.connect(this.port, address, () => (sock.off('error', reject), resolve()));
      });
      this.sock = sock;
      this.held = 0;
      for (const p of this.pending.splice(0)) this.send(p);
      this.wake();
    })();
    return this.ready;
  }

  /**
   * Datagrams without a callback that libuv had to queue wake no one when they leave: while anyone
   * waits for room, the queue is looked at every few milliseconds as well.
   */
  override waitForRoom(low: number): Promise<void> {
    const room = super.waitForRoom(low);
    if (this.waiting && !this.poll) {
      this.poll = setInterval(() => {
        this.wake();
        if (!this.waiting) (clearInterval(this.poll), (this.poll = undefined));
      }, 5);
    }
    return room;
  }

  /** Before the connection, what waits for it; then what waits in libuv's send queue. */
  get queued(): number {
    return this.held + (this.sock?.getSendQueueSize() ?? 0);
  }

  write(packets: Buffer[]): void {
    if (this.closed) return;
    for (const p of packets) {
      if (this.sock) this.send(p);
      else (this.pending.push(p), (this.held += p.length));
    }
  }

  private send(p: Buffer): void {
    const sock = this.sock!;
    // With nothing in libuv's queue the datagram goes to the kernel at once (or fails with the
    // ICMP error, reported on the socket's 'error'): no callback, no tick per datagram. Behind
    // queued ones it waits too, and its callback wakes whoever waits for room (the queue is FIFO:
    // the datagrams before it have left by then). A failed send without a callback is lost from
    // `dropped`, as the datagram itself is.
    if (sock.getSendQueueCount() === 0) {
      sock.send(p);
      return;
    }
    sock.send(p, (err) => {
      if (err) {
        // ECONNREFUSED after an ICMP port unreachable: the receiver is not there yet, as dockerd's
        // UDP writer the datagram is lost
        this.dropped++;
        this.lastError = err;
      }
      this.wake();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.connect().catch(() => {}); // a host that never resolved: nothing was sent
    const end = Date.now() + CLOSE_GRACE_MS;
    while (this.queued > 0 && this.sock && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    this.closed = true;
    this.wake();
    this.sock?.close();
  }
}

export interface StreamTarget {
  host?: string;
  port?: number;
  path?: string;
  /** TLS over TCP (syslog's tcp+tls). */
  tls?: ConnectionOptions;
}

export interface StreamOptions {
  /** Bytes kept while the receiver is away; a record beyond that is dropped. */
  bufferLimit: number;
  /** Records kept while the receiver is away (fluentd-buffer-limit counts messages). */
  maxPendingRecords?: number;
  /** Failed reconnections in a row after which what waits is dropped (fluentd-max-retries). */
  maxRetries?: number;
  /** First delay between reconnection attempts (doubled up to maxDelayMs). */
  retryDelayMs: number;
  maxDelayMs: number;
  /** connect() rejects when the first dial fails (dockerd: the container does not start). */
  failStart: boolean;
  /** Cuts connections of the initial dial short (ms). */
  dialTimeoutMs?: number;
  /** Called with every connection error (debug logging). */
  onError?: (err: Error) => void;
  /** What the receiver sends back (fluentd's acks); ignored when absent. */
  onData?: (data: Buffer) => void;
  /** Frames to send first on every new connection (fluentd's unacknowledged messages). */
  resend?: () => Buffer[];
  /**
   * A write the kernel has not taken within this many ms drops the connection (fluentd-write-timeout,
   * Go's write deadline); what it still held is sent again, whole, on the next connection.
   */
  writeTimeoutMs?: number;
  /**
   * A write on a connection older than this many ms first replaces the connection
   * (fluentd-async-reconnect-interval: spreads senders over a load balancer's receivers).
   */
  rotateAfterMs?: number;
}

/**
 * Ends a socket once our last bytes are with the kernel, which still sends them: a receiver that
 * never closes its side must not keep it open (destroyed after a second whatever the peer does).
 */
function endSocket(sock: Socket): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(() => (sock.destroy(), resolve()), 1000);
    sock.end(() => (clearTimeout(t), sock.destroy(), resolve()));
  });
}

/** One connection to a stream target, cut short after dialTimeoutMs. */
function dialStream(t: StreamTarget, dialTimeoutMs: number | undefined): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = t.path
      ? netConnect({ path: t.path })
      : t.tls
        ? tlsConnect({ ...t.tls, host: t.host!, port: t.port! })
        : netConnect({ host: t.host!, port: t.port! });
    const timer = dialTimeoutMs
      ? setTimeout(() => sock.destroy(new Error(`dial timeout after ${dialTimeoutMs}ms`)), dialTimeoutMs)
      : undefined;
    sock.once('error', (err) => (clearTimeout(timer), reject(err)));
    sock.once(t.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      sock.removeAllListeners('error');
      resolve(sock);
    });
  });
}

/** What one write hands the kernel at most with a write timeout (whole records). */
const DEADLINE_BATCH = 64 << 10;

/**
 * writeTimeoutMs: one connection's records handed to the socket a batch at a time, each batch
 * followed until the kernel took it (Go's write deadline, per write). A receiver that reads
 * slowly keeps the connection; one that takes nothing for the whole timeout loses it, and the
 * records not taken (the batch under way included, whole) go to the next connection.
 */
class WriteDeadline {
  private readonly waiting: Buffer[] = [];
  private inflight: Buffer[] = [];
  /** Bytes held here (waiting and under way). */
  bytes = 0;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly sock: Socket,
    private readonly limit: number,
    private readonly expired: (stuck: Buffer[]) => void,
    private readonly progress: () => void,
  ) {}

  write(record: Buffer): void {
    this.waiting.push(record);
    this.bytes += record.length;
    this.pump();
  }

  private pump(): void {
    if (this.inflight.length || !this.waiting.length || this.stopped) return;
    let size = 0;
    let n = 0;
    while (n < this.waiting.length && (n === 0 || size + this.waiting[n]!.length <= DEADLINE_BATCH)) size += this.waiting[n++]!.length;
    this.inflight = this.waiting.splice(0, n);
    this.timer = setTimeout(() => {
      if (this.stopped) return;
      this.stop();
      this.expired([...this.inflight, ...this.waiting]);
    }, this.limit);
    this.sock.write(n === 1 ? this.inflight[0]! : Buffer.concat(this.inflight, size), (err) => {
      if (err || this.stopped) return; // a dropped connection: its records were queued again
      clearTimeout(this.timer);
      this.bytes -= size;
      this.inflight = [];
      this.pump();
      this.progress();
    });
  }

  /** Stops, giving back the records not handed to the socket yet. */
  takeWaiting(): Buffer[] {
    this.stop();
    this.bytes = 0;
    return this.waiting.splice(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** TCP or unix stream: frames written in order; reconnects after a failure, queueing meanwhile. */
export class StreamTransport extends QueueBase implements Transport {
  private sock?: Socket;
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  private first?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private delay: number;
  private failures = 0;
  /** When the current connection was made (rotateAfterMs). */
  private connectedAt = 0;
  /** writeTimeoutMs: the current connection's writes, followed. */
  private deadline?: WriteDeadline;
  /** Test knob and debug figure: completed connections. */
  connections = 0;

  constructor(
    private readonly target: StreamTarget,
    private readonly opts: StreamOptions,
  ) {
    super();
    this.delay = opts.retryDelayMs;
  }

  connect(): Promise<void> {
    this.first ??= this.dial().then(
      () => undefined,
      (err: Error) => {
        if (this.opts.failStart) throw err;
        this.opts.onError?.(err);
        this.schedule();
      },
    );
    return this.first;
  }

  private async dial(): Promise<Socket> {
    const sock = await dialStream(this.target, this.opts.dialTimeoutMs);
    this.attached(sock);
    return sock;
  }

  private attached(sock: Socket): void {
    if (this.closed) {
      sock.destroy();
      return;
    }
    this.connections++;
    this.failures = 0;
    this.sock = sock;
    this.connectedAt = Date.now();
    const limit = this.opts.writeTimeoutMs;
    this.deadline = limit
      ? new WriteDeadline(
          sock,
          limit,
          (stuck) => this.writeExpired(stuck, limit),
          () => this.recount(),
        )
      : undefined;
    this.delay = this.opts.retryDelayMs;
    sock.setNoDelay(true);
    const onData = this.opts.onData;
    sock.on('data', (d: Buffer) => onData?.(d)); // read, so that a chatty receiver never stalls
    sock.on('drain', () => this.recount());
    sock.on('error', (err) => this.opts.onError?.(err));
    sock.on('close', () => {
      if (this.sock !== sock) return;
      this.sock = undefined;
      this.recount();
      if (!this.closed) this.schedule();
    });
    const again = this.opts.resend?.() ?? [];
    const waiting = this.pending.splice(0);
    this.pendingBytes = 0;
    if (this.deadline) for (const record of [...again, ...waiting]) this.deadline.write(record);
    else if (again.length + waiting.length > 0) sock.write(Buffer.concat([...again, ...waiting]));
    this.recount();
  }

  /** Go's write deadline passed: the connection goes; the records it did not take wait for the next. */
  private writeExpired(stuck: Buffer[], limit: number): void {
    this.drop(new Error(`write timeout: ${stuck.length} records not taken within ${limit}ms`));
    this.requeue(stuck);
  }

  private requeue(records: Buffer[]): void {
    this.pending.unshift(...records);
    this.pendingBytes += records.reduce((n, b) => n + b.length, 0);
    this.recount();
  }

  /** Drops the connection (a write or ack timeout); the next one, after the retry delay, gets resend()'s frames first. */
  drop(reason: Error): void {
    const sock = this.sock;
    if (!sock) return;
    this.opts.onError?.(reason);
    this.sock = undefined;
    this.deadline?.stop();
    this.deadline = undefined;
    sock.destroy();
    this.recount();
    if (!this.closed) this.schedule();
  }

  /** rotateAfterMs: the old connection finishes sending what it took; a new one is dialled at once. */
  private rotate(sock: Socket): void {
    this.sock = undefined;
    const waiting = this.deadline?.takeWaiting() ?? [];
    this.deadline = undefined;
    this.requeue(waiting);
    void endSocket(sock);
    this.schedule(0);
  }

  private schedule(delay = this.delay): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dial().catch((err: Error) => {
        this.opts.onError?.(err);
        if (this.opts.maxRetries !== undefined && ++this.failures > this.opts.maxRetries && this.pending.length > 0) {
          this.opts.onError?.(new Error(`gave up after ${this.failures - 1} retries: ${this.pending.length} records dropped`));
          this.dropped += this.pending.length;
          this.pending.length = 0;
          this.pendingBytes = 0;
          this.failures = 0;
          this.recount();
        }
        this.delay = Math.min(this.delay * 2, this.opts.maxDelayMs);
        this.schedule();
      });
    }, delay);
  }

  /** Read live: what a corked or in-flight write still holds leaves without an event to count it. */
  get queued(): number {
    return this.pendingBytes + (this.sock?.writableLength ?? 0) + (this.deadline?.bytes ?? 0);
  }

  private recount(): void {
    this.wake();
  }

  write(packets: Buffer[]): void {
    if (this.closed) return;
    const data = packets.length === 1 ? packets[0]! : Buffer.concat(packets);
    const rotateAfter = this.opts.rotateAfterMs;
    if (rotateAfter && this.sock && Date.now() - this.connectedAt > rotateAfter) this.rotate(this.sock);
    const sock = this.sock;
    if (sock && !sock.destroyed && this.deadline) {
      this.deadline.write(Buffer.from(data)); // kept until taken: copied, the framer reuses its buffers
    } else if (sock && !sock.destroyed) {
      // Records of one turn of the event loop leave in one writev (one syscall, not one per line).
      if (sock.writableCorked === 0) {
        sock.cork();
        process.nextTick(() => sock.uncork());
      }
      sock.write(data);
    } else {
      const limit = this.opts.maxPendingRecords;
      if (this.pendingBytes + data.length > this.opts.bufferLimit || (limit !== undefined && this.pending.length >= limit)) {
        this.dropped++;
        return;
      }
      // Copied: the framer hands views into buffers it reuses.
      this.pending.push(Buffer.from(data));
      this.pendingBytes += data.length;
    }
    this.recount();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const end = Date.now() + CLOSE_GRACE_MS;
    // Whatever is queued gets the grace period to reach a receiver that comes back.
    while (this.queued > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.deadline?.stop();
    const sock = this.sock;
    if (sock && !sock.destroyed) {
      if (this.queued > 0) {
        this.opts.onError?.(new Error(`closing with ${this.queued} bytes unsent`));
        sock.destroy();
      } else {
        await endSocket(sock);
      }
    }
    this.sock = undefined;
    this.wake();
  }
}
