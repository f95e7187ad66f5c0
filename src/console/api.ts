// The console's only way to the daemon: the Engine API under /api on its own origin (the session
// cookie goes along by itself). Whole answers, JSON-lines streams and raw byte streams; one shared
// GET /events stream fans out to every view, so nothing polls.
import { JsonLines } from './streams.ts';

export const API = '/api/v1.51';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function check(res: Response): Promise<Response> {
  if (res.ok) return res;
  let message = `${res.status} ${res.statusText}`;
  try {
    const text = await res.text();
    message = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    // not JSON: the status line says enough
  }
  throw new ApiError(res.status, message);
}

export async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const init: RequestInit = { method, headers: { ...headers }, credentials: 'same-origin' };
  if (body instanceof Uint8Array) init.body = body as BodyInit;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  return check(await fetch(API + path, init));
}

export async function getJson<T>(path: string): Promise<T> {
  return (await call('GET', path)).json() as Promise<T>;
}

export async function postJson<T = unknown>(path: string, body?: unknown): Promise<T | undefined> {
  const res = await call('POST', path, body);
  const text = await res.text();
  return text ? (JSON.parse(text) as T) : undefined;
}

/** Reads a streamed answer chunk by chunk until it ends or `signal` aborts; resolves when it is over. */
export async function streamBytes(
  method: string,
  path: string,
  onChunk: (b: Uint8Array, res: Response) => void,
  signal: AbortSignal,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<void> {
  const init: RequestInit = { method, signal, headers: { ...headers }, credentials: 'same-origin' };
  if (body instanceof Uint8Array) init.body = body as BodyInit;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const res = await check(await fetch(API + path, init));
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onChunk(value, res);
    }
  } catch (err) {
    if (signal.aborted) return; // the view went away: the stream was cut on purpose
    throw err;
  }
}

/** A JSON-lines stream (events, stats, pull/build progress): each message to `onItem`. */
export function streamJson<T>(
  method: string,
  path: string,
  onItem: (m: T) => void,
  signal: AbortSignal,
  body?: unknown,
  headers?: Record<string, string>,
) {
  const lines = new JsonLines<T>();
  const text = new TextDecoder();
  return streamBytes(method, path, (b) => lines.push(text.decode(b, { stream: true })).forEach(onItem), signal, body, headers);
}

export interface EngineEvent {
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes?: Record<string, string> };
  time: number;
  timeNano: number;
}

type EventListener = (e: EngineEvent) => void;
const listeners = new Set<EventListener>();
let eventsAbort: AbortController | undefined;
export const recentEvents: EngineEvent[] = [];

/** Every view's events: one GET /events for the page, reopened after a cut (with `since`, so nothing is missed). */
export function onEvents(fn: EventListener): () => void {
  listeners.add(fn);
  if (!eventsAbort) openEvents(Math.floor(Date.now() / 1000));
  return () => listeners.delete(fn);
}

function openEvents(since: number): void {
  const abort = new AbortController();
  eventsAbort = abort;
  let last = since;
  streamJson<EngineEvent>(
    'GET',
    `/events?since=${since}`,
    (e) => {
      last = e.time;
      recentEvents.unshift(e);
      if (recentEvents.length > 200) recentEvents.length = 200;
      for (const l of listeners) l(e);
    },
    abort.signal,
  )
    .catch((err: Error) => console.warn('events stream:', err.message))
    .finally(() => {
      if (!abort.signal.aborted) setTimeout(() => openEvents(last), 1000); // a daemon restart: reconnect
    });
}

/** An exec'd shell over the console listener's websocket bridge to POST /exec/{id}/start. */
export async function execWebsocket(containerId: string, cmd: string[]): Promise<{ execId: string; ws: WebSocket }> {
  const created = await postJson<{ Id: string }>(`/containers/${containerId}/exec`, {
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: true,
    Cmd: cmd,
  });
  const execId = created!.Id;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${location.host}${API}/exec/${execId}/start`);
  ws.binaryType = 'arraybuffer';
  return { execId, ws };
}
