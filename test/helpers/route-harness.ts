// The shared pattern of the route unit tests (as logging/driver-suite.ts is for log drivers): one
// route module registered on a real ApiServer over a real HTTP server on loopback, with a fake
// backend that records every call and answers what the test scripted. Tests then check the wire:
// status, headers, JSON bodies, and exactly what reached the backend.
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { ApiServer } from '../../src/api/server.ts';
import type { Router } from '../../src/api/router.ts';
import { Logger } from '../../src/util/log.ts';

export interface Call {
  method: string;
  args: unknown[];
}

/**
 * A backend whose every method records its call and runs the scripted answer for that method
 * (a value — `undefined` for void — or a function of the arguments that may throw); a method the
 * script does not name throws, so a route calling something unexpected fails the test.
 */
export function fakeBackend<T extends object>(script: {
  [K in keyof T]?: T[K] extends (...a: infer A) => infer R ? ((...a: A) => Awaited<R> | R) | Awaited<R> : never;
}): { backend: T; calls: Call[] } {
  const calls: Call[] = [];
  const backend = new Proxy({} as T, {
    get(_t, prop) {
      if (typeof prop !== 'string' || prop === 'then') return undefined;
      // Synchronous: a scripted value serves sync and async methods alike (handlers await it).
      return (...args: unknown[]) => {
        calls.push({ method: prop, args });
        const answer = (script as Record<string, unknown>)[prop];
        if (!(prop in script)) throw new Error(`unexpected backend call: ${prop}`);
        return typeof answer === 'function' ? (answer as (...a: unknown[]) => unknown)(...args) : answer;
      };
    },
  });
  return { backend, calls };
}

export interface RouteResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: any;
}

export class RouteHarness {
  readonly logs = new PassThrough();
  readonly api: ApiServer;
  private server?: Server;

  constructor(register: (router: Router) => void, opts: { minApiVersion?: string } = {}) {
    this.logs.resume();
    this.api = new ApiServer(new Logger({ level: 'error', format: 'text', raw: false }, {}, this.logs), {
      serverVersion: '0.0.0-test',
      experimental: () => false,
      ...opts,
    });
    register(this.api.router);
  }

  private async port(): Promise<number> {
    if (!this.server) {
      this.server = createServer((req, res) => this.api.handleRequest(req, res));
      this.server.on('upgrade', (req, socket, head) => this.api.handleUpgrade(req, socket, head));
      await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    }
    return (this.server.address() as AddressInfo).port;
  }

  async request(
    method: string,
    path: string,
    opts: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<RouteResponse> {
    const port = await this.port();
    const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const headers: Record<string, string> = { ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}), ...opts.headers };
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined; // not JSON: tests that care look at `text`
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * A hijacked exchange (attach, exec start) as the docker CLI does it: an upgrade request, then
   * raw bytes both ways. Resolves once the head of the answer is in; `rest()` collects the stream
   * until the server closes it.
   */
  async hijack(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = { Upgrade: 'tcp' },
  ): Promise<{ head: string; socket: Socket; rest(): Promise<Buffer> }> {
    const port = await this.port();
    const payload = body === undefined ? '' : JSON.stringify(body);
    const socket = connect(port, '127.0.0.1');
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: engine\r\nConnection: Upgrade\r\n${extra}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
    let buf = Buffer.alloc(0);
    const ended = new Promise<void>((r) => socket.on('close', () => r()));
    const head = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        const text = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        socket.on('data', (more: Buffer) => (buf = Buffer.concat([buf, more])));
        resolve(text);
      };
      socket.on('data', onData);
      socket.on('error', reject);
    });
    return { head, socket, rest: async () => (await ended, buf) };
  }

  async close(): Promise<void> {
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}
