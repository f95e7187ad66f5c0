// The fast path of plain (non-TLS) listeners: a new connection's requests are read here first, and
// a body-less HTTP/1.1 GET/HEAD whose route has a fast twin (`/_ping`, `GET /containers/json`, see
// Router.fast) is answered straight on the socket, without node:http's parser, IncomingMessage and
// ServerResponse (most of the CPU of a `/_ping` on a new connection). Anything else — a request
// with a body, Connection/Upgrade/Expect headers, HTTP/1.0, a head split over reads, pipelined
// bytes, a route without a twin — hands the socket, with every byte read so far put back, to
// node:http, which serves the connection from then on exactly as before.
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastReply } from './router.ts';

export interface FastPathOptions {
  /** The API server's question: the whole answer, or undefined to hand over. */
  reply(method: string, target: string): FastReply | Promise<FastReply> | undefined;
  /** node:http's own connection listener, bound to its server. */
  handOver(socket: Socket): void;
  /** The server's keep-alive timeout (ms): node:http's `Keep-Alive: timeout=` and idle close. */
  keepAliveMs: number;
}

// Longer heads (big X-Registry-Auth headers) are node:http's: its limits and errors apply.
const MAX_HEAD = 8192;
const HEAD_END = Buffer.from('\r\n\r\n');
// Headers that change how the connection or the body is handled: node:http's business.
const DECLINE = new Set(['connection', 'upgrade', 'expect', 'transfer-encoding', 'te', 'trailer', 'keep-alive']);
// What node:http checks a header name and value against (RFC 7230 token, field-content).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const REQUEST_LINE = /^(GET|HEAD) (\/[!-~]*) HTTP\/1\.1$/;

export class FastPath {
  private readonly idle = new Set<Socket>();
  private closing = false;

  constructor(private readonly opts: FastPathOptions) {}

  /** A new connection: its requests are read here until one is not for the fast path. */
  accept(socket: Socket): void {
    if (this.closing) return this.opts.handOver(socket);
    // Owned here until handed over: a reset must not become an uncaught 'error'.
    socket.on('error', destroyOnError);
    this.wait(socket);
  }

  /** Stops answering: idle connections are ended and new requests go to node:http (which closes them). */
  close(): void {
    this.closing = true;
    for (const s of this.idle) s.destroy();
    this.idle.clear();
  }

  private wait(socket: Socket): void {
    this.idle.add(socket);
    // node:http ends a keep-alive connection idle for this long; so does the fast path.
    socket.setTimeout(this.opts.keepAliveMs);
    const onTimeout = () => socket.destroy();
    const onClose = () => this.idle.delete(socket);
    const onData = (chunk: Buffer) => {
      socket.off('data', onData);
      socket.off('timeout', onTimeout);
      socket.off('close', onClose);
      socket.setTimeout(0);
      this.idle.delete(socket);
      this.serve(socket, chunk);
    };
    socket.on('data', onData);
    socket.on('timeout', onTimeout);
    socket.on('close', onClose);
  }

  private serve(socket: Socket, chunk: Buffer): void {
    const request = this.closing ? undefined : parseHead(chunk);
    const answer = request && this.opts.reply(request.method, request.target);
    if (!request || !answer) return this.giveUp(socket, chunk);
    if (!(answer instanceof Promise)) return this.send(socket, request.method, answer);
    socket.pause();
    answer.then(
      (reply) => {
        if (socket.destroyed) return;
        socket.resume();
        this.send(socket, request.method, reply);
      },
      // fastReply turns handler errors into answers; anything else is a bug: the client is cut off.
      () => socket.destroy(),
    );
  }

  private send(socket: Socket, method: string, reply: FastReply): void {
    if (socket.destroyed || !socket.writable) return;
    socket.write(serialise(method, reply, this.closing ? 0 : this.opts.keepAliveMs));
    if (this.closing) socket.end();
    else this.wait(socket);
  }

  /** node:http takes the connection with the bytes read so far, as if nobody had read them. */
  private giveUp(socket: Socket, chunk: Buffer): void {
    socket.pause();
    socket.unshift(chunk);
    socket.off('error', destroyOnError);
    this.opts.handOver(socket);
    socket.resume();
  }
}

function destroyOnError(this: Socket): void {
  this.destroy();
}

/** A complete head of a body-less HTTP/1.1 GET/HEAD in one read, nothing after it; else undefined. */
export function parseHead(chunk: Buffer): { method: string; target: string } | undefined {
  if (chunk.length > MAX_HEAD) return undefined;
  const end = chunk.indexOf(HEAD_END);
  if (end < 0 || end + HEAD_END.length !== chunk.length) return undefined;
  const lines = chunk.toString('latin1', 0, end).split('\r\n');
  const m = REQUEST_LINE.exec(lines[0]!);
  if (!m) return undefined;
  let host = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon);
    if (!TOKEN.test(name) || !FIELD_VALUE.test(line.slice(colon + 1))) return undefined;
    const lower = name.toLowerCase();
    if (DECLINE.has(lower)) return undefined;
    if (lower === 'content-length' && line.slice(colon + 1).trim() !== '0') return undefined;
    if (lower === 'host') {
      if (host) return undefined;
      host = true;
    }
  }
  // node:http refuses an HTTP/1.1 request without Host (400): its answer, not ours.
  if (!host) return undefined;
  return { method: m[1]!, target: m[2]! };
}

let dateSecond = -1;
let dateText = '';

/** node:http's Date header: one string per second. */
function utcDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/**
 * The answer as node:http writes it: status line, headers in order, Date, keep-alive (or, with
 * keepAliveMs 0, `Connection: close`), body.
 */
export function serialise(method: string, reply: FastReply, keepAliveMs: number): Buffer {
  let head = `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? 'unknown'}\r\n`;
  for (const [name, value] of Object.entries(reply.headers)) head += `${name}: ${value}\r\n`;
  head += `Date: ${utcDate()}\r\n`;
  head +=
    keepAliveMs > 0
      ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n\r\n`
      : 'Connection: close\r\n\r\n';
  if (method === 'HEAD' || reply.body.length === 0) return Buffer.from(head, 'latin1');
  const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
  const out = Buffer.allocUnsafe(Buffer.byteLength(head, 'latin1') + body.length);
  const n = out.write(head, 0, 'latin1');
  body.copy(out, n);
  return out;
}
