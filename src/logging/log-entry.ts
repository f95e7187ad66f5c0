// dockerd's log-plugin wire format: protobuf LogEntry messages (moby's logdriver/entry.proto:
// source = 1, time_nano = 2, line = 3, partial = 4, partial_log_metadata = 5 {last = 1, id = 2,
// ordinal = 3}), each preceded by its length as a big-endian uint32. Written by hand: four fields do
// not need a protobuf library.

export interface PartialMetadata {
  last: boolean;
  id: string;
  ordinal: number;
}

export interface LogEntry {
  /** "stdout" or "stderr". */
  source: string;
  timeNano: bigint;
  /** The line without its newline (dockerd strips it before a driver sees it). */
  line: Buffer;
  partial: boolean;
  partialMetadata?: PartialMetadata;
}

/** dockerd's decoder refuses larger messages (logdriver.maxMsgLen). */
export const MAX_ENTRY_BYTES = 1e6;

function varint(out: number[], value: bigint): void {
  let v = BigInt.asUintN(64, value); // negative int64 values take ten bytes, as protobuf says
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

function bytesField(parts: Buffer[], field: number, value: Buffer): void {
  if (value.length === 0) return; // proto3 leaves default values out
  const head: number[] = [];
  varint(head, BigInt((field << 3) | 2));
  varint(head, BigInt(value.length));
  parts.push(Buffer.from(head), value);
}

function varintField(parts: Buffer[], field: number, value: bigint): void {
  if (value === 0n) return;
  const head: number[] = [];
  varint(head, BigInt(field << 3));
  varint(head, value);
  parts.push(Buffer.from(head));
}

function encodeMetadata(m: PartialMetadata): Buffer {
  const parts: Buffer[] = [];
  varintField(parts, 1, m.last ? 1n : 0n);
  bytesField(parts, 2, Buffer.from(m.id));
  varintField(parts, 3, BigInt(m.ordinal));
  return Buffer.concat(parts);
}

/** One entry with its 4-byte length prefix, ready for the FIFO. */
export function encodeLogEntry(e: LogEntry): Buffer {
  const parts: Buffer[] = [Buffer.alloc(4)];
  bytesField(parts, 1, Buffer.from(e.source));
  varintField(parts, 2, e.timeNano);
  bytesField(parts, 3, e.line);
  varintField(parts, 4, e.partial ? 1n : 0n);
  if (e.partialMetadata) {
    const m = encodeMetadata(e.partialMetadata);
    const head: number[] = [];
    varint(head, BigInt((5 << 3) | 2));
    varint(head, BigInt(m.length));
    parts.push(Buffer.from(head), m); // an empty message is still present
  }
  const out = Buffer.concat(parts);
  out.writeUInt32BE(out.length - 4, 0);
  return out;
}

class Cursor {
  constructor(
    private readonly buf: Buffer,
    public pos: number,
    private readonly end: number,
  ) {}
  get done(): boolean {
    return this.pos >= this.end;
  }
  varint(): bigint {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new Error('truncated varint in log entry');
      const b = this.buf[this.pos++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, v);
    }
    throw new Error('varint too long in log entry');
  }
  bytes(): Buffer {
    const n = Number(this.varint());
    if (this.pos + n > this.end) throw new Error('truncated field in log entry');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  /** Skips a field of an unknown number (newer senders may add some, e.g. attrs = 6). */
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported protobuf wire type ${wire} in log entry`);
  }
}

function decodeMetadata(buf: Buffer): PartialMetadata {
  const c = new Cursor(buf, 0, buf.length);
  const m: PartialMetadata = { last: false, id: '', ordinal: 0 };
  while (!c.done) {
    const tag = Number(c.varint());
    const field = tag >> 3;
    if (field === 1 && (tag & 7) === 0) m.last = c.varint() !== 0n;
    else if (field === 2 && (tag & 7) === 2) m.id = c.bytes().toString('utf8');
    else if (field === 3 && (tag & 7) === 0) m.ordinal = Number(BigInt.asIntN(32, c.varint()));
    else c.skip(tag & 7);
  }
  return m;
}

/** Decodes one message body (without the length prefix). */
export function decodeLogEntry(buf: Buffer): LogEntry {
  const c = new Cursor(buf, 0, buf.length);
  const e: LogEntry = { source: '', timeNano: 0n, line: Buffer.alloc(0), partial: false };
  while (!c.done) {
    const tag = Number(c.varint());
    const field = tag >> 3;
    const wire = tag & 7;
    if (field === 1 && wire === 2) e.source = c.bytes().toString('utf8');
    else if (field === 2 && wire === 0) e.timeNano = BigInt.asIntN(64, c.varint());
    else if (field === 3 && wire === 2) e.line = Buffer.from(c.bytes());
    else if (field === 4 && wire === 0) e.partial = c.varint() !== 0n;
    else if (field === 5 && wire === 2) e.partialMetadata = decodeMetadata(c.bytes());
    else c.skip(wire);
  }
  return e;
}

/** Splits a byte stream into entries; feed chunks with push(), which returns the whole entries. */
export class LogEntryDecoder {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): LogEntry[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: LogEntry[] = [];
    let off = 0;
    while (this.pending.length - off >= 4) {
      const n = this.pending.readUInt32BE(off);
      if (n > MAX_ENTRY_BYTES) throw new Error(`log entry of ${n} bytes is larger than the ${MAX_ENTRY_BYTES} allowed`);
      if (this.pending.length - off - 4 < n) break;
      out.push(decodeLogEntry(this.pending.subarray(off + 4, off + 4 + n)));
      off += 4 + n;
    }
    this.pending = off ? Buffer.from(this.pending.subarray(off)) : this.pending;
    return out;
  }

  /** Bytes of an entry not yet complete (a stream that ends with some is truncated). */
  get leftover(): number {
    return this.pending.length;
  }
}
