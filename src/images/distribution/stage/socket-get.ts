// A blob's GET from a plain-HTTP registry on a bare socket whose reads all land in one reused
// buffer (net.Socket's `onread`), for a stage worker (worker-fetch.ts). Receiving through node:http
// costs a fresh 64 KiB allocation per socket read, the parser's and the stream's work per read, and
// the collections that free those reads: measured on 210 MB over loopback, ~200 ms of CPU through
// node:http against ~35 ms here, on the thread that is a pull's critical path. Only the plain case
// is taken: a 200 with a Content-Length equal to the manifest's size. Anything else before the first
// body byte (refused or reset connection, another status, chunked encoding, an unusual head) is
// declined, and the caller sends the request the usual way, which words its errors and follows
// redirects.
import { connect, type Socket } from 'node:net';

/** What the caller does with the body. */
export interface SocketGetHooks {
  /** The response is a 200 of the expected length: its body follows. */
  response(): void;
  /** The next bytes: a view of the reused buffer, valid until this returns or the promise it returns settles. */
  chunk(c: Buffer): Promise<void> | void;
}

/** Bytes of one socket read. */
const READ = 256 * 1024;
/** A response head longer than this is declined (node:http's default limit too). */
const HEAD_MAX = 16 * 1024;
/** Idle time allowed with no bytes moving, as the usual request's (transport.ts). */
const IDLE_MS = 60_000;

/** Reused read buffers of ended GETs (one per GET in flight). */
const buffers: Buffer[] = [];

/** Whether `url` can go this way: plain HTTP, and no proxy for it. */
export function socketGetFits(url: URL, proxied: boolean): boolean {
  return url.protocol === 'http:' && !proxied;
}

/** The head's status and lower-cased headers, or null when it is not a plain HTTP/1.x response head. */
function parseHead(head: string): { status: number; headers: Map<string, string> } | null {
  const lines = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0]!);
  if (!m) return null;
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) return null;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    const had = headers.get(name);
    if (had !== undefined && name === 'content-length' && had !== value) return null; // conflicting lengths
    headers.set(name, had !== undefined && name !== 'content-length' ? `${had}, ${value}` : value);
  }
  return { status: Number(m[1]), headers };
}

/**
 * GETs `url` (plain HTTP) with `headers`; 'done' once `size` body bytes went to `hooks.chunk`,
 * 'declined' (nothing given to the hooks) when the response is not a plain 200 of `size` bytes or
 * the connection failed before it. Rejects once the body has begun: 'unexpected EOF' for a cut
 * connection, the signal's reason when aborted.
 */
export function socketGet(
  url: URL,
  headers: Record<string, string>,
  size: number,
  signal: AbortSignal,
  hooks: SocketGetHooks,
): Promise<'done' | 'declined'> {
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, 'User-Agent: engine/registry-client'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  lines.push('Connection: close', '', '');
  const request = lines.join('\r\n');
  // A header that would split the request: the usual request refuses it in its own words.
  if (/[\r\n]/.test(Object.entries(headers).flat().join(''))) return Promise.resolve('declined');
  if (signal.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));

  return new Promise((resolve, reject) => {
    const buf = buffers.pop() ?? Buffer.allocUnsafeSlow(READ);
    // The head is copied out of the reads into its own buffer; its end is searched in the new bytes only.
    const head = Buffer.allocUnsafe(HEAD_MAX);
    let headLen = 0;
    let inHead = true;
    let received = 0;
    let settled = false;
    const settle = (err: Error | null, r?: 'done' | 'declined') => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      // Not reused while a read may still land in it: only after the socket is gone.
      socket.once('close', () => buffers.push(buf));
      if (err) reject(err);
      else resolve(r!);
    };
    const onAbort = () => settle(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    /** Body bytes at `buf[from, to)`; pauses the socket while the caller still holds them. */
    const body = (from: number, to: number) => {
      if (to <= from) return;
      received += to - from;
      const wait = hooks.chunk(buf.subarray(from, to));
      if (received === size) {
        if (!wait) return settle(null, 'done');
        socket.pause();
        wait.then(
          () => settle(null, 'done'),
          (err: Error) => settle(err),
        );
        return;
      }
      if (!wait) return;
      socket.pause();
      wait.then(
        () => socket.resume(),
        (err: Error) => settle(err),
      );
    };
    const onRead = (nread: number): boolean => {
      if (settled) return false;
      if (!inHead) {
        body(0, Math.min(nread, size - received));
        return true;
      }
      const before = headLen;
      headLen += buf.copy(head, headLen, 0, Math.min(nread, HEAD_MAX - headLen));
      const end = head.subarray(0, headLen).indexOf('\r\n\r\n', Math.max(0, before - 3));
      if (end < 0) {
        if (headLen < HEAD_MAX) return true;
        settle(null, 'declined'); // a head this long is not a registry's blob answer
        return false;
      }
      const parsed = parseHead(head.subarray(0, end).toString('latin1'));
      const length = parsed?.headers.get('content-length');
      if (!parsed || parsed.status !== 200 || parsed.headers.has('transfer-encoding') || length !== String(size)) {
        settle(null, 'declined');
        return false;
      }
      inHead = false;
      hooks.response();
      if (size === 0) {
        settle(null, 'done');
        return false;
      }
      // The first body bytes came with the end of the head, in this read.
      const from = end + 4 - before;
      body(from, Math.min(nread, from + size));
      return true;
    };
    const socket: Socket = connect({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 80),
      onread: { buffer: buf, callback: (n: number) => onRead(n) },
    });
    socket.setTimeout(IDLE_MS, () => {
      if (inHead) return settle(null, 'declined');
      settle(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }));
    });
    socket.on('connect', () => socket.write(request));
    // Before the body: the usual request tries again and words what happens; after: a cut connection.
    const cut = () => (inHead ? settle(null, 'declined') : settle(Object.assign(new Error('unexpected EOF'), { code: 'ECONNRESET' })));
    socket.on('error', cut);
    socket.on('end', cut);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
