// A test authorization plugin: speaks the plugin protocol on a unix socket (activation, AuthZReq,
// AuthZRes), records what it was asked, and answers with a policy the test sets. It can be stopped
// and started again on the same socket to test a plugin that goes away.
import { createServer, type Server } from 'node:http';
import { rm } from 'node:fs/promises';
import type { AuthzRequest, AuthzResponse, AuthzVerdict } from '../../src/types/plugins.ts';

export interface Seen {
  kind: 'req' | 'res';
  body: AuthzRequest | AuthzResponse;
}

export class TestAuthzPlugin {
  readonly seen: Seen[] = [];
  request: (r: AuthzRequest) => AuthzVerdict = () => ({ Allow: true });
  response: (r: AuthzResponse) => AuthzVerdict = () => ({ Allow: true });
  private server?: Server;

  constructor(readonly socketPath: string) {}

  async start(): Promise<void> {
    await rm(this.socketPath, { force: true });
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
        let answer: unknown;
        if (req.url === '/Plugin.Activate') answer = { Implements: ['authz'] };
        else if (req.url === '/AuthZPlugin.AuthZReq') {
          this.seen.push({ kind: 'req', body });
          answer = this.request(body);
        } else if (req.url === '/AuthZPlugin.AuthZRes') {
          this.seen.push({ kind: 'res', body });
          answer = this.response(body);
        } else {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/vnd.docker.plugins.v1+json' });
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((r) => this.server!.listen(this.socketPath, r));
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s)
      await new Promise<void>((r) => {
        s.close(() => r());
        s.closeAllConnections();
      });
  }

  /** The requests seen for a path (URIs carry the /v1.xx prefix). */
  requestsFor(method: string, pathPart: string): AuthzRequest[] {
    return this.seen
      .filter((s) => s.kind === 'req' && s.body.RequestMethod === method && s.body.RequestUri.includes(pathPart))
      .map((s) => s.body);
  }

  responsesFor(method: string, pathPart: string): AuthzResponse[] {
    return this.seen
      .filter((s) => s.kind === 'res' && s.body.RequestMethod === method && s.body.RequestUri.includes(pathPart))
      .map((s) => s.body as AuthzResponse);
  }
}

export function decodeBody(b: string | null): unknown {
  return b === null ? null : JSON.parse(Buffer.from(b, 'base64').toString('utf8'));
}
