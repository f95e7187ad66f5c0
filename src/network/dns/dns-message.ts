// The small part of the DNS wire format (RFC 1035) the embedded resolver needs: read a query's
// header and first question, and build an answer with A / PTR records or an empty / error reply.

export const TYPE_A = 1;
export const TYPE_PTR = 12;
export const TYPE_AAAA = 28;
export const CLASS_IN = 1;

export const RCODE_NOERROR = 0;
export const RCODE_FORMERR = 1;
export const RCODE_SERVFAIL = 2;
export const RCODE_NXDOMAIN = 3;
export const RCODE_REFUSED = 5;

export interface Question {
  name: string;
  type: number;
  klass: number;
  /** Offset just past the question (where answers start in a reply). */
  end: number;
}

export interface Query {
  id: number;
  flags: number;
  opcode: number;
  question: Question;
}

/** Reads a (possibly compressed) name starting at `offset`; returns it and the offset after it. */
export function readName(buf: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let pos = offset;
  let end = -1;
  for (let hops = 0; hops < 64; hops++) {
    if (pos >= buf.length) throw new Error('truncated name');
    const len = buf[pos]!;
    if (len === 0) {
      if (end < 0) end = pos + 1;
      return { name: labels.join('.'), end };
    }
    if ((len & 0xc0) === 0xc0) {
      if (pos + 1 >= buf.length) throw new Error('truncated pointer');
      if (end < 0) end = pos + 2;
      pos = ((len & 0x3f) << 8) | buf[pos + 1]!;
      continue;
    }
    if (len > 63 || pos + 1 + len > buf.length) throw new Error('bad label');
    labels.push(buf.toString('latin1', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
  throw new Error('name compression loop');
}

export function parseQuery(buf: Buffer): Query {
  if (buf.length < 12) throw new Error('short message');
  const flags = buf.readUInt16BE(2);
  if (flags & 0x8000) throw new Error('not a query');
  if (buf.readUInt16BE(4) < 1) throw new Error('no question');
  const { name, end } = readName(buf, 12);
  if (end + 4 > buf.length) throw new Error('truncated question');
  return {
    id: buf.readUInt16BE(0),
    flags,
    opcode: (flags >> 11) & 0xf,
    question: { name, type: buf.readUInt16BE(end), klass: buf.readUInt16BE(end + 2), end: end + 4 },
  };
}

export function encodeName(name: string): Buffer {
  const parts = name
    .replace(/\.$/, '')
    .split('.')
    .filter((l) => l.length > 0);
  const bufs = parts.map((l) => {
    const b = Buffer.from(l, 'latin1').subarray(0, 63);
    return Buffer.concat([Buffer.from([b.length]), b]);
  });
  return Buffer.concat([...bufs, Buffer.from([0])]);
}

export interface Answer {
  type: number;
  ttl: number;
  /** Raw record data (4 bytes for A, an encoded name for PTR). */
  data: Buffer;
}

/**
 * A reply to `q` echoing its question: authoritative for names the daemon owns, recursion
 * available (the resolver forwards), RD copied from the query.
 */
export function buildReply(raw: Buffer, q: Query, rcode: number, answers: Answer[] = []): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(q.id, 0);
  const rd = q.flags & 0x0100;
  header.writeUInt16BE(0x8000 | (q.opcode << 11) | 0x0400 | rd | 0x0080 | (rcode & 0xf), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const question = raw.subarray(12, q.question.end);
  const records = answers.map((a) => {
    const fixed = Buffer.alloc(12);
    fixed.writeUInt16BE(0xc00c, 0); // pointer to the question's name
    fixed.writeUInt16BE(a.type, 2);
    fixed.writeUInt16BE(CLASS_IN, 4);
    fixed.writeUInt32BE(a.ttl, 6);
    fixed.writeUInt16BE(a.data.length, 10);
    return Buffer.concat([fixed, a.data]);
  });
  return Buffer.concat([header, question, ...records]);
}

export function aRecord(addr: number, ttl = 600): Answer {
  const data = Buffer.alloc(4);
  data.writeUInt32BE(addr >>> 0, 0);
  return { type: TYPE_A, ttl, data };
}

export function aaaaRecord(addr: Buffer, ttl = 600): Answer {
  return { type: TYPE_AAAA, ttl, data: addr };
}

export function ptrRecord(name: string, ttl = 600): Answer {
  return { type: TYPE_PTR, ttl, data: encodeName(name) };
}

/** A bare error reply for a message whose question could not be read (FORMERR). */
export function formErr(raw: Buffer): Buffer | undefined {
  if (raw.length < 2) return undefined;
  const b = Buffer.alloc(12);
  b.writeUInt16BE(raw.readUInt16BE(0), 0);
  b.writeUInt16BE(0x8000 | RCODE_FORMERR, 2);
  return b;
}
