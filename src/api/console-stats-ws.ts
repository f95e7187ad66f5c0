// The console's live stats: a browser gives one origin six HTTP/1.1 connections, so a table with a
// sparkline per visible row cannot hold one `GET /containers/{id}/stats` each. Websockets do not
// count against that limit: the console listener takes a websocket on `/api[/vX]/containers/{id}/stats`
// and makes that very GET itself, in-process, through the API server (its routes, version checks and
// authorization plugins as for any client), passing the answer's bytes on in binary frames. A refusal
// closes the websocket with code 4000 + the HTTP status and the daemon's message as the reason.
// Closing the websocket ends the request, and the daemon's stats subscription with it.
import type * as Http from 'node:http';
import type { Socket } from 'node:net';
import { duplexPair, type Duplex } from 'node:stream';
import { http } from '../util/node-http.ts';
import type { ConsoleApi } from './console-exec-ws.ts';
import { closeFrame, encodeFrame, handshakeResponse, isWebsocketRequest, OP, readClientFrames } from './websocket.ts';

const STATS = /^(\/v[0-9.]+)?\/containers\/[^/]+\/stats$/;
const MAX_ERROR_BODY = 16 << 10;

/** Whether the upgrade is the console's stats websocket. */
export function isStatsWebsocket(req: Http.IncomingMessage): boolean {
  return req.method === 'GET' && STATS.test((req.url ?? '').split('?')[0]!) && isWebsocketRequest(req.headers);
}

/** An HTTP server that never listens: connections are handed to it in-process, its requests go to the API. */
export function inProcessApi(api: ConsoleApi): Http.Server {
  return http.createServer({ requestTimeout: 0 }, (req, res) => api.handleRequest(req, res, ''));
}

/** `req.url` is the API path and query (the console's /api prefix already taken off). */
export function bridgeStatsWebsocket(server: Http.Server, req: Http.IncomingMessage, socket: Duplex, head: Buffer): void {
  const [inner, outer] = duplexPair();
  server.emit('connection', inner);
  const get = http.request({
    method: 'GET',
    path: req.url,
    headers: { host: req.headers.host ?? 'console', 'user-agent': String(req.headers['user-agent'] ?? 'engine-console') },
    createConnection: () => outer as unknown as Socket,
  });
  let closed = false;
  const close = (code = 1000, reason = '') => {
    if (closed) return;
    closed = true;
    if (socket.writable) socket.end(closeFrame(code, reason));
    get.destroy();
    inner.destroy();
    outer.destroy();
  };
  socket.write(handshakeResponse(req.headers['sec-websocket-key'] as string));
  get.on('response', (res) => {
    if (res.statusCode !== 200) {
      // 404 for a container that is gone, an authorization plugin's refusal: its message goes along.
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (b: Buffer) => {
        if (size < MAX_ERROR_BODY) parts.push(b);
        size += b.length;
      });
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let message = text.trim();
        try {
          message = (JSON.parse(text) as { message?: string }).message ?? message;
        } catch {
          // not JSON: the text itself
        }
        close(4000 + (res.statusCode ?? 500), truncate(message, 120));
      });
      return;
    }
    res.on('data', (chunk: Buffer) => {
      if (closed) return;
      if (!socket.write(encodeFrame(OP.binary, chunk))) {
        res.pause();
        socket.once('drain', () => res.resume());
      }
    });
    res.on('end', () => close());
    res.on('error', () => close(1011));
  });
  get.on('error', () => close(1011)); // the in-process connection broke: nothing more to send
  get.end();

  // Data frames mean nothing here: the stream goes one way.
  readClientFrames(socket, head, { onMessage: () => undefined, onClose: (code) => close(code) });
  socket.on('close', () => close());
  socket.on('error', () => close()); // the browser's connection broke: the request ends with it
}

/** At most `max` bytes of UTF-8, cut on a character boundary (a close frame's reason is ≤ 123 bytes). */
function truncate(text: string, max: number): string {
  let out = text;
  while (Buffer.byteLength(out) > max) out = out.slice(0, -1);
  return out;
}
