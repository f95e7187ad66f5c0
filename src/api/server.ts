// The HTTP front: version prefix handling, common headers, routing, and the single place where
// thrown errors become {"message": …} responses. Listeners (unix, tcp, tls, fd) feed it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { http } from '../util/node-http.ts';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { EngineError, messageOf, statusOf } from '../errors.ts';
import type { Logger } from '../util/log.ts';
import { Query, discardUnreadBody } from './http.ts';
import { Router, type RequestContext } from './router.ts';
import { API_VERSION, MIN_API_VERSION, compareVersions } from '../util/api-version.ts';
import { authorize, type RequestAuthorizer } from './authz.ts';
import { requestEnded, requestStarted } from '../util/loop-watch.ts';

export interface ApiServerOptions {
  serverVersion: string;
  experimental: () => boolean;
  /** Authorization plugins around every routed request (when any is configured). */
  authorizer?: RequestAuthorizer;
  /** The oldest API version served (DOCKER_MIN_API_VERSION); default MIN_API_VERSION. */
  minApiVersion?: string;
}

const VERSIONED = /^\/v([0-9]+(?:\.[0-9]+)*)(\/.*)$/;
// A request path that WHATWG URL parsing would return unchanged: no %-escapes, backslashes,
// characters it would escape, dot segments, or a leading `//` (read as a host). Such paths (nearly
// all) skip the URL parser.
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;

/** The path and query of a request target, as `new URL(target, base)` would give them. */
export function splitTarget(target: string): { pathname: string; searchParams: URLSearchParams } {
  const q = target.indexOf('?');
  const pathname = q < 0 ? target : target.slice(0, q);
  const search = q < 0 ? '' : target.slice(q + 1);
  if (PLAIN_PATH.test(pathname) && !DOT_SEGMENT.test(pathname) && !search.includes('#'))
    return { pathname, searchParams: new URLSearchParams(search) };
  return new URL(target, 'http://engine');
}

export class ApiServer {
  readonly router = new Router();
  private readonly log: Logger;
  private readonly opts: ApiServerOptions;
  /** Requests of clients older than API 1.24: their errors are answered as plain text. */
  private readonly plainTextErrors = new WeakSet<IncomingMessage>();
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(log: Logger, opts: ApiServerOptions) {
    this.log = log.child({ module: 'api' });
    this.opts = opts;
  }

  /** Node's 'request' event. `prefix` is the listener's path prefix (tcp://host:port/prefix). */
  handleRequest(req: IncomingMessage, res: ServerResponse, prefix = ''): void {
    this.dispatch(req, res, prefix).catch((err) => this.log.error('request failed', { error: err }));
  }

  /** Node's 'upgrade' event: hijacked streams (attach, exec start). The handler owns the socket. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, prefix = ''): void {
    if (head.length) socket.unshift(head);
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as Socket);
    res.shouldKeepAlive = false;
    this.dispatch(req, res, prefix, socket as Socket).catch((err) => {
      this.log.error('upgrade request failed', { error: err });
      socket.destroy();
    });
  }

  /** Node's 'connect' event: no route takes CONNECT, so it is answered like any unknown route and closed. */
  handleConnect(req: IncomingMessage, socket: Duplex, head: Buffer, prefix = ''): void {
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as Socket);
    res.shouldKeepAlive = false;
    res.once('finish', () => socket.end());
    this.dispatch(req, res, prefix).catch((err) => {
      this.log.error('CONNECT request failed', { error: err });
      socket.destroy();
    });
  }

  /** Resolves once no request is being handled (for graceful shutdown). */
  drained(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, prefix: string, socket?: Socket): Promise<void> {
    this.inFlight++;
    requestStarted(req, req.method, req.url);
    const started = this.log.enabled('debug') ? process.hrtime.bigint() : 0n;
    try {
      res.setHeader('Server', `Engine/${this.opts.serverVersion} (linux)`);
      res.setHeader('Api-Version', API_VERSION);
      res.setHeader('Ostype', 'linux');
      res.setHeader('Docker-Experimental', String(this.opts.experimental()));
      await this.route(req, res, prefix, socket);
    } catch (err) {
      // An answer given before the body was read would be lost to a client still writing it (the
      // close after the answer resets the connection), so the rest of the body is read first.
      if (!socket) await discardUnreadBody(req);
      this.writeError(req, res, err);
    } finally {
      requestEnded(req);
      this.inFlight--;
      if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
      if (started && this.log.enabled('debug')) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        this.log.debug('request', { method: req.method, uri: req.url, status: res.statusCode, ms: ms.toFixed(1) });
      }
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, prefix: string, socket?: Socket): Promise<void> {
    let url: { pathname: string; searchParams: URLSearchParams };
    try {
      url = splitTarget(req.url ?? '/');
    } catch {
      throw new EngineError('INVALID_PARAMETER', `invalid request URI: ${JSON.stringify((req.url ?? '').slice(0, 100))}`);
    }
    let path = url.pathname;
    if (prefix) {
      if (path !== prefix && !path.startsWith(prefix + '/')) throw new EngineError('NOT_FOUND', 'page not found');
      path = path.slice(prefix.length) || '/';
    }
    path = path.replace(/\/{2,}/g, '/');
    let version = API_VERSION;
    const m = VERSIONED.exec(path);
    if (m) {
      version = m[1]!;
      path = m[2]!;
      if (compareVersions(version, API_VERSION) > 0) {
        throw new EngineError('INVALID_PARAMETER', `client version ${version} is too new. Maximum supported API version is ${API_VERSION}`);
      }
      const min = this.opts.minApiVersion ?? MIN_API_VERSION;
      if (compareVersions(version, min) < 0) {
        // As dockerd: a client older than 1.24 gets its errors as plain text, readable by it.
        if (compareVersions(version, MIN_API_VERSION) < 0) this.plainTextErrors.add(req);
        throw new EngineError(
          'INVALID_PARAMETER',
          `client version ${version} is too old. Minimum supported API version is ${min}, please upgrade your client to a newer version`,
        );
      }
    } else if (/^\/v[0-9][^/]*\//.test(path)) {
      throw new EngineError('INVALID_PARAMETER', `malformed API version in path ${JSON.stringify(path.split('/')[1])}`);
    }
    const method = req.method ?? 'GET';
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const found = this.router.match(method, path);
    if (!found.handler) {
      if (found.pathExists) {
        res.setHeader('Allow', 'see API documentation');
        throw new EngineError('NOT_FOUND', `page not found: ${method} is not supported on ${path}`);
      }
      throw new EngineError('NOT_FOUND', 'page not found');
    }
    const ctx: RequestContext = {
      req,
      res,
      params: found.params,
      query: new Query(url.searchParams),
      version,
      ...(socket ? { socket } : {}),
    };
    const auth = this.opts.authorizer;
    const session = auth?.enabled ? await authorize(auth, req, res, socket) : undefined;
    try {
      await found.handler(ctx);
    } catch (err) {
      session?.abandon();
      throw err;
    }
    await session?.finish();
  }

  private writeError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    const status = statusOf(err);
    const message = messageOf(err);
    if (clientGone(req, res)) {
      // The client closed or reset its connection (or the parser already answered a broken body):
      // the failure is the disconnect, not the handler's, and nobody is left to read an answer.
      this.log.debug('client went away before the answer', { method: req.method, uri: req.url, error: message });
      res.destroy();
      return;
    }
    if (status >= 500)
      this.log.error('handler error', {
        method: req.method,
        uri: req.url,
        status,
        error: message,
        stack: err instanceof EngineError ? undefined : (err as Error)?.stack,
      });
    else this.log.debug('handler error', { method: req.method, uri: req.url, status, error: message });
    if (res.headersSent) {
      // Mid-stream failure: the status line is gone; the stream's own error framing (if any) was the
      // handler's job. All that is left is to end the response.
      res.end();
      return;
    }
    if (this.plainTextErrors.has(req)) {
      // Go's http.Error: the message and a newline as text.
      const text = req.method === 'HEAD' ? '' : `${message}\n`;
      res.writeHead(status, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
        'Content-Length': Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    const body = req.method === 'HEAD' || status === 304 ? '' : JSON.stringify({ message });
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }
}

/** Nothing more can reach the client: its socket is closed, reset, or already ended by us. */
function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  const socket = req.socket;
  return res.destroyed || socket.destroyed || !socket.writable;
}
