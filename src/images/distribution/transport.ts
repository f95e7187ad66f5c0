// HTTP(S) to registries over node:http/https: keep-alive agents per trust setting, proxies from the
// daemon configuration over the environment (Node's agent proxy support), redirects (credentials
// only to the same host), and errors worded like Go's net/http ones, which is what users and
// scripts know from dockerd: Get "https://host/v2/": http: server gave HTTP response to HTTPS client.
import { invalidParameter } from '../../errors.ts';
import { createHash } from 'node:crypto';
import type { Agent as HttpAgent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { http } from '../../util/node-http.ts';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import type { TlsSettings } from './registry-hosts.ts';

export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

/** Config values win over the environment (upper or lower case), as dockerd does (§8). */
export function effectiveProxies(config: ProxySettings, env: NodeJS.ProcessEnv = process.env): ProxySettings {
  const pick = (v: string | undefined, name: string) => v || env[name] || env[name.toLowerCase()] || undefined;
  const out: ProxySettings = {};
  const http = pick(config.httpProxy, 'HTTP_PROXY');
  const https = pick(config.httpsProxy, 'HTTPS_PROXY');
  const no = pick(config.noProxy, 'NO_PROXY');
  if (http) out.httpProxy = http;
  if (https) out.httpsProxy = https;
  if (no) out.noProxy = no;
  return out;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: Buffer | Readable;
  tls?: TlsSettings;
  signal?: AbortSignal;
  /** Idle time allowed with no bytes moving (connect, headers, body) before the request fails. */
  idleTimeoutMs?: number;
  /** Follow 30x redirects (default true). */
  redirects?: boolean;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
  /** The final URL after redirects. */
  url: string;
}

/** A transport failure (no HTTP response), worded like Go's *url.Error. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly tlsProblem: boolean,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

const TLS_VERIFY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
]);

const goOp = (method: string) => method.charAt(0).toUpperCase() + method.slice(1).toLowerCase();

/** Node error → the text after `Get "url": ` in Go's wording. */
export function describeNetError(
  err: NodeJS.ErrnoException & { reason?: string; host?: string; address?: string; port?: number },
  url: URL,
): { text: string; tls: boolean } {
  const code = err.code ?? '';
  const msg = err.message ?? String(err);
  if (code === 'EPROTO' && /wrong version number|packet length too long|http request/i.test(msg))
    return { text: 'http: server gave HTTP response to HTTPS client', tls: true };
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER') return { text: 'http: server gave HTTP response to HTTPS client', tls: true };
  if (TLS_VERIFY_CODES.has(code))
    return { text: 'tls: failed to verify certificate: x509: certificate signed by unknown authority', tls: true };
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return { text: 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid', tls: true };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return { text: `tls: failed to verify certificate: x509: ${err.reason ?? msg}`, tls: true };
  if (/ALERT_(\w+)/.test(code)) {
    const alert = /ALERT_(\w+)/.exec(code)![1]!.toLowerCase().replace(/_/g, ' ');
    return { text: `remote error: tls: ${alert}`, tls: true };
  }
  const target = `${err.address ?? url.hostname}:${err.port ?? (url.port || (url.protocol === 'https:' ? 443 : 80))}`;
  if (code === 'ECONNREFUSED') return { text: `dial tcp ${target}: connect: connection refused`, tls: false };
  // getaddrinfo refuses a name that cannot be a host name (too long, empty label) with EINVAL; Go's
  // resolver reports such names as not found.
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || (code === 'EINVAL' && (err as { syscall?: string }).syscall === 'getaddrinfo'))
    return { text: `dial tcp: lookup ${url.hostname}: no such host`, tls: false };
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return { text: `dial tcp ${target}: connect: no route to host`, tls: false };
  if (code === 'ECONNRESET') return { text: 'read: connection reset by peer', tls: false };
  if (code === 'ETIMEDOUT') return { text: `dial tcp ${target}: i/o timeout`, tls: false };
  return { text: msg, tls: /ssl|tls|certificate/i.test(msg) };
}

/**
 * Whether a request to `url` is handed to the proxy settings at all: some are set and the host is
 * not loopback (like Go's ProxyFromEnvironment, localhost and loopback never go through a proxy).
 * NO_PROXY is read by the agent afterwards.
 */
export function mayUseProxy(url: URL, proxies: ProxySettings): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || /^127\./.test(host) || host === '::1';
  return !loopback && !!(proxies.httpProxy || proxies.httpsProxy || proxies.noProxy);
}

export class RegistryTransport {
  private readonly agents = new Map<string, HttpAgent>();

  constructor(private readonly proxies: () => ProxySettings = () => effectiveProxies({})) {}

  /** The proxies in force now (for a worker thread's own transport, worker-fetch.ts). */
  proxySettings(): ProxySettings {
    return this.proxies();
  }

  private agentFor(url: URL, tls: TlsSettings | undefined): HttpAgent {
    const proxies = this.proxies();
    const proxyEnv: Record<string, string> = {};
    if (proxies.httpProxy) proxyEnv.HTTP_PROXY = proxies.httpProxy;
    if (proxies.httpsProxy) proxyEnv.HTTPS_PROXY = proxies.httpsProxy;
    if (proxies.noProxy) proxyEnv.NO_PROXY = proxies.noProxy;
    const useProxy = mayUseProxy(url, proxies);
    const https = url.protocol === 'https:';
    const id = createHash('sha256')
      .update(JSON.stringify([https, useProxy ? proxyEnv : {}, tls?.verify ?? true, tls?.ca ?? null]))
      .update(tls?.cert ?? '')
      .update(tls?.key ?? '')
      .digest('hex');
    let agent = this.agents.get(id);
    if (!agent) {
      const common = { keepAlive: true, maxSockets: 32, ...(useProxy ? { proxyEnv } : {}) };
      agent = https
        ? new HttpsAgent({
            ...common,
            rejectUnauthorized: tls?.verify ?? true,
            ...(tls?.ca ? { ca: tls.ca } : {}),
            ...(tls?.cert ? { cert: tls.cert, key: tls.key } : {}),
          })
        : new http.Agent(common);
      this.agents.set(id, agent);
    }
    return agent;
  }

  /** One request; follows redirects. Rejects with TransportError when no response came back. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      // The host part came from the request (a registry address, an image name): a client's mistake.
      throw invalidParameter(`invalid registry address: ${JSON.stringify(req.url)}`);
    }
    let method = req.method;
    let headers = { ...req.headers };
    let body = req.body;
    let tls = req.tls;
    for (let hop = 0; ; hop++) {
      const res = await this.once(method, url, headers, body, tls, req);
      const location = res.headers.location;
      if (req.redirects === false || ![301, 302, 303, 307, 308].includes(res.status) || !location || hop >= 10) {
        return res;
      }
      res.body.resume();
      const next = new URL(location, url);
      if (next.host !== url.host) {
        // Never hand registry credentials to another host (blob storage, CDN).
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
        tls = undefined;
      }
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      url = next;
    }
  }

  private once(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: Buffer | Readable | undefined,
    tls: TlsSettings | undefined,
    req: HttpRequest,
  ): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      if (req.signal?.aborted) return reject(req.signal.reason ?? new Error('aborted'));
      const send = url.protocol === 'https:' ? httpsRequest : http.request;
      const outHeaders: Record<string, string> = { 'User-Agent': 'engine/registry-client', ...headers };
      if (Buffer.isBuffer(body)) outHeaders['Content-Length'] = String(body.length);
      const r = send(url, { method, headers: outHeaders, agent: this.agentFor(url, tls), timeout: req.idleTimeoutMs ?? 60_000 });
      const onAbort = () => r.destroy(req.signal?.reason instanceof Error ? req.signal.reason : new Error('request canceled'));
      req.signal?.addEventListener('abort', onAbort, { once: true });
      r.on('timeout', () => r.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
      r.on('response', (res) => {
        res.on('close', () => req.signal?.removeEventListener('abort', onAbort));
        // The idle timeout keeps guarding the body: a registry that stops sending fails the read.
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: res, url: url.toString() });
      });
      r.on('error', (err: NodeJS.ErrnoException) => {
        req.signal?.removeEventListener('abort', onAbort);
        if (req.signal?.aborted) return reject(err);
        const { text, tls: tlsProblem } = describeNetError(err, url);
        reject(new TransportError(`${goOp(method)} "${url.toString()}": ${text}`, err.code ?? 'UNKNOWN', tlsProblem));
      });
      if (body === undefined) r.end();
      else if (Buffer.isBuffer(body)) r.end(body);
      else {
        body.on('error', (e) => r.destroy(e));
        body.pipe(r);
      }
    });
  }

  close(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }
}

/** Reads a whole (small) response body, refusing more than `limit` bytes. */
export async function readAll(res: IncomingMessage, limit = 8 << 20): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > limit) {
      res.destroy();
      throw new Error(`response body larger than ${limit} bytes`);
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}
