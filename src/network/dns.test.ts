import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { Logger } from '../util/log.ts';
import {
  aRecord,
  buildReply,
  encodeName,
  parseQuery,
  readName,
  RCODE_NOERROR,
  RCODE_NXDOMAIN,
  RCODE_SERVFAIL,
  TYPE_A,
  TYPE_AAAA,
  TYPE_PTR,
} from './dns/dns-message.ts';
import { EmbeddedDns } from './dns/dns-server.ts';
import { parseIPv4 } from './ipam/ip4.ts';
import { parseIPv6 } from './ipam/ip6.ts';

function query(name: string, type: number, id = 0x1234): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2); // RD
  header.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(1, 2);
  return Buffer.concat([header, encodeName(name), tail]);
}

interface Parsed {
  id: number;
  rcode: number;
  answers: Array<{ type: number; data: Buffer }>;
}

function parseReply(b: Buffer): Parsed {
  const q = readName(b, 12);
  let off = q.end + 4;
  const answers: Parsed['answers'] = [];
  for (let i = 0; i < b.readUInt16BE(6); i++) {
    off = readName(b, off).end;
    const type = b.readUInt16BE(off);
    const len = b.readUInt16BE(off + 8);
    answers.push({ type, data: b.subarray(off + 10, off + 10 + len) });
    off += 10 + len;
  }
  return { id: b.readUInt16BE(0), rcode: b.readUInt16BE(2) & 0xf, answers };
}

function ask(server: string, msg: Buffer): Promise<Parsed> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    const t = setTimeout(() => {
      s.close();
      reject(new Error('no answer'));
    }, 5000);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      resolve(parseReply(m));
    });
    s.send(msg, 53, server);
  });
}

describe('dns wire format', () => {
  test('names with compression pointers; a reply echoes the question', () => {
    const q = query('db.app', TYPE_A);
    const parsed = parseQuery(q);
    assert.equal(parsed.question.name, 'db.app');
    assert.equal(parsed.question.type, TYPE_A);
    const reply = parseReply(buildReply(q, parsed, RCODE_NOERROR, [aRecord(parseIPv4('172.18.0.2'))]));
    assert.equal(reply.id, 0x1234);
    assert.deepEqual([...reply.answers[0]!.data], [172, 18, 0, 2]);
    assert.throws(() => parseQuery(Buffer.alloc(5)), /short message/);
  });
});

describe('embedded DNS server', () => {
  const ownIp = `127.0.${30 + Math.floor(Math.random() * 100)}.11`;
  const upstreamIp = `127.0.${140 + Math.floor(Math.random() * 100)}.12`;
  let server: EmbeddedDns;
  const upstream = createSocket('udp4');
  let upstreams = [upstreamIp];

  before(async () => {
    upstream.on('message', (m, r) => {
      const q = parseQuery(m);
      const reply =
        q.question.name === 'outside.test'
          ? buildReply(m, q, RCODE_NOERROR, [aRecord(parseIPv4('10.9.9.9'))])
          : buildReply(m, q, RCODE_NXDOMAIN);
      upstream.send(reply, r.port, r.address);
    });
    await new Promise<void>((r) => upstream.bind(53, upstreamIp, () => r()));
    const log = new Logger({ level: 'fatal', format: 'text', raw: true });
    server = new EmbeddedDns(
      ownIp,
      {
        serves: (ip) => ip.startsWith('127.'),
        lookup: (name) =>
          ['db', 'db.app'].includes(name.toLowerCase())
            ? [parseIPv4('172.18.0.2'), parseIPv4('172.18.0.3')]
            : name === 'v6'
              ? [parseIPv4('172.18.0.4'), parseIPv6('fd42:9::4')]
              : undefined,
        reverse: (addr) => (addr === parseIPv4('172.18.0.2') ? 'db.app' : addr === parseIPv6('fd42:9::4') ? 'v6.app' : undefined),
        upstreams: () => upstreams,
      },
      log,
    );
    await server.start();
  });
  after(async () => {
    await server?.stop();
    upstream.close();
  });

  test('answers for its names (all addresses), empty for other types, PTR for its addresses', async () => {
    const a = await ask(ownIp, query('DB', TYPE_A));
    assert.equal(a.rcode, RCODE_NOERROR);
    assert.deepEqual(a.answers.map((x) => [...x.data].join('.')).sort(), ['172.18.0.2', '172.18.0.3']);
    const aaaa = await ask(ownIp, query('db', TYPE_AAAA));
    assert.equal(aaaa.rcode, RCODE_NOERROR);
    assert.equal(aaaa.answers.length, 0);
    const ptr = await ask(ownIp, query('2.0.18.172.in-addr.arpa', TYPE_PTR));
    assert.equal(ptr.answers[0]!.type, TYPE_PTR);
    assert.equal(readName(ptr.answers[0]!.data, 0).name, 'db.app');
  });

  test('IPv6 endpoints: AAAA answers their addresses, A the IPv4 ones, PTR in ip6.arpa', async () => {
    const aaaa = await ask(ownIp, query('v6', TYPE_AAAA));
    assert.deepEqual(
      aaaa.answers.map((x) => [x.type, x.data.toString('hex')]),
      [[TYPE_AAAA, 'fd420009000000000000000000000004']],
    );
    const a = await ask(ownIp, query('v6', TYPE_A));
    assert.deepEqual(
      a.answers.map((x) => [...x.data].join('.')),
      ['172.18.0.4'],
    );
    const name = '4.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.9.0.0.0.2.4.d.f.ip6.arpa';
    const ptr = await ask(ownIp, query(name, TYPE_PTR));
    assert.equal(readName(ptr.answers[0]!.data, 0).name, 'v6.app');
  });

  test('forwards other names to the upstreams; none (internal network) or a dead one is SERVFAIL', async () => {
    const fwd = await ask(ownIp, query('outside.test', TYPE_A, 0x4242));
    assert.equal(fwd.id, 0x4242);
    assert.deepEqual([...fwd.answers[0]!.data], [10, 9, 9, 9]);
    assert.equal((await ask(ownIp, query('nowhere.test', TYPE_A))).rcode, RCODE_NXDOMAIN);
    upstreams = [];
    assert.equal((await ask(ownIp, query('outside.test', TYPE_A))).rcode, RCODE_SERVFAIL);
    upstreams = [upstreamIp];
  });
});
