// Whole-answer requests under Bun (the `engine` executable is compiled with it): Bun's native
// fetch on the unix socket (its `unix` option) or plain TCP instead of node:net and our HTTP/1.1
// exchange (simple-http.ts). In Bun, node:net and node:stream are JavaScript compiled at start-up:
// `engine ps` spent ~5 ms of its ~27 ms of CPU loading them. Same answers: status, lower-case
// headers, the whole body; a wait's head is reported as soon as fetch has it. Streams, uploads,
// hijacks, TLS and ssh keep their Node paths.
import type { HostTarget } from './host.ts';
import type { SimpleResponse } from './simple-http.ts';

/** Running under Bun (a global Node has not). */
export const UNDER_BUN = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';

/** Headers fetch sets itself (framing, connection management). */
const DROPPED = new Set(['connection', 'content-length', 'transfer-encoding', 'upgrade']);

export async function fetchExchange(
  target: Extract<HostTarget, { kind: 'unix' | 'tcp' }>,
  method: string,
  url: string,
  headers: Record<string, string | number | readonly string[] | undefined>,
  body: Buffer | undefined,
  signal?: AbortSignal,
  onHead?: (status: number) => void,
): Promise<SimpleResponse> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined && !DROPPED.has(k.toLowerCase())) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
  const base =
    target.kind === 'unix' ? 'http://localhost' : `http://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const init: RequestInit & { unix?: string; decompress?: boolean } = {
    method,
    headers: h,
    body: body?.length || method === 'POST' || method === 'PUT' ? new Uint8Array(body ?? []) : undefined,
    signal,
    redirect: 'manual',
    decompress: false,
    ...(target.kind === 'unix' ? { unix: target.path } : {}),
  };
  let res: Response;
  try {
    res = await fetch(`${base}${url}`, init);
  } catch (e) {
    // Bun's words for a refused or missing socket ("ECONNREFUSED: Unable to connect. Is the computer
    // able to access the url?") become Node's, which ConnectionError quotes.
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) throw e;
    throw Object.assign(new Error(`connect ${code} ${target.kind === 'unix' ? target.path : `${target.host}:${target.port}`}`), { code });
  }
  onHead?.(res.status);
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => (out[k] = v));
  return { status: res.status, headers: out, body: Buffer.from(await res.arrayBuffer()) };
}
