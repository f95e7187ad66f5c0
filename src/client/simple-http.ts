// A small HTTP/1.1 client on a unix socket or plain TCP, one connection per request: requests whose
// whole answer is read at once (JSON answers, empty ones, /_ping; `Connection: close`, the answer
// read to its end by Content-Length, chunked, or until the daemon closes), the two-step answer of
// a wait (head, then body), and hijacks (attach, exec start: the connection handed over after the
// 101). `engine ps` and `engine run` then never load node:http (its modules and parser cost ~6 ms
// of CPU per run, a sixth of `ps`). Streamed answers (logs, events, pull…), uploads, TLS and ssh
// (where a connection is costly) keep going through node:http (http.ts).
import type { Duplex } from 'node:stream';

export interface SimpleResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

/** Header names and values, and a path, that can go out as they are (node:http refuses the rest). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const PATH = /^\/[\x21-\x7e]*$/;

/** The request head, or undefined when something in it needs node:http's own checks and errors. */
export function requestHead(
  method: string,
  path: string,
  headers: Record<string, string | number | readonly string[] | undefined>,
  bodyLength: number,
  /** A hijack (attach, exec start): `Connection: Upgrade` and `Upgrade: tcp` instead of close. */
  upgrade = false,
): string | undefined {
  if (!TOKEN.test(method) || !PATH.test(path)) return undefined;
  const lines = [`${method} ${path} HTTP/1.1`];
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    if (!TOKEN.test(k)) return undefined;
    const lk = k.toLowerCase();
    if (lk === 'connection' || lk === 'upgrade' || lk === 'content-length' || lk === 'transfer-encoding') continue;
    for (const x of Array.isArray(v) ? v : [String(v)]) {
      if (!VALUE.test(x)) return undefined;
      lines.push(`${k}: ${x}`);
    }
  }
  // HTTP/1.1 requires a Host (node:http's default for a socket path is localhost).
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'host')) lines.push('Host: localhost');
  lines.push(...(upgrade ? ['Connection: Upgrade', 'Upgrade: tcp'] : ['Connection: close']));
  if (bodyLength > 0 || method === 'POST' || method === 'PUT') lines.push(`Content-Length: ${bodyLength}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Decodes a chunked body; undefined while the last chunk has not arrived. */
function dechunk(b: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(b.subarray(at, eol).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size)) throw new Error('malformed chunked answer from the daemon');
    if (size === 0) return Buffer.concat(parts);
    if (b.length < eol + 2 + size + 2) return undefined;
    parts.push(b.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** The answer's head (interim 1xx answers skipped, 101 kept: it ends a hijack's head), and what follows it. */
export function parseHead(buf: Buffer, ended: boolean): { status: number; headers: Record<string, string>; rest: Buffer } | undefined {
  let start = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', start);
    if (end < 0) {
      if (ended) throw new Error('the daemon closed the connection before answering');
      return undefined;
    }
    const [statusLine, ...lines] = buf.subarray(start, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine!);
    if (!m) throw new Error(`malformed answer from the daemon: ${JSON.stringify(statusLine)}`);
    const status = Number(m[1]);
    if (status >= 100 && status < 200 && status !== 101) {
      start = end + 4; // an interim answer (100 Continue): the real one follows
      continue;
    }
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      if (i <= 0) continue;
      const k = l.slice(0, i).trim().toLowerCase();
      const v = l.slice(i + 1).trim();
      headers[k] = k in headers ? `${headers[k]}, ${v}` : v;
    }
    return { status, headers, rest: buf.subarray(end + 4) };
  }
}

/** Parses what arrived; undefined while the answer is incomplete (`ended`: the daemon closed). */
export function parseResponse(buf: Buffer, ended: boolean): SimpleResponse | undefined {
  const h = parseHead(buf, ended);
  if (!h) return undefined;
  const { status, headers, rest } = h;
  if (status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
  if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
    const body = dechunk(rest);
    if (body) return { status, headers, body };
    if (ended) throw new Error('the daemon closed the connection in the middle of its answer');
    return undefined;
  }
  const len = headers['content-length'] === undefined ? NaN : Number(headers['content-length']);
  if (Number.isFinite(len)) {
    if (rest.length >= len) return { status, headers, body: rest.subarray(0, len) };
    if (ended) throw new Error('the daemon closed the connection in the middle of its answer');
    return undefined;
  }
  return ended ? { status, headers, body: rest } : undefined;
}

/**
 * Sends `head` (+ body) on a fresh connection and reads the whole answer; `onHead` is told the
 * status as soon as the head is in (a wait's answer: registered now, the result at the exit).
 */
export function exchange(
  conn: Duplex,
  head: string,
  body: Buffer | undefined,
  signal?: AbortSignal,
  onHead?: (status: number) => void,
): Promise<SimpleResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    let headSeen = !onHead;
    const finish = (err: Error | undefined, res?: SimpleResponse) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      conn.destroy();
      if (err) reject(err);
      else resolve(res!);
    };
    const onAbort = () => {
      const r = signal!.reason as unknown;
      finish(r instanceof Error ? r : new DOMException('This operation was aborted', 'AbortError'));
    };
    const attempt = (ended: boolean) => {
      try {
        const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        if (!headSeen) {
          const h = parseHead(buf, ended);
          if (h) {
            headSeen = true;
            onHead!(h.status);
          }
        }
        const res = parseResponse(buf, ended);
        if (res) finish(undefined, res);
      } catch (e) {
        finish(e as Error);
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    conn.on('data', (c: Buffer) => {
      chunks.push(c);
      attempt(false);
    });
    conn.on('end', () => attempt(true));
    conn.on('close', () => attempt(true));
    conn.on('error', (e: Error) => finish(e));
    conn.write(body && body.length ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : head);
  });
}

/**
 * A hijack on a fresh connection: once the head is in, a 101 (or a 2xx/3xx from a daemon that
 * answers without upgrading) hands the connection over as the stream, the bytes that came with the
 * head put back first; an error status is read whole.
 */
export function upgradeExchange(
  conn: Duplex,
  head: string,
  body: Buffer | undefined,
  signal?: AbortSignal,
): Promise<{ status: number; headers: Record<string, string>; stream?: Duplex; body?: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const detach = () => {
      conn.off('data', onData);
      conn.off('end', onEnd);
      conn.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (e: Error) => {
      detach();
      conn.destroy();
      reject(e);
    };
    const onAbort = () => {
      const r = signal!.reason as unknown;
      fail(r instanceof Error ? r : new DOMException('This operation was aborted', 'AbortError'));
    };
    const onError = (e: Error) => fail(e);
    const check = (ended: boolean) => {
      try {
        const buf = Buffer.concat(chunks);
        const h = parseHead(buf, ended);
        if (!h) return;
        if (h.status >= 400) {
          const whole = parseResponse(buf, ended);
          if (!whole) return;
          detach();
          conn.destroy();
          return resolve({ status: whole.status, headers: whole.headers, body: whole.body });
        }
        detach();
        conn.pause();
        if (h.rest.length) conn.unshift(h.rest);
        // As node:http does on an upgrade: the next reader (data listener or iterator) starts the flow.
        (conn as unknown as { readableFlowing: boolean | null }).readableFlowing = null;
        resolve({ status: h.status, headers: h.headers, stream: conn });
      } catch (e) {
        fail(e as Error);
      }
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      check(false);
    };
    const onEnd = () => check(true);
    signal?.addEventListener('abort', onAbort, { once: true });
    conn.on('data', onData);
    conn.on('end', onEnd);
    conn.on('error', onError);
    conn.write(body && body.length ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : head);
  });
}
