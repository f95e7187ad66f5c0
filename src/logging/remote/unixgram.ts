// Unix datagram sockets through the daemon's native helper (src/native/unixgram.c, built into
// build/native/): journald's native socket and the local syslog socket take only datagrams, which
// Node's dgram cannot send on AF_UNIX. The sockets are non-blocking; a full socket buffer is retried
// on a short timer, so the event loop never waits on a receiver.

import { constants } from 'node:os';
import { nativeHelper } from '../../util/find-upwards.ts';
import type { Transport } from './transport.ts';

interface UnixgramHelper {
  open(path: string, bind: boolean): number;
  send(fd: number, data: Buffer): number;
  recv(fd: number, data: Buffer): number;
  close(fd: number): number;
}

let helper: UnixgramHelper | null | undefined;

/** The native helper, or null when it was not built. */
export function unixgramHelper(): UnixgramHelper | null {
  if (helper === undefined) helper = nativeHelper<UnixgramHelper>('unixgram');
  return helper;
}

const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([k, v]) => [v, k]));
const EAGAIN = constants.errno.EAGAIN;

/** An -errno result as an Error with its code (ECONNREFUSED, ENOENT, …). */
export function errnoError(rc: number, what: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(-rc) ?? `errno ${-rc}`;
  const err: NodeJS.ErrnoException = new Error(`${what}: ${code}`);
  err.code = code;
  return err;
}

/** Datagrams to a unix socket path, queued (bounded) while the socket buffer is full. */
export class UnixgramTransport implements Transport {
  queued = 0;
  dropped = 0;
  lastError?: Error;
  private fd = -1;
  private readonly queue: Buffer[] = [];
  private timer?: NodeJS.Timeout;
  private closed = false;
  private waiters: { low: number; resolve: () => void }[] = [];

  constructor(
    private readonly path: string,
    private readonly bufferLimit = 4 << 20,
  ) {}

  async connect(): Promise<void> {
    const h = unixgramHelper();
    if (!h) throw new Error('unix datagram sockets need the native helper build/native/unixgram.node (npm run build with a C compiler)');
    const fd = h.open(this.path, false);
    if (fd < 0) throw errnoError(fd, `dial unixgram ${this.path}`);
    this.fd = fd;
    this.pump();
  }

  write(packets: Buffer[]): void {
    if (this.closed) return;
    for (const p of packets) {
      if (this.queued + p.length > this.bufferLimit) {
        this.dropped++;
        continue;
      }
      this.queue.push(p);
      this.queued += p.length;
    }
    if (this.fd >= 0 && !this.timer) this.pump();
  }

  private pump(): void {
    const h = unixgramHelper()!;
    while (this.queue.length > 0 && this.fd >= 0) {
      const p = this.queue[0]!;
      const rc = h.send(this.fd, p);
      if (rc === -EAGAIN) {
        // the receiver's queue is full (unix datagrams are flow-controlled): try again shortly
        this.timer ??= setTimeout(() => ((this.timer = undefined), this.pump()), 1);
        break;
      }
      this.queue.shift();
      this.queued -= p.length;
      if (rc < 0) {
        // EMSGSIZE (an entry over the socket's datagram limit) or ECONNREFUSED (the receiver went
        // away): the datagram is lost, as a failed send loses it in dockerd's drivers
        this.dropped++;
        this.lastError = errnoError(rc, `send to ${this.path}`);
      }
    }
    this.wake();
  }

  waitForRoom(low: number): Promise<void> {
    if (this.queued <= low || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ low, resolve }));
  }

  private wake(): void {
    const keep: typeof this.waiters = [];
    for (const w of this.waiters) this.queued <= w.low || this.closed ? w.resolve() : keep.push(w);
    this.waiters = keep;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const end = Date.now() + 5000;
    while (this.queued > 0 && this.fd >= 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    this.closed = true;
    clearTimeout(this.timer);
    if (this.fd >= 0) unixgramHelper()!.close(this.fd);
    this.fd = -1;
    this.wake();
  }
}
