// The manager endpoint other nodes talk to, HTTPS on the node's listen address (2377 by default),
// and its client. Every connection presents the manager's node certificate; a joining node fetches
// the CA first without trusting it (GET /ca), checks it against the digest in its join token, then
// joins with the CA pinned (POST /join, the token's secret decides the role). Afterwards nodes call
// with their own certificate (mutual TLS): POST /heartbeat, /promote (a joining manager's etcd
// learner becomes a voter) and /leave, identified by the certificate's CN; POST /logs streams the
// logs of the node's tasks to a manager (log-forward.ts; workers serve an endpoint with only that).
import { Agent, createServer, request, type Server } from 'node:https';
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { EngineError, invalidParameter, messageOf, statusOf, unauthorized, unavailable } from '../../errors.ts';
import { decodeStruct, type Kind } from '../../oci/wire-schema.ts';
import type { Logger } from '../../util/log.ts';
import { identityOf, type CertIdentity, type NodeRole } from '../ca/ca.ts';
import type { NodeCerts, RemoteManager } from './local-state.ts';
import { formatHostPort, type HostPort } from './addresses.ts';
import type { AgentSyncRequest, SyncAnswer } from '../manager/services-api.ts';

export interface JoinRequest {
  token: string;
  publicKeyPem: string;
  /** host:port of the joining node's advertise address, and its listen address. */
  advertiseAddr: string;
  listenAddr: string;
  dataPathAddr: string;
  description: Record<string, unknown>;
  availability?: string;
}

export interface JoinResponse {
  nodeId: string;
  clusterId: string;
  role: NodeRole;
  certPem: string;
  caPem: string;
  managers: RemoteManager[];
  /** The node's advertise address as the manager recorded it (detected when the node sent none). */
  advertiseAddr?: string;
  /** For a new manager: the etcd member list to start with. */
  etcd?: { initialCluster: string; clusterToken: string };
}

/** What a node reports with each heartbeat: its Description.TLSInfo (a root rotation waits on it). */
export interface HeartbeatRequest {
  tlsInfo?: Record<string, unknown>;
}

/** POST /renew's answer: the node's new certificate (leaf and chain) and the cluster's root. */
export interface RenewResponse {
  certPem: string;
  trustRoot: string;
}

export interface HeartbeatResponse {
  managers: RemoteManager[];
  /** Seconds until the next heartbeat is due. */
  periodSeconds: number;
  /** The node's role in the store; when it differs from its certificate's, a certificate for it. */
  role?: NodeRole;
  certPem?: string;
  /** For a node promoted to manager: the etcd member list to start its (learner) member with. */
  etcd?: { initialCluster: string; clusterToken: string };
  /** The cluster's root and the key certificates should be issued by (another: the node renews). */
  ca?: { trustRoot: string; issuerKey: string };
}

export interface EndpointHandler {
  caPem(): string;
  /** `from`: the address the request came from (an unspecified advertise address is replaced by it). */
  join(req: JoinRequest, from: string | undefined): Promise<JoinResponse>;
  /** `certPem`: the certificate the node presented (a role change reissues it with the same key). */
  heartbeat(node: CertIdentity, certPem: string, body?: HeartbeatRequest): Promise<HeartbeatResponse>;
  /** A node renews its certificate (same identity, the key it sends). */
  renew?(node: CertIdentity, certPem: string, body: { publicKeyPem?: unknown }): Promise<RenewResponse>;
  /** A manager that joined as an etcd learner asks to become a voting member once it has caught up. */
  promote(node: CertIdentity): Promise<void>;
  /** `abort`: a join that did not complete; the node and its etcd member are removed. */
  leave(node: CertIdentity, abort: boolean): Promise<void>;
  /** Overlay networks for workers, which hold no store (cluster/networks.ts serveRemote). */
  overlay(node: CertIdentity, op: string, body: unknown): Promise<unknown>;
  /** Autolock: a manager fetches the unlock key another manager holds (managers only). */
  unlockKey(node: CertIdentity): Promise<{ UnlockKey: string }>;
  /** A node's agent: its task states in, the tasks assigned to it out. */
  agentSync(node: CertIdentity, body: AgentSyncRequest): Promise<SyncAnswer>;
  /** A manager asks for the logs of tasks this node runs (log-forward.ts): streamed as JSON lines. */
  logs?(node: CertIdentity, body: unknown, signal: AbortSignal): Promise<AsyncIterable<Buffer>>;
}

/** POST /logs: a stream, not one JSON answer; it ends when the manager drops the request. */
async function streamLogs(handler: EndpointHandler, node: CertIdentity, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const lines = await handler.logs!(node, await readBody(req), abort.signal);
  res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
  res.flushHeaders();
  for await (const chunk of lines) {
    if (abort.signal.aborted) break;
    if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
  }
  res.end();
}

const MAX_BODY = 1 << 20;

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy(new Error('request body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {});
      } catch (err) {
        reject(new EngineError('INVALID_PARAMETER', 'invalid JSON body', { cause: err }));
      }
    });
    req.on('error', reject);
  });
}

/** The PEM of the certificate the caller presented (checked by `peer` first). */
function peerPem(req: IncomingMessage): string {
  return new X509Certificate((req.socket as TLSSocket).getPeerCertificate().raw).toString();
}

function peer(req: IncomingMessage, clusterId: string): CertIdentity {
  const sock = req.socket as TLSSocket;
  const cert = sock.getPeerCertificate();
  if (!sock.authorized || !cert?.raw) throw unauthorized('a node certificate of this cluster is required');
  const id = identityOf(cert.raw);
  if (id.clusterId !== clusterId) throw unauthorized('the node certificate belongs to another cluster');
  return id;
}

// The bodies nodes send, checked as the API checks its own (wire-schema.ts: wrong types refused,
// unknown fields dropped) instead of trusted; `required` fields must be there.
const JOIN: Record<string, Kind> = {
  token: 'string',
  publicKeyPem: 'string',
  advertiseAddr: 'string',
  listenAddr: 'string',
  dataPathAddr: 'string',
  description: 'any',
  availability: 'string',
};
const HEARTBEAT: Record<string, Kind> = { tlsInfo: 'any' };
const RENEW: Record<string, Kind> = { publicKeyPem: 'any' };
const LEAVE: Record<string, Kind> = { abort: 'bool' };
const TASK_STATUS: Record<string, Kind> = {
  Timestamp: 'string',
  State: 'string',
  Message: 'string',
  Err: 'string',
  ContainerStatus: 'any',
  PortStatus: 'any',
};
const SYNC: Record<string, Kind> = {
  reports: {
    array: { struct: { id: 'string', status: { struct: TASK_STATUS, goType: 'TaskStatus' } }, goType: 'TaskReport' },
    goType: '[]TaskReport',
  },
  known: 'string',
  logAddr: 'string',
  since: 'int64',
};

function decodeBody<T>(raw: unknown, fields: Record<string, Kind>, name: string, required: string[] = []): T {
  const body = decodeStruct(raw, fields, name);
  for (const r of required) if (body[r] === undefined) throw invalidParameter(`${name}: ${r} is required`);
  return body as T;
}

interface Route {
  method: 'GET' | 'POST';
  /** An exact path, or a prefix ending in '/' (the rest goes to the handler). */
  path: string;
  /** Whether the caller must present a node certificate of this cluster. */
  node: boolean;
  call(ctx: { req: IncomingMessage; node: CertIdentity; rest: string; body: () => Promise<unknown> }): Promise<unknown> | unknown;
}

function routes(handler: EndpointHandler): Route[] {
  const all: Route[] = [
    { method: 'GET', path: '/ca', node: false, call: () => ({ caPem: handler.caPem() }) },
    {
      method: 'POST',
      path: '/join',
      node: false,
      call: async ({ req, body }) =>
        handler.join(decodeBody<JoinRequest>(await body(), JOIN, 'JoinRequest', ['token', 'publicKeyPem']), req.socket.remoteAddress),
    },
    {
      method: 'POST',
      path: '/heartbeat',
      node: true,
      call: async ({ req, node, body }) =>
        handler.heartbeat(node, peerPem(req), decodeBody<HeartbeatRequest>(await body(), HEARTBEAT, 'HeartbeatRequest')),
    },
    { method: 'POST', path: '/unlock-key', node: true, call: ({ node }) => handler.unlockKey(node) },
    { method: 'POST', path: '/promote', node: true, call: ({ node }) => handler.promote(node).then(() => ({})) },
    {
      method: 'POST',
      path: '/agent/sync',
      node: true,
      call: async ({ node, body }) =>
        handler.agentSync(node, decodeBody<AgentSyncRequest>(await body(), SYNC, 'AgentSyncRequest', ['reports'])),
    },
    {
      method: 'POST',
      path: '/leave',
      node: true,
      call: async ({ node, body }) =>
        handler.leave(node, decodeBody<{ abort?: boolean }>(await body(), LEAVE, 'LeaveRequest').abort === true).then(() => ({})),
    },
    { method: 'POST', path: '/overlay/', node: true, call: async ({ node, rest, body }) => handler.overlay(node, rest, await body()) },
  ];
  const renew = handler.renew?.bind(handler);
  if (renew)
    all.push({
      method: 'POST',
      path: '/renew',
      node: true,
      call: async ({ req, node, body }) =>
        renew(node, peerPem(req), decodeBody<{ publicKeyPem?: unknown }>(await body(), RENEW, 'RenewRequest')),
    });
  return all;
}

/** Starts the endpoint; resolves once it listens. */
export async function startEndpoint(
  listen: HostPort,
  certs: NodeCerts,
  clusterId: string,
  handler: EndpointHandler,
  log: Logger,
): Promise<Server> {
  const table = routes(handler);
  const server = createServer(
    { cert: certs.certPem, key: certs.keyPem, ca: certs.caPem, requestCert: true, rejectUnauthorized: false },
    (req, res: ServerResponse) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const route = async (): Promise<unknown> => {
        const url = req.url ?? '';
        const r = table.find((t) => t.method === req.method && (t.path.endsWith('/') ? url.startsWith(t.path) : url === t.path));
        if (!r) throw new EngineError('NOT_FOUND', `no such endpoint ${req.method} ${url}`);
        // The identity is checked before the body is read: an unknown caller's body is never parsed.
        const node = r.node ? peer(req, clusterId) : (undefined as unknown as CertIdentity);
        return r.call({ req, node, rest: url.slice(r.path.length), body: () => readBody(req) });
      };
      if (req.method === 'POST' && req.url === '/logs' && handler.logs) {
        let node: CertIdentity;
        try {
          node = peer(req, clusterId);
        } catch (err) {
          send(statusOf(err), { message: messageOf(err) });
          return;
        }
        streamLogs(handler, node, req, res).catch((err: unknown) => {
          if (!res.headersSent) send(statusOf(err), { message: messageOf(err) });
          else res.destroy();
        });
        return;
      }
      route().then(
        (body) => send(200, body),
        (err) => {
          if (statusOf(err) >= 500) log.warn('cluster endpoint request failed', { url: req.url, error: messageOf(err) });
          send(statusOf(err), { message: messageOf(err) });
        },
      );
    },
  );
  server.on('tlsClientError', (err) => log.debug('cluster endpoint TLS handshake failed', { error: err.message }));
  // Nodes keep their connections (callManager's agents close an idle one after IDLE_SOCKET_MS, before
  // this side does, so a request never goes out on a connection the server is closing).
  server.keepAliveTimeout = 2 * IDLE_SOCKET_MS;
  server.headersTimeout = 2 * IDLE_SOCKET_MS + 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(unavailable(`cannot listen on ${formatHostPort(listen)} for the cluster: ${err.message}`, err)));
    server.listen(listen.port, listen.host, () => resolve());
  });
  return server;
}

export interface CallOptions {
  /** Pinned CA; absent only for GET /ca, whose answer the caller checks against its token. */
  caPem?: string;
  certs?: NodeCerts;
  timeoutMs?: number;
}

/** How long a node keeps an idle connection to a manager (heartbeats come every 5 s, polls every 2 s). */
const IDLE_SOCKET_MS = 20_000;
const agents = new Map<string, Agent>();

/**
 * A keep-alive agent per identity (CA + node certificate): a node's heartbeats, agent syncs and
 * overlay polls reuse their TLS connections instead of a handshake each (100 workers: ~50
 * handshakes a second on the managers before). Calls without a certificate (GET /ca, /join) do not.
 * An identity replaced by a role change keeps its agent, whose idle sockets close after IDLE_SOCKET_MS.
 */
function agentFor(opts: CallOptions): Agent | undefined {
  if (!opts.certs || opts.caPem === undefined) return undefined;
  const id = createHash('sha1').update(opts.caPem).update(opts.certs.certPem).digest('hex');
  let agent = agents.get(id);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxFreeSockets: 8, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' });
    agents.set(id, agent);
  }
  return agent;
}

/** Addresses whose manager certificate does not name them (calls there go without keep-alive). */
const unnamed = new Set<string>();

/**
 * Calls a manager's endpoint at host:port. Errors keep the manager's status and message. With a node
 * certificate the call goes over a kept-alive connection, whose server certificate must name the
 * address (node's own check: a custom check, as below, makes node close the connection after each
 * request); an address the certificate does not name is called as before, on a connection of its own
 * with the chain checked against the pinned CA only.
 */
export async function callManager<T>(addr: string, method: 'GET' | 'POST', path: string, body: unknown, opts: CallOptions): Promise<T> {
  const agent = unnamed.has(addr) ? undefined : agentFor(opts);
  if (!agent) return callOnce<T>(addr, method, path, body, opts, undefined);
  try {
    return await callOnce<T>(addr, method, path, body, opts, agent);
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'ERR_TLS_CERT_ALTNAME_INVALID') throw err;
    unnamed.add(addr);
    return callOnce<T>(addr, method, path, body, opts, undefined);
  }
}

function callOnce<T>(
  addr: string,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  opts: CallOptions,
  agent: Agent | undefined,
): Promise<T> {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(addr);
  if (!m) return Promise.reject(new EngineError('INVALID_PARAMETER', `invalid manager address ${JSON.stringify(addr)}`));
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: m[1] ?? m[2],
        port: Number(m[3]),
        method,
        path,
        timeout: opts.timeoutMs ?? 15_000,
        ca: opts.caPem,
        rejectUnauthorized: opts.caPem !== undefined,
        cert: opts.certs?.certPem,
        key: opts.certs?.keyPem,
        // The chain is checked against the pinned cluster CA; without keep-alive the name is not
        // checked (the certificate's CN is the node ID; its addresses may not be this one).
        ...(agent ? { agent } : { checkServerIdentity: () => undefined, servername: '' }),
        headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString() || '{}');
          } catch {
            parsed = { message: Buffer.concat(chunks).toString() };
          }
          const status = res.statusCode ?? 500;
          if (status === 200) resolve(parsed as T);
          else
            reject(
              new EngineError(
                status === 400
                  ? 'INVALID_PARAMETER'
                  : status === 401
                    ? 'UNAUTHORIZED'
                    : status === 404
                      ? 'NOT_FOUND'
                      : status === 409
                        ? 'CONFLICT'
                        : status === 501
                          ? 'NOT_IMPLEMENTED'
                          : 'UNAVAILABLE',
                (parsed as { message?: string }).message ?? `manager ${addr} answered ${status}`,
              ),
            );
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`manager ${addr} did not answer in time`)));
    req.on('error', (err) =>
      reject(err instanceof EngineError ? err : unavailable(`cannot reach the manager at ${addr}: ${err.message}`, err)),
    );
    req.end(payload);
  });
}
