// The HTTP layer of the SDK: requests with query encoding, JSON and streamed bodies, error answers
// turned into EngineError, cancellation by AbortSignal, API version negotiation through /_ping
// (the lower of the daemon's API-Version and ours, unless a version was fixed), and hijacked
// connections (attach, exec start: `Upgrade: tcp`, then the raw socket as a Duplex). Whole-answer
// requests go direct on unix sockets and plain TCP (simple-http.ts, bun-fetch.ts); the rest
// through node:http (node-http-client.ts).
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { API_VERSION, compareVersions } from '../util/api-version.ts';
import { ConnectionError, EngineError, errorMessage } from './errors.ts';
import type { ConnectionSettings } from './host.ts';
import { collect } from './streams.ts';
import { fetchExchange, UNDER_BUN } from './bun-fetch.ts';
import { bunUpgrade, type HijackStream } from './bun-hijack.ts';
import { exchange, requestHead, upgradeExchange, type SimpleResponse } from './simple-http.ts';
import { connector, type Connector } from './transport.ts';
import { isReadable, NodeHttpClient } from './node-http-client.ts';

export type QueryValue = string | number | boolean | undefined | null | string[] | Record<string, unknown>;
export type Query = Record<string, QueryValue>;

export interface RequestOptions {
  query?: Query;
  /** A plain value is sent as JSON; a Buffer or string as is; a Readable is streamed (chunked). */
  body?: unknown;
  headers?: OutgoingHttpHeaders;
  signal?: AbortSignal;
  /** Send without the /v<version> prefix (only /_ping is ever sent so). */
  unversioned?: boolean;
}

/** Encodes a query: objects (filters) as JSON, booleans as 1/0, arrays as repeated keys. */
export function encodeQuery(q: Query | undefined): string {
  if (!q) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null) continue;
    const add = (s: string) => parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(s)}`);
    if (Array.isArray(v)) v.forEach(add);
    else if (typeof v === 'object') add(JSON.stringify(v));
    else if (typeof v === 'boolean') add(v ? '1' : '0');
    else add(String(v));
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** A hijack's answer: the connection after a 1xx/2xx/3xx head, else the whole error answer. */
interface UpgradeAnswer<S> {
  status: number;
  headers: Record<string, string>;
  stream?: S;
  body?: Buffer;
}

/** A request that can go direct: its head as text, and its parts for Bun's fetch. */
interface DirectRequest {
  head: string;
  body?: Buffer;
  url: string;
  headers: Record<string, string | number | string[] | undefined>;
}

export class HttpTransport {
  private readonly connect: Connector;
  /** Requests through node:http (streamed bodies and answers, TLS, ssh). */
  private readonly node: NodeHttpClient;
  /** Whole-answer requests skip node:http (simple-http.ts): on a unix socket or plain TCP. */
  private readonly direct: boolean;
  private negotiated?: Promise<string>;
  readonly hostLabel: string;
  private readonly prefix: string;

  constructor(
    readonly settings: ConnectionSettings,
    /** A fixed API version (ENGINE_API_VERSION, or the caller's); negotiated when absent. */
    private readonly fixedVersion?: string,
  ) {
    this.connect = connector(settings);
    this.node = new NodeHttpClient(this.connect, (e) => this.wrapError(e));
    const t = settings.target;
    this.direct = t.kind === 'unix' || (t.kind === 'tcp' && !settings.tls);
    this.prefix = t.kind === 'tcp' ? t.prefix : '';
    this.hostLabel =
      t.kind === 'unix'
        ? `unix://${t.path}`
        : t.kind === 'tcp'
          ? `${settings.tls ? 'https' : 'tcp'}://${t.host}:${t.port}`
          : `ssh://${t.user ? `${t.user}@` : ''}${t.host}${t.port ? `:${t.port}` : ''}`;
  }

  /** The API version requests use: fixed, or negotiated once through /_ping. */
  version(signal?: AbortSignal): Promise<string> {
    if (this.fixedVersion) return Promise.resolve(this.fixedVersion);
    this.negotiated ??= this.whole('GET', '/_ping', { unversioned: true, signal }).then(
      (res) => {
        const server = String(res.headers['api-version'] ?? '');
        return server && compareVersions(server, API_VERSION) < 0 ? server : API_VERSION;
      },
      (e) => {
        this.negotiated = undefined; // a later call tries again
        throw e;
      },
    );
    return this.negotiated;
  }

  private async url(path: string, opts: RequestOptions): Promise<string> {
    const v = opts.unversioned ? '' : `/v${await this.version(opts.signal)}`;
    return `${this.prefix}${v}${path}${encodeQuery(opts.query)}`;
  }

  private headers(opts: RequestOptions): OutgoingHttpHeaders {
    const h: OutgoingHttpHeaders = { 'User-Agent': 'engine-client/0.1', Host: 'engine', ...opts.headers };
    const b = opts.body;
    if (b !== undefined && !Buffer.isBuffer(b) && typeof b !== 'string' && !isReadable(b)) h['Content-Type'] ??= 'application/json';
    return h;
  }

  /** Sends a request; resolves with the response of a 1xx/2xx/3xx status, rejects with EngineError otherwise. */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<IncomingMessage> {
    const url = await this.url(path, opts);
    opts.signal?.throwIfAborted();
    return this.node.request({ method, path, url, headers: this.headers(opts), body: opts.body, signal: opts.signal });
  }

  private wrapError(e: NodeJS.ErrnoException): Error {
    if (e.name === 'AbortError') return e;
    if (
      e.code === 'ENOENT' ||
      e.code === 'ECONNREFUSED' ||
      e.code === 'EACCES' ||
      e.code === 'ENOTFOUND' ||
      e.code === 'EHOSTUNREACH' ||
      /^ssh exited/.test(e.message)
    )
      return new ConnectionError(this.hostLabel, e);
    return e;
  }

  /**
   * A request whose whole answer is read: directly on a fresh connection (simple-http.ts) when the
   * transport and the request allow it, else through node:http. Error statuses reject as request() does.
   */
  private async whole(method: string, path: string, opts: RequestOptions): Promise<Pick<SimpleResponse, 'headers' | 'body'>> {
    const d = await this.directHead(method, path, opts);
    if (d) {
      let res: SimpleResponse;
      try {
        res = await this.directExchange(method, d, opts.signal);
      } catch (e) {
        throw this.wrapError(e as NodeJS.ErrnoException);
      }
      if (res.status >= 400) throw new EngineError(res.status, errorMessage(res.body.toString('utf8'), res.status), method, path);
      return res;
    }
    const res = await this.request(method, path, opts);
    return { headers: res.headers as Record<string, string>, body: await collect(res) };
  }

  /** A direct exchange: Bun's fetch under Bun (bun-fetch.ts), else our own on a fresh connection. */
  private directExchange(
    method: string,
    d: DirectRequest,
    signal?: AbortSignal,
    onHead?: (status: number) => void,
  ): Promise<SimpleResponse> {
    const t = this.settings.target;
    if (UNDER_BUN && t.kind !== 'ssh') return fetchExchange(t, method, d.url, d.headers, d.body, signal, onHead);
    return exchange(this.connect(), d.head, d.body, signal, onHead);
  }

  /** The direct request head of a request, or undefined when it must go through node:http. */
  private async directHead(method: string, path: string, opts: RequestOptions, upgrade = false): Promise<DirectRequest | undefined> {
    const b = opts.body;
    if (!this.direct || isReadable(b)) return undefined;
    const url = await this.url(path, opts);
    opts.signal?.throwIfAborted();
    const body = b === undefined ? undefined : Buffer.isBuffer(b) ? b : Buffer.from(typeof b === 'string' ? b : JSON.stringify(b));
    const headers = this.headers(opts) as DirectRequest['headers'];
    const head = requestHead(method, url, headers, body?.length ?? 0, upgrade);
    return head === undefined ? undefined : { head, body, url, headers };
  }

  /**
   * A request answered in two steps, as POST /containers/{id}/wait is: resolves once the daemon has
   * answered with its head (the wait is registered), with the body to come when it is complete.
   */
  async bodyLater(method: string, path: string, opts: RequestOptions = {}): Promise<{ result: Promise<Buffer> }> {
    const d = await this.directHead(method, path, opts);
    if (!d) {
      const res = await this.request(method, path, opts);
      return { result: collect(res) };
    }
    return new Promise((resolve, reject) => {
      const all = this.directExchange(method, d, opts.signal, (status) => {
        if (status < 400)
          resolve({
            result: all.then(
              (r) => r.body,
              (e) => Promise.reject(this.wrapError(e as NodeJS.ErrnoException)),
            ),
          });
      });
      all.then(
        (r) => {
          if (r.status >= 400) reject(new EngineError(r.status, errorMessage(r.body.toString('utf8'), r.status), method, path));
        },
        (e) => reject(this.wrapError(e as NodeJS.ErrnoException)),
      );
    });
  }

  /** A request whose JSON answer is returned (undefined for an empty body, as 204s have). */
  async json<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const text = (await this.whole(method, path, opts)).body.toString('utf8');
    return (text.trim() ? JSON.parse(text) : undefined) as T;
  }

  /** A request whose answer is discarded. */
  async call(method: string, path: string, opts: RequestOptions = {}): Promise<void> {
    await this.whole(method, path, opts);
  }

  /**
   * A hijacked connection: the request goes out with `Upgrade: tcp`; after the daemon's 101 (or a
   * 200 from daemons that answer without upgrading) the connection is the returned Duplex. Ending
   * its writable side half-closes the connection (stdin EOF) while output keeps coming.
   */
  async hijack(method: string, path: string, opts: RequestOptions = {}): Promise<{ stream: Duplex; contentType: string }> {
    const d = await this.directHead(method, path, opts, true);
    if (d) return this.upgraded(method, path, upgradeExchange(this.connect(), d.head, d.body, opts.signal));
    const url = await this.url(path, opts);
    return this.node.hijack({ method, path, url, headers: this.headers(opts), body: opts.body, signal: opts.signal });
  }

  /** A hijack whose connection is never used as a node:stream: under Bun, Bun's own socket (bun-hijack.ts). */
  async hijackLight(method: string, path: string, opts: RequestOptions = {}): Promise<{ stream: HijackStream; contentType: string }> {
    const t = this.settings.target;
    const d = UNDER_BUN && t.kind !== 'ssh' ? await this.directHead(method, path, opts, true) : undefined;
    if (!d || t.kind === 'ssh') return this.hijack(method, path, opts);
    return this.upgraded(method, path, bunUpgrade(t, d.head, d.body, opts.signal));
  }

  private async upgraded<S>(
    method: string,
    path: string,
    exchange: Promise<UpgradeAnswer<S>>,
  ): Promise<{ stream: S; contentType: string }> {
    const r = await exchange.catch((e: unknown) => Promise.reject(this.wrapError(e as NodeJS.ErrnoException)));
    if (!r.stream) throw new EngineError(r.status, errorMessage((r.body ?? Buffer.alloc(0)).toString('utf8'), r.status), method, path);
    return { stream: r.stream, contentType: r.headers['content-type'] ?? '' };
  }

  /** Closes pooled connections (a CLI calls it before exiting; an idle keep-alive socket would hold the loop). */
  close(): void {
    this.node.close();
  }
}
