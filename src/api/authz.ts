// Authorization around every routed request: the request (method, URI, headers, JSON body up to
// 1 MiB, TLS client identity) goes to the authorizer before the handler runs; the response (status,
// headers, JSON body up to 1 MiB) before it leaves. The body is read from the stream whatever its
// Content-Length or framing says and put back for the handler, so a request cannot slip past the
// plugins by lying about its length or sending chunks (the lesson of CVE-2024-41110): a body the
// plugin does not see in full is one it gets as null, never one that skips it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { AuthzRequest, AuthzResponse } from '../types/plugins.ts';
import { keepConsumedBody } from './http.ts';

export interface RequestAuthorizer {
  readonly enabled: boolean;
  authorizeRequest(req: AuthzRequest): Promise<void>;
  authorizeResponse(res: AuthzResponse): Promise<void>;
}

/** Bodies up to this size are shown to plugins (dockerd's limit). */
export const AUTHZ_MAX_BODY = 1024 * 1024;

function isJson(contentType: unknown): boolean {
  return typeof contentType === 'string' && /^application\/json\b/i.test(contentType.trim());
}

/** Go's canonical header key: content-type → Content-Type. */
function canonical(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

function flatHeaders(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[canonical(k)] = Array.isArray(v) ? v.join(',') : String(v);
  }
  return out;
}

/**
 * Reads up to AUTHZ_MAX_BODY + 1 bytes of a JSON body from `stream` and gives them back to the
 * handler: put back on a stream that has more to come, or kept for readBody when the body ended
 * (a stream cannot take data back after its end). Returns the body when it fits, else null.
 */
async function peekBody(
  stream: NodeJS.ReadableStream & { unshift(chunk: Buffer): void },
  keep: (body: Buffer) => void,
): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let ended = false;
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size > AUTHZ_MAX_BODY) done();
    };
    const onEnd = () => {
      ended = true;
      done();
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    function done() {
      cleanup();
      stream.pause();
      resolve();
    }
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.resume();
  });
  const body = Buffer.concat(chunks);
  if (ended) keep(body);
  else if (body.length) stream.unshift(body);
  return size > AUTHZ_MAX_BODY ? null : body;
}

/**
 * A hijacked request's body waits on the socket after the headers (the socket stays open for
 * stdin): exactly Content-Length bytes are read and put back for the handler.
 */
async function peekSocketBody(socket: Socket, length: number): Promise<Buffer | null> {
  if (!Number.isInteger(length) || length <= 0) return null;
  if (length > AUTHZ_MAX_BODY) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve) => {
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size >= length) finish();
    };
    const finish = () => {
      socket.off('data', onData);
      socket.off('end', finish);
      socket.off('close', finish);
      socket.pause();
      resolve();
    };
    socket.on('data', onData);
    socket.on('end', finish);
    socket.on('close', finish);
    socket.resume();
  });
  const all = Buffer.concat(chunks);
  if (all.length) socket.unshift(all);
  return all.subarray(0, length);
}

function identity(socket: Socket): { user: string; method: string; certs: string[] | null } {
  const tls = socket as Partial<TLSSocket>;
  if (!tls.encrypted || typeof tls.getPeerCertificate !== 'function') return { user: '', method: '', certs: null };
  const cert = tls.getPeerCertificate(true);
  if (!cert || !cert.raw) return { user: '', method: '', certs: null };
  const cn = cert.subject?.CN;
  return { user: Array.isArray(cn) ? (cn[0] ?? '') : (cn ?? ''), method: 'TLS', certs: [cert.raw.toString('base64')] };
}

export interface AuthzSession {
  /** Call once the handler is done: the response goes to the authorizer (or was already, buffered). */
  finish(): Promise<void>;
  /** The handler failed: the error answer goes out as is (dockerd does not show errors to plugins). */
  abandon(): void;
}

/**
 * Asks the authorizer about the request (throws its 403/500), then wraps `res` so the response is
 * held (up to 1 MiB, until the handler streams) and shown to the authorizer before it is sent.
 */
export async function authorize(
  auth: RequestAuthorizer,
  req: IncomingMessage,
  res: ServerResponse,
  socket?: Socket,
): Promise<AuthzSession> {
  const who = identity(req.socket);
  let body: Buffer | null = null;
  if (isJson(req.headers['content-type'])) {
    // A hijacked request's body is on the socket (node hands it over unread after the headers).
    body = socket
      ? await peekSocketBody(socket, Number(req.headers['content-length'] ?? 0))
      : await peekBody(req, (b) => keepConsumedBody(req, b));
  }
  const request: AuthzRequest = {
    User: who.user,
    UserAuthNMethod: who.method,
    RequestMethod: req.method ?? 'GET',
    RequestUri: req.url ?? '/',
    RequestBody: body && body.length ? body.toString('base64') : null,
    RequestHeaders: flatHeaders(req.headers),
    RequestPeerCertificates: who.certs,
  };
  await auth.authorizeRequest(request);
  return new HeldResponse(auth, request, res, socket !== undefined);
}

/** Holds a response until the authorizer has seen it (or until the handler starts streaming). */
class HeldResponse implements AuthzSession {
  private status = 200;
  private headers: Record<string, string | string[] | number> = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private streaming = false;
  private active = true;
  private readonly original: {
    writeHead: ServerResponse['writeHead'];
    write: ServerResponse['write'];
    end: ServerResponse['end'];
    flushHeaders: ServerResponse['flushHeaders'];
  };

  constructor(
    private readonly auth: RequestAuthorizer,
    private readonly request: AuthzRequest,
    private readonly res: ServerResponse,
    private readonly hijacked: boolean,
  ) {
    this.original = { writeHead: res.writeHead, write: res.write, end: res.end, flushHeaders: res.flushHeaders };
    const self = this;
    res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
      if (!self.active || self.streaming) return self.original.writeHead.call(res, status, ...(rest as [])) as ServerResponse;
      self.status = status;
      const h = rest.find((x) => typeof x === 'object' && x !== null) as Record<string, string | number | string[]> | undefined;
      if (h) Object.assign(self.headers, h);
      return res;
    } as ServerResponse['writeHead'];
    res.write = function (chunk: unknown, ...rest: unknown[]) {
      if (!self.active || self.streaming) return (self.original.write as (...a: unknown[]) => boolean).call(res, chunk, ...rest);
      self.hold(chunk);
      if (self.size > AUTHZ_MAX_BODY) self.startStreaming();
      return true;
    } as ServerResponse['write'];
    res.end = function (chunk?: unknown, ...rest: unknown[]) {
      if (!self.active || self.streaming) return (self.original.end as (...a: unknown[]) => ServerResponse).call(res, chunk, ...rest);
      if (chunk !== undefined && typeof chunk !== 'function') self.hold(chunk);
      return res;
    } as ServerResponse['end'];
    res.flushHeaders = function () {
      if (!self.active || self.streaming) return self.original.flushHeaders.call(res);
      self.startStreaming();
    };
  }

  private hold(chunk: unknown): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    this.chunks.push(b);
    this.size += b.length;
  }

  /** A streaming answer cannot be held: it goes out now, and the authorizer sees it at the end. */
  private startStreaming(): void {
    this.streaming = true;
    this.restore();
    this.res.writeHead(this.status, this.headers);
    this.res.flushHeaders();
    for (const c of this.chunks.splice(0)) this.res.write(c);
  }

  private restore(): void {
    Object.assign(this.res, this.original);
  }

  private responseFacts(withBody: boolean): AuthzResponse {
    const headers = flatHeaders({ ...(this.res.getHeaders() as Record<string, string | string[] | number>), ...this.headers });
    const body = withBody && isJson(headers['Content-Type']) && this.size <= AUTHZ_MAX_BODY ? Buffer.concat(this.chunks) : null;
    return {
      ...this.request,
      ResponseStatusCode: this.hijacked && this.status === 200 ? 101 : this.status,
      ResponseBody: body && body.length ? body.toString('base64') : null,
      ResponseHeaders: headers,
    };
  }

  async finish(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    if (this.streaming || this.hijacked || this.res.headersSent) {
      this.restore();
      // Already on the wire: a denial can only cut the connection.
      try {
        await this.auth.authorizeResponse(this.responseFacts(false));
      } catch (err) {
        this.res.destroy(err as Error);
        throw err;
      }
      return;
    }
    this.restore();
    await this.auth.authorizeResponse(this.responseFacts(true));
    this.res.writeHead(this.status, this.headers);
    this.res.end(Buffer.concat(this.chunks));
  }

  abandon(): void {
    this.active = false;
    this.restore();
  }
}
