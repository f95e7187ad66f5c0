// The embedded DNS server of one user-defined network: listens (UDP and TCP, port 53) on the
// network's gateway address, answers for the network's containers — names, aliases, short IDs,
// "<name>.<network>" — and their reverse (PTR) names, and forwards every other query to the
// upstream resolvers of the container that asked (its --dns, the daemon's, or the host's).
// Addresses are numbers (IPv4, A records) or bigints (IPv6, AAAA records).
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../util/log.ts';
import {
  aaaaRecord,
  aRecord,
  buildReply,
  formErr,
  parseQuery,
  ptrRecord,
  RCODE_NOERROR,
  RCODE_REFUSED,
  RCODE_SERVFAIL,
  TYPE_A,
  TYPE_AAAA,
  TYPE_PTR,
  type Answer,
  type Query,
} from './dns-message.ts';
import { fromReverseName } from '../ipam/ip4.ts';
import { bytesOf6, fromReverseName6 } from '../ipam/ip6.ts';

export interface DnsBackend {
  /** Whether to answer this client at all (containers on the network only). */
  serves(clientIp: string): boolean;
  /** Addresses for a name, as seen by the asking client (case-insensitive); undefined when not ours. */
  lookup(name: string, clientIp: string): Array<number | bigint> | undefined;
  /** The primary name of the endpoint holding this address, if any. */
  reverse(addr: number | bigint): string | undefined;
  /** Where to forward other queries from this client; [] means none (an internal network). */
  upstreams(clientIp: string): string[];
}

const FORWARD_TIMEOUT_MS = 3000;
const RCODE_NOTIMP = 4;

export class EmbeddedDns {
  private udp?: UdpSocket;
  private tcp?: Server;
  private readonly conns = new Set<Socket>();

  constructor(
    readonly address: string,
    private readonly backend: DnsBackend,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const udp = createSocket({ type: 'udp4', reuseAddr: true });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind({ address: this.address, port: 53 }, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    udp.on('error', (err) => this.log.debug(`dns udp: ${err.message}`));
    udp.on('message', (msg, rinfo) => {
      void this.answer(msg, rinfo.address, 'udp').then((reply) => {
        if (reply) udp.send(reply, rinfo.port, rinfo.address);
      });
    });
    this.udp = udp;
    const tcp = createServer((sock) => this.serveTcp(sock));
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen({ host: this.address, port: 53 }, () => {
        tcp.off('error', reject);
        resolve();
      });
    }).catch((err) => {
      udp.close();
      throw err;
    });
    tcp.on('error', (err) => this.log.debug(`dns tcp: ${err.message}`));
    this.tcp = tcp;
  }

  async stop(): Promise<void> {
    for (const c of this.conns) c.destroy();
    await Promise.all([
      this.udp ? new Promise<void>((r) => this.udp!.close(() => r())) : undefined,
      this.tcp ? new Promise<void>((r) => this.tcp!.close(() => r())) : undefined,
    ]);
    this.udp = undefined;
    this.tcp = undefined;
  }

  private serveTcp(sock: Socket): void {
    this.conns.add(sock);
    let buf = Buffer.alloc(0);
    sock.on('error', () => sock.destroy());
    sock.on('close', () => this.conns.delete(sock));
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        void this.answer(Buffer.from(msg), sock.remoteAddress ?? '', 'tcp').then((reply) => {
          if (!reply || sock.destroyed) return;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(reply.length, 0);
          sock.write(Buffer.concat([len, reply]));
        });
      }
    });
    sock.setTimeout(30_000, () => sock.destroy());
  }

  /** The reply to one message (undefined: nothing to send). */
  async answer(raw: Buffer, clientIp: string, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    let q: Query;
    try {
      q = parseQuery(raw);
    } catch {
      // a malformed query gets FORMERR
      return formErr(raw);
    }
    if (q.opcode !== 0) return buildReply(raw, q, RCODE_NOTIMP);
    const name = q.question.name.replace(/\.$/, '');
    const client = clientIp.replace(/^::ffff:/, '');
    // The gateway address is reachable from anywhere the host is: other networks' containers must
    // not learn this network's names.
    if (!this.backend.serves(client)) return buildReply(raw, q, RCODE_REFUSED);
    if (q.question.type === TYPE_PTR) {
      const addr = fromReverseName(name) ?? fromReverseName6(name);
      const owner = addr === undefined ? undefined : this.backend.reverse(addr);
      if (owner) return buildReply(raw, q, RCODE_NOERROR, [ptrRecord(owner)]);
    } else {
      const addrs = this.backend.lookup(name, client);
      if (addrs) {
        // Ours: A / AAAA records (in random order, a poor man's load balancing as dockerd); any
        // other type is an empty answer rather than a forward, so a name never leaks outside.
        const answers: Answer[] = [];
        for (const a of shuffle(addrs)) {
          if (q.question.type === TYPE_A && typeof a === 'number') answers.push(aRecord(a));
          if (q.question.type === TYPE_AAAA && typeof a === 'bigint') answers.push(aaaaRecord(bytesOf6(a)));
        }
        return buildReply(raw, q, RCODE_NOERROR, answers);
      }
    }
    return this.forward(raw, q, this.backend.upstreams(client), transport);
  }

  private async forward(raw: Buffer, q: Query, upstreams: string[], transport: 'udp' | 'tcp'): Promise<Buffer> {
    for (const server of upstreams) {
      try {
        const reply = transport === 'udp' ? await forwardUdp(raw, server) : await forwardTcp(raw, server);
        if (reply.length >= 12 && reply.readUInt16BE(0) === q.id) return reply;
      } catch (err) {
        this.log.debug(`dns forward to ${server} failed: ${(err as Error).message}`);
      }
    }
    return buildReply(raw, q, RCODE_SERVFAIL);
  }
}

function shuffle<T>(list: T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function forwardUdp(raw: Buffer, server: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = createSocket(server.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error('timeout'));
    }, FORWARD_TIMEOUT_MS);
    sock.on('error', (err) => {
      clearTimeout(timer);
      sock.close();
      reject(err);
    });
    sock.on('message', (msg) => {
      clearTimeout(timer);
      sock.close();
      resolve(msg);
    });
    sock.send(raw, 53, server);
  });
}

function forwardTcp(raw: Buffer, server: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: server, port: 53 });
    let buf = Buffer.alloc(0);
    sock.setTimeout(FORWARD_TIMEOUT_MS, () => sock.destroy(new Error('timeout')));
    sock.on('error', reject);
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(raw.length, 0);
      sock.write(Buffer.concat([len, raw]));
    });
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        sock.destroy();
        resolve(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      }
    });
  });
}
