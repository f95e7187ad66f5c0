// The web console's listener (`--console-addr host:port`): serves the console's built files
// (dist/console/) and hands `/api/...` to the API server in-process, so the console meets the same
// routes, version checks and authorization plugins as any client. The Docker API has no CSRF
// protection of its own, so every API request must come from the console's own page: its Host is one
// of the listener's names (no DNS rebinding), its Origin and Sec-Fetch-Site (when sent) say the same
// origin, and it carries the per-daemon secret the page's load set in a SameSite=Strict HttpOnly
// cookie. No CORS headers are ever sent. While no browser is connected nothing runs but the socket.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type * as Http from 'node:http';
import https, { type ServerOptions as HttpsOptions } from 'node:https';
import { isIP, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { bridgeExecWebsocket, isExecWebsocket, type ConsoleApi } from './console-exec-ws.ts';
import { bridgeStatsWebsocket, inProcessApi, isStatsWebsocket } from './console-stats-ws.ts';
import { clientErrorAnswer, jsonErrorResponse, type ParserError } from './client-error.ts';
import { KEEP_ALIVE_TIMEOUT_MS } from './listeners.ts';
import { invalidParameter } from '../errors.ts';
import type { Logger } from '../util/log.ts';
import { http } from '../util/node-http.ts';

export const CONSOLE_COOKIE = 'engine_console';
const API_PREFIX = '/api';
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  map: 'application/json',
};
// The page loads only its own files and talks only to its own origin; nobody may frame it.
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export interface ConsoleServerOptions {
  addr: string;
  /** HTTPS with the daemon's certificate (--tls/--tlsverify; with --tlsverify the browser must present a client certificate). */
  tls?: HttpsOptions;
  /** Where the session secret is kept (0600), so an open page survives a daemon restart; in memory only without it. */
  secretFile?: string;
  /** The directory of the built console (index.html and its assets); null when it was not built. */
  assetsDir: string | null;
  api: ConsoleApi;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
}

export interface ConsoleServer {
  address: string; // http://host:port
  close(): Promise<void>;
}

/** "127.0.0.1:9090", "[::1]:9090", "localhost:9090"; a bare ":9090" means loopback, never all addresses. */
export function parseConsoleAddr(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr);
  const port = Number(m?.[3]);
  if (!m || port > 65535) throw invalidParameter(`invalid console-addr ${JSON.stringify(addr)}: want host:port`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** The Host header values a request may carry: the listener's own names, never a DNS name that could be rebound. */
export function allowedHosts(host: string, port: number): Set<string> | 'ip-literals' {
  if (host === '0.0.0.0' || host === '::') return 'ip-literals';
  const names = new Set<string>();
  const add = (h: string) => names.add(`${isIP(h) === 6 ? `[${h}]` : h}:${port}`.toLowerCase());
  add(host);
  if (host === 'localhost' || host === '127.0.0.1' || host === '::1') ['localhost', '127.0.0.1', '::1'].forEach(add);
  return names;
}

function hostAllowed(hostHeader: string | undefined, allowed: Set<string> | 'ip-literals', port: number): boolean {
  if (!hostHeader) return false;
  const h = hostHeader.toLowerCase();
  if (allowed !== 'ip-literals') return allowed.has(h);
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(h);
  return !!m && Number(m[3]) === port && isIP(m[1] ?? m[2] ?? '') !== 0;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Why an API request is refused, or undefined when it comes from the console's own page. */
export function refusal(req: Http.IncomingMessage, secret: string, scheme = 'http'): string | undefined {
  const host = String(req.headers.host ?? '').toLowerCase();
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return `cross-site request refused (Sec-Fetch-Site: ${String(site)})`;
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `${scheme}://${host}`) return `request from another origin refused (${origin})`;
  const given = Buffer.from(cookieValue(req.headers.cookie, CONSOLE_COOKIE) ?? '');
  const want = Buffer.from(secret);
  if (given.length !== want.length || !timingSafeEqual(given, want))
    return 'missing or wrong console session cookie: load the console page first';
  return undefined;
}

/** The per-daemon session secret: read from its file, or made (32 random bytes) and written there with mode 0600. */
export async function sessionSecret(file: string | undefined, log: Pick<Logger, 'warn'>): Promise<string> {
  if (file) {
    const text = (
      await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') log.warn(`console: cannot read ${file}: ${err.message}; a new secret is made`);
        return '';
      })
    ).trim();
    if (/^[A-Za-z0-9_-]{43}$/.test(text)) return text;
  }
  const secret = randomBytes(32).toString('base64url');
  if (file)
    await writeFile(file, secret + '\n', { mode: 0o600 }).catch((err: Error) =>
      log.warn(`console: cannot keep the session secret in ${file} (${err.message}): open pages need a reload after a restart`),
    );
  return secret;
}

export async function startConsoleServer(opts: ConsoleServerOptions): Promise<ConsoleServer> {
  const { host, port } = parseConsoleAddr(opts.addr);
  const secret = await sessionSecret(opts.secretFile, opts.log);
  // Read at each request, never cached: once the browser is gone the daemon holds none of it.
  const asset = (name: string): Promise<Buffer | undefined> =>
    opts.assetsDir
      ? readFile(join(opts.assetsDir, name)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') opts.log.warn(`console: cannot read ${name}: ${err.message}`);
          return undefined;
        })
      : Promise.resolve(undefined);
  let boundPort = port;
  let allowed: Set<string> | 'ip-literals' = allowedHosts(host, port);
  const sockets = new Set<Socket>();
  let inner: Http.Server | undefined; // the stats websockets' in-process requests, made at the first one

  const deny = (res: Http.ServerResponse, status: number, message: string) => {
    const body = JSON.stringify({ message });
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
    res.end(body);
  };

  const serveAsset = async (req: Http.IncomingMessage, res: Http.ServerResponse, path: string) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return deny(res, 405, 'method not allowed');
    const name = path === '/' || path === '/index.html' ? 'index.html' : path.slice(1);
    // The .gz twins are served as the Content-Encoding of their file, never as files of their own.
    if (!ASSET_NAME.test(name) || name.endsWith('.gz')) return deny(res, 404, 'page not found');
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) && name !== 'index.html';
    const gz = gzip ? await asset(`${name}.gz`) : undefined;
    const data = gz ?? (await asset(name));
    if (!data) {
      if (name === 'index.html') return deny(res, 503, 'the console is not built: run `npm run build`');
      return deny(res, 404, 'page not found');
    }
    const headers: Record<string, string | number> = {
      ...PAGE_HEADERS,
      'Content-Type': TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
      'Content-Length': data.length,
    };
    if (gz) headers['Content-Encoding'] = 'gzip';
    if (name === 'index.html') {
      // The session: only a page of this origin gets the cookie back on its requests.
      headers['Set-Cookie'] = `${CONSOLE_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Strict${opts.tls ? '; Secure' : ''}`;
    }
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : data);
  };

  const scheme = opts.tls ? 'https' : 'http';
  const onRequest = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    if (!hostAllowed(req.headers.host, allowed, boundPort)) return deny(res, 421, `unknown host ${JSON.stringify(req.headers.host ?? '')}`);
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === API_PREFIX || path.startsWith(API_PREFIX + '/')) {
      const why = refusal(req, secret, scheme);
      if (why) {
        opts.log.debug('console: request refused', { uri: req.url, reason: why });
        req.resume();
        return deny(res, 403, why);
      }
      delete req.headers.cookie; // the console's secret is not the API's (nor an authorization plugin's) business
      req.url = req.url!.slice(API_PREFIX.length) || '/'; // the API (and any authorization plugin) sees what a socket client sends
      opts.api.handleRequest(req, res, '');
      return;
    }
    serveAsset(req, res, path).catch((err: Error) => {
      opts.log.warn(`console: ${err.message}`);
      if (!res.headersSent) deny(res, 500, err.message);
      else res.destroy();
    });
  };
  // The API listener's idle timeout: a browser reuses an idle connection the server would otherwise
  // close at Node's 5 s, and the request racing that close fails ("Failed to fetch").
  // Without a Host header Node would answer a bare 400 itself: onRequest answers its JSON 421 instead.
  const serverOptions = { requestTimeout: 0, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, requireHostHeader: false };
  const server = opts.tls ? https.createServer({ ...opts.tls, ...serverOptions }, onRequest) : http.createServer(serverOptions, onRequest);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('upgrade', (req: Http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node's own error listener leaves an upgraded socket: a client gone mid-answer (EPIPE,
    // ECONNRESET) must not become an uncaught error that ends the daemon.
    socket.on('error', (err: Error) => opts.log.debug('console: upgraded connection broke', { error: err.message }));
    const path = (req.url ?? '/').split('?')[0]!;
    const why = !hostAllowed(req.headers.host, allowed, boundPort)
      ? 'unknown host'
      : !path.startsWith(API_PREFIX + '/')
        ? 'page not found'
        : refusal(req, secret, scheme);
    if (why) {
      opts.log.debug('console: upgrade refused', { uri: req.url, reason: why });
      socket.end(jsonErrorResponse(why === 'unknown host' ? 421 : why === 'page not found' ? 404 : 403, why));
      return;
    }
    delete req.headers.cookie;
    req.url = req.url!.slice(API_PREFIX.length);
    if (isExecWebsocket(req)) bridgeExecWebsocket(opts.api, req, socket, head);
    else if (isStatsWebsocket(req)) bridgeStatsWebsocket((inner ??= inProcessApi(opts.api)), req, socket, head);
    else opts.api.handleUpgrade(req, socket, head, '');
  });
  // Without a listener Node closes a CONNECT without a word; nothing here takes one.
  server.on('connect', (_req: Http.IncomingMessage, socket: Duplex) => socket.end(jsonErrorResponse(405, 'method not allowed')));
  server.on('clientError', (err: ParserError, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy(); // the client is gone: nobody to answer
    const { status, message } = clientErrorAnswer(err);
    opts.log.debug('console: bad request', { status, error: message });
    socket.end(jsonErrorResponse(status, message));
    setTimeout(() => socket.destroy(), 5000).unref(); // a client that never reads its answer does not keep the socket
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => opts.log.warn(`console listener: ${err.message}`));
  const bound = server.address() as AddressInfo;
  boundPort = bound.port; // port 0: the kernel's choice
  allowed = allowedHosts(host, boundPort);
  const shown = isIP(bound.address) === 6 ? `[${bound.address}]` : bound.address;
  const address = `${scheme}://${shown}:${bound.port}`;
  opts.log.info(`web console listening on ${address}`);
  if (allowed === 'ip-literals' || ![...allowed].some((h) => h.startsWith('localhost:')))
    opts.log.warn(`the web console listens beyond loopback (${address}): anyone who reaches it and loads the page can drive the daemon`);
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
        inner?.closeAllConnections();
      }),
  };
}
