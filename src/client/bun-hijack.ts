// Hijacked connections under Bun (the `engine` executable is compiled with it): the attach of a
// `run` without stdin on Bun's own socket (Bun.connect, unix socket or plain TCP) instead of
// node:net, whose Socket is a node:stream Duplex. In Bun both are JavaScript compiled at start-up:
// `engine run --rm busybox true` spent ~3 ms of CPU and ~5 MiB of peak RSS loading them for one
// connection that only ever reads. The same exchange as simple-http.ts's upgradeExchange: the
// request with `Upgrade: tcp`, then after a 101 (or a 2xx/3xx from a daemon that answers without
// upgrading) the connection's bytes, the ones that came with the head first; an error status is
// read whole. The connection is read as an async iterable, paused while unread chunks pile up.
import type { HostTarget } from './host.ts';
import { parseHead, parseResponse } from './simple-http.ts';

/** What a hijacked attach or exec needs of its connection (a node:stream Duplex has it all). */
export interface HijackStream extends AsyncIterable<Buffer> {
  write(chunk: Buffer): unknown;
  /** Half-closes: end of input for the process, its output keeps coming. */
  end(): unknown;
  destroy(): unknown;
  readonly destroyed: boolean;
  readonly writableEnded: boolean;
}

/** The part of Bun's socket used here. */
interface BunSocket {
  write(data: Uint8Array | string): number;
  shutdown(halfClose?: boolean): void;
  end(): void;
  pause(): void;
  resume(): void;
}
interface BunHandlers {
  open(s: BunSocket): void;
  data(s: BunSocket, chunk: Uint8Array): void;
  drain(s: BunSocket): void;
  end(s: BunSocket): void;
  close(s: BunSocket, err?: Error): void;
  error(s: BunSocket, err: Error): void;
  connectError(s: BunSocket, err: Error): void;
}
type BunConnect = (o: ({ unix: string } | { hostname: string; port: number }) & { socket: BunHandlers }) => Promise<BunSocket>;

/** Unread chunks beyond which the socket is paused (resumed as they are read). */
const HIGH_WATER = 16;

class BunHijack implements HijackStream {
  destroyed = false;
  writableEnded = false;
  private readonly chunks: Buffer[] = [];
  private ended = false;
  private error?: Error;
  private wake?: () => void;
  private paused = false;
  /** Bytes the socket did not take yet (Bun's sockets do not buffer), and an end() waiting for them. */
  private readonly unsent: Buffer[] = [];
  private endAfterUnsent = false;

  constructor(private readonly s: BunSocket) {}

  push(b: Buffer): void {
    this.chunks.push(b);
    if (this.chunks.length >= HIGH_WATER && !this.paused) {
      this.paused = true;
      this.s.pause();
    }
    this.wake?.();
  }

  finish(err?: Error): void {
    if (err && !this.error && !this.destroyed) this.error = err;
    this.ended = true;
    this.wake?.();
  }

  write(chunk: Buffer): boolean {
    if (this.destroyed || this.writableEnded) return false;
    if (this.unsent.length) {
      this.unsent.push(Buffer.from(chunk));
      return false;
    }
    const n = this.s.write(chunk);
    if (n < chunk.length) this.unsent.push(Buffer.from(chunk.subarray(Math.max(n, 0))));
    return n >= chunk.length;
  }

  drain(): void {
    while (this.unsent.length) {
      const b = this.unsent[0]!;
      const n = this.s.write(b);
      if (n < b.length) {
        this.unsent[0] = b.subarray(Math.max(n, 0));
        return;
      }
      this.unsent.shift();
    }
    if (this.endAfterUnsent) {
      this.endAfterUnsent = false;
      this.s.shutdown(true);
    }
  }

  end(): void {
    if (this.destroyed || this.writableEnded) return;
    this.writableEnded = true;
    if (this.unsent.length) this.endAfterUnsent = true;
    else this.s.shutdown(true);
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.s.end();
    this.finish();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for (;;) {
      const c = this.chunks.shift();
      if (c) {
        if (this.paused && this.chunks.length < HIGH_WATER / 2) {
          this.paused = false;
          this.s.resume();
        }
        yield c;
        continue;
      }
      if (this.error) throw this.error;
      if (this.ended || this.destroyed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

/** Node's words for a failed connect ("connect ENOENT /path"), which ConnectionError quotes. */
function connectError(target: Extract<HostTarget, { kind: 'unix' | 'tcp' }>, e: Error): Error {
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return e;
  return Object.assign(new Error(`connect ${code} ${target.kind === 'unix' ? target.path : `${target.host}:${target.port}`}`), { code });
}

/**
 * Sends `head` (+ body) on a fresh Bun socket; resolves with the hijacked stream after a 1xx/2xx/3xx
 * answer's head, or with the whole answer of an error status.
 */
export function bunUpgrade(
  target: Extract<HostTarget, { kind: 'unix' | 'tcp' }>,
  head: string,
  body: Buffer | undefined,
  signal?: AbortSignal,
): Promise<{ status: number; headers: Record<string, string>; stream?: HijackStream; body?: Buffer }> {
  const connect = (globalThis as unknown as { Bun: { connect: BunConnect } }).Bun.connect;
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    const pendingRequest: Buffer[] = [];
    let conn: BunHijack | undefined;
    let settled = false;
    let sock: BunSocket | undefined;
    const settle = (err: Error | undefined, value?: Parameters<typeof resolve>[0]) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (err) {
        sock?.end();
        reject(err);
      } else resolve(value!);
    };
    const onAbort = () => {
      const r = signal!.reason as unknown;
      settle(r instanceof Error ? r : new DOMException('This operation was aborted', 'AbortError'));
    };
    const check = (ended: boolean) => {
      try {
        const buf = got.length === 1 ? got[0]! : Buffer.concat(got);
        const h = parseHead(buf, ended);
        if (!h) return;
        if (h.status >= 400) {
          const whole = parseResponse(buf, ended);
          if (!whole) return;
          sock?.end();
          return settle(undefined, { status: whole.status, headers: whole.headers, body: whole.body });
        }
        conn = new BunHijack(sock!);
        if (h.rest.length) conn.push(Buffer.from(h.rest));
        settle(undefined, { status: h.status, headers: h.headers, stream: conn });
      } catch (e) {
        settle(e as Error);
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const handlers: BunHandlers = {
      open(s) {
        sock = s;
        const out = body?.length ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
        const n = s.write(out);
        // The request is a few hundred bytes: a partial write is the rare case, finished on drain.
        if (n < out.length) pendingRequest.push(out.subarray(Math.max(n, 0)));
      },
      data(_s, chunk) {
        // Copied: the chunk's memory is Bun's to reuse once the handler returns.
        const b = Buffer.from(chunk);
        if (conn) conn.push(b);
        else {
          got.push(b);
          check(false);
        }
      },
      drain(s) {
        if (conn) return conn.drain();
        while (pendingRequest.length) {
          const b = pendingRequest[0]!;
          const n = s.write(b);
          if (n < b.length) return void (pendingRequest[0] = b.subarray(Math.max(n, 0)));
          pendingRequest.shift();
        }
      },
      end() {
        if (conn) conn.finish();
        else check(true);
      },
      close(_s, err) {
        if (conn) conn.finish(err);
        else if (!settled) {
          if (err) settle(err);
          else check(true);
        }
      },
      error(_s, err) {
        if (conn) conn.finish(err);
        else settle(err);
      },
      connectError(_s, err) {
        settle(connectError(target, err));
      },
    };
    connect({ ...(target.kind === 'unix' ? { unix: target.path } : { hostname: target.host, port: target.port }), socket: handlers }).then(
      (s) => {
        sock ??= s;
        if (settled && !conn) s.end(); // aborted while connecting
      },
      (e: Error) => settle(connectError(target, e)),
    );
  });
}
