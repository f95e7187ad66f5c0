// A layer's GET done by its stage worker (stage-worker.ts) instead of the daemon's main thread: the
// main thread resolves the request (URL, credentials, TLS settings, proxies: registry-client.ts)
// and the worker sends it through its own RegistryTransport, so the bytes of a download never
// cross threads and the socket buffers' garbage stays in the worker's small heap. Each layer
// receives on its own thread: under load, the main thread is no longer a serial step every byte of
// every layer waits for. Anything but a 200 is left to the main thread (its error wording, auth
// refresh): the worker answers the status and the pull repeats the GET the usual way.
import type { TlsSettings } from '../registry-hosts.ts';
import { mayUseProxy, RegistryTransport, TransportError, type ProxySettings } from '../transport.ts';
import { socketGet, socketGetFits } from './socket-get.ts';

/** What the worker needs to GET a blob. */
export interface BlobFetch {
  url: string;
  headers: Record<string, string>;
  tls: TlsSettings;
  proxies: ProxySettings;
  size: number;
  digest: string;
}

/** How a worker's download failed, sent back to be rebuilt as the same error on the main thread. */
export interface FetchFailure {
  message: string;
  code?: string;
  /** A TransportError (no response): `tlsProblem` as it had. */
  transport?: { tlsProblem: boolean };
  /** The registry's Content-Length is not the manifest's size: not retried. */
  badLength?: boolean;
}

export function failureOf(err: unknown): FetchFailure {
  const e = err as NodeJS.ErrnoException;
  if (err instanceof TransportError) return { message: err.message, code: err.code, transport: { tlsProblem: err.tlsProblem } };
  return {
    message: e?.message ?? String(err),
    ...(e?.code ? { code: e.code } : {}),
    ...((err as { badLength?: boolean })?.badLength ? { badLength: true } : {}),
  };
}

/** The error a main-thread download would have thrown. */
export function errorOf(f: FetchFailure): Error {
  if (f.transport) return new TransportError(f.message, f.code ?? 'UNKNOWN', f.transport.tlsProblem);
  return Object.assign(new Error(f.message), f.code ? { code: f.code } : {});
}

let transport: RegistryTransport | null = null;
let proxiesKey = '';

/** One transport per worker (kept-alive connections for its next layer), renewed when the proxies change. */
function transportFor(proxies: ProxySettings): RegistryTransport {
  const key = JSON.stringify(proxies);
  if (!transport || key !== proxiesKey) {
    transport?.close();
    transport = new RegistryTransport(() => proxies);
    proxiesKey = key;
  }
  return transport;
}

export interface FetchHooks {
  /** The response came (200); `reusedBuffer`: the chunks are views of one reused buffer (socket-get.ts), not fresh allocations. */
  response(how: { reusedBuffer: boolean }): void;
  /** Every received chunk, in order: valid until this returns or the promise it returns settles (it may be a reused buffer). */
  chunk(c: Buffer): Promise<void> | void;
  /** All bytes are in. */
  received(): void;
}

/**
 * GETs the blob; answers the HTTP status when it is not 200 (the body discarded), else 200 once all
 * bytes went to `hooks.chunk`. From a plain-HTTP registry the bytes come through socket-get.ts;
 * whatever it declines goes through the worker's RegistryTransport.
 */
export async function fetchBlob(f: BlobFetch, signal: AbortSignal, hooks: FetchHooks): Promise<number> {
  const url = new URL(f.url);
  if (process.env.ENGINE_PULL_SOCKET_GET !== '0' && socketGetFits(url, mayUseProxy(url, f.proxies))) {
    const r = await socketGet(url, f.headers, f.size, signal, {
      response: () => hooks.response({ reusedBuffer: true }),
      chunk: hooks.chunk,
    });
    if (r === 'done') {
      hooks.received();
      return 200;
    }
  }
  // Buffers arrive as plain Uint8Arrays (structured clone).
  const tls: TlsSettings = {
    ...f.tls,
    ...(f.tls.cert ? { cert: Buffer.from(f.tls.cert) } : {}),
    ...(f.tls.key ? { key: Buffer.from(f.tls.key) } : {}),
  };
  const res = await transportFor(f.proxies).request({ method: 'GET', url: f.url, headers: f.headers, tls, signal });
  if (res.status !== 200) {
    res.body.destroy();
    return res.status;
  }
  const declared = res.headers['content-length'];
  if (declared !== undefined && Number(declared) !== f.size) {
    res.body.destroy();
    throw Object.assign(new Error(`blob ${f.digest}: the registry sent ${declared} bytes, the manifest says ${f.size}`), {
      badLength: true,
    });
  }
  hooks.response({ reusedBuffer: false });
  let received = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > f.size) throw new Error(`blob ${f.digest}: more data than the ${f.size} bytes announced`);
      await hooks.chunk(chunk);
    }
  } catch (err) {
    // As the main thread's download words it (pull.ts): a cut connection is an unexpected EOF.
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ECONNRESET' || e.message === 'aborted') throw Object.assign(new Error('unexpected EOF'), { code: 'ECONNRESET' });
    throw err;
  }
  if (received !== f.size) throw new Error('unexpected EOF');
  hooks.received();
  return 200;
}
