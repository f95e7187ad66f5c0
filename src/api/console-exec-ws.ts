// The console's terminal: a browser cannot send `POST /exec/{id}/start` with `Upgrade: tcp`, so
// the console listener takes a websocket on `/api[/vX]/exec/{id}/start` and makes that very request
// itself, in-process, through the API server (its routes, version checks and authorization plugins
// as for any client), over a socket pair: the exec's raw stream goes out in binary frames, the
// browser's frames are the exec's stdin. Resizing is the ordinary `POST /exec/{id}/resize`.
import type * as Http from 'node:http';
import type { Socket } from 'node:net';
import { duplexPair, type Duplex } from 'node:stream';
import { http } from '../util/node-http.ts';
import { closeFrame, encodeFrame, handshakeResponse, isWebsocketRequest, OP, readClientFrames } from './websocket.ts';

/** What the console listener hands requests to: the API server. */
export interface ConsoleApi {
  handleRequest(req: Http.IncomingMessage, res: Http.ServerResponse, prefix: string): void;
  handleUpgrade(req: Http.IncomingMessage, socket: Duplex, head: Buffer, prefix: string): void;
}

const EXEC_START = /^(\/v[0-9.]+)?\/exec\/([A-Za-z0-9]+)\/start$/;

/** Whether the upgrade is the console's exec websocket (rather than one the API serves, e.g. attach/ws). */
export function isExecWebsocket(req: Http.IncomingMessage): boolean {
  return req.method === 'GET' && EXEC_START.test((req.url ?? '').split('?')[0]!) && isWebsocketRequest(req.headers);
}

/** `req.url` is the API path (the console's /api prefix already taken off). */
export function bridgeExecWebsocket(api: ConsoleApi, req: Http.IncomingMessage, socket: Duplex, head: Buffer): void {
  const path = (req.url ?? '').split('?')[0]!;
  const body = Buffer.from(JSON.stringify({ Detach: false, Tty: true }));
  const [inner, outer] = duplexPair();
  const start = new http.IncomingMessage(inner as unknown as Socket);
  start.method = 'POST';
  start.url = path;
  start.httpVersionMajor = 1;
  start.httpVersionMinor = 1;
  start.httpVersion = '1.1';
  start.headers = {
    host: req.headers.host ?? 'console',
    'user-agent': String(req.headers['user-agent'] ?? 'engine-console'),
    'content-type': 'application/json',
    'content-length': String(body.length),
    connection: 'Upgrade',
    upgrade: 'tcp',
  };
  socket.write(handshakeResponse(req.headers['sec-websocket-key'] as string));
  let closed = false;
  const close = (code = 1000) => {
    if (closed) return;
    closed = true;
    if (socket.writable) socket.end(closeFrame(code));
    outer.end();
  };
  // The API's answer: a status line and headers, then (after a 101) the raw stream of the exec.
  let header: Buffer | null = Buffer.alloc(0);
  const early: Buffer[] = [];
  outer.on('data', (chunk: Buffer) => {
    if (closed) return;
    if (header) {
      header = Buffer.concat([header, chunk]);
      const end = header.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(header.toString('latin1', 0, Math.min(end, 64)))?.[1];
      const rest = header.subarray(end + 4);
      header = null;
      if (status !== '101') {
        // An error answer (404, 409, an authorization plugin's refusal): its message goes to the terminal.
        const text = rest.toString('utf8');
        const message = /"message":\s*"((?:[^"\\]|\\.)*)"/.exec(text)?.[1] ?? text;
        socket.write(encodeFrame(OP.binary, Buffer.from(`exec: ${status}: ${message}\r\n`)));
        return close(1011);
      }
      if (rest.length) socket.write(encodeFrame(OP.binary, rest));
      for (const b of early.splice(0)) outer.write(b); // typed before the exec started
      return;
    }
    if (socket.writable) socket.write(encodeFrame(OP.binary, chunk));
  });
  outer.on('end', () => close());
  outer.on('error', () => close(1011));

  readClientFrames(socket, head, {
    onMessage: (payload) => {
      if (closed) return;
      if (header === null) outer.write(payload);
      else if (early.length < 256) early.push(payload);
    },
    onClose: (code) => close(code),
  });
  socket.on('close', () => {
    closed = true;
    outer.destroy();
  });
  socket.on('error', () => outer.destroy()); // the browser's connection broke: the exec's side ends with it
  outer.write(body);
  api.handleUpgrade(start, inner, Buffer.alloc(0), '');
}
