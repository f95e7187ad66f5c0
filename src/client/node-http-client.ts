// The SDK's requests through node:http, for what cannot go direct (streamed bodies and answers,
// TLS, ssh): a keep-alive agent whose connections the transport opens, the AbortSignal handled
// here so that an abort after the answer began ends the body with the AbortError itself, error
// statuses turned into EngineError, and hijacks (`Upgrade: tcp`, then the raw socket as a Duplex).
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { EngineError, errorMessage } from './errors.ts';
import { collect } from './streams.ts';
import type { Connector } from './transport.ts';

// node:http loads on first use, not at start-up: a CLI command that never reaches the daemon
// (--version, usage errors) does not pay for it, and the bundle has no HTTP state before main runs
// (see src/util/node-http.ts for why it is required rather than imported).
let httpModule: typeof import('node:http') | undefined;
const http = () => (httpModule ??= process.getBuiltinModule('node:http') as typeof import('node:http'));

export function isReadable(b: unknown): b is Readable {
  return !!b && typeof (b as Readable).pipe === 'function' && typeof (b as Readable).on === 'function';
}

function abortError(signal: AbortSignal): Error {
  const r = signal.reason as unknown;
  return r instanceof Error ? r : new DOMException('This operation was aborted', 'AbortError');
}

/** One request for node:http: `url` is the full path sent, `path` the API path errors name. */
export interface NodeRequest {
  method: string;
  path: string;
  url: string;
  headers: OutgoingHttpHeaders;
  body: unknown;
  signal?: AbortSignal | undefined;
}

export class NodeHttpClient {
  private pool?: HttpAgent;

  constructor(
    private readonly connect: Connector,
    /** Connection failures → ConnectionError (the transport's words for them). */
    private readonly wrapError: (e: NodeJS.ErrnoException) => Error,
  ) {}

  /** The keep-alive pool of node:http, made on first use (a CLI run that needs none never loads node:http). */
  private get agent(): HttpAgent {
    if (this.pool) return this.pool;
    // servername '' (the TLS connector sets its own): otherwise the agent derives one from the Host
    // header through net.isIP, whose IPv6 regex costs a CLI run ~5 ms of compilation.
    const agent = new (http().Agent)({ keepAlive: true, maxSockets: 16, servername: '' } as import('node:http').AgentOptions);
    // The agent opens every pooled connection through our transport (unix, tcp, tls, ssh).
    (agent as unknown as { createConnection: Connector }).createConnection = this.connect;
    return (this.pool = agent);
  }

  private send(req: ClientRequest, body: unknown): void {
    if (body === undefined) req.end();
    else if (isReadable(body)) body.pipe(req);
    else if (Buffer.isBuffer(body) || typeof body === 'string') req.end(body);
    else req.end(JSON.stringify(body));
  }

  /** Sends a request; resolves with the response of a 1xx/2xx/3xx status, rejects with EngineError otherwise. */
  request(r: NodeRequest): Promise<IncomingMessage> {
    const { method, path } = r;
    return new Promise((resolve, reject) => {
      // The signal is handled here rather than by node:http: an abort after the answer began then
      // ends the body's iteration with the AbortError itself, not with a connection reset.
      const signal = r.signal;
      const onAbort = () => {
        const reason = abortError(signal!);
        req.destroy(reason);
        current?.destroy(reason);
      };
      let current: IncomingMessage | undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      const req = http().request({ agent: this.agent, method, path: r.url, headers: r.headers }, (res) => {
        current = res;
        res.once('close', () => signal?.removeEventListener('abort', onAbort));
        const status = res.statusCode ?? 0;
        if (status < 400) return resolve(res);
        collect(res).then((b) => reject(new EngineError(status, errorMessage(b.toString('utf8'), status), method, path)), reject);
      });
      req.on('error', (e: NodeJS.ErrnoException) => reject(this.wrapError(e)));
      this.send(req, r.body);
    });
  }

  /** A hijacked connection on a connection of its own (no pool): after a 101, or a 200 from daemons that answer without upgrading. */
  hijack(r: NodeRequest): Promise<{ stream: Duplex; contentType: string }> {
    const { method, path } = r;
    return new Promise((resolve, reject) => {
      const headers = { ...r.headers, Connection: 'Upgrade', Upgrade: 'tcp' };
      const req = http().request(
        { createConnection: this.connect, method, path: r.url, headers, signal: r.signal } as import('node:http').RequestOptions,
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 400) {
            collect(res).then((b) => reject(new EngineError(status, errorMessage(b.toString('utf8'), status), method, path)), reject);
            return;
          }
          // No upgrade: the response body carries the stream; the request side carries nothing more.
          resolve({ stream: res.socket as Duplex, contentType: String(res.headers['content-type'] ?? '') });
        },
      );
      req.on('upgrade', (res, socket, head) => {
        if (head.length) socket.unshift(head);
        resolve({ stream: socket, contentType: String(res.headers['content-type'] ?? '') });
      });
      req.on('error', (e: NodeJS.ErrnoException) => reject(this.wrapError(e)));
      this.send(req, r.body);
    });
  }

  /** Closes pooled connections. */
  close(): void {
    this.pool?.destroy();
  }
}
