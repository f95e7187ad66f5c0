// A small MessagePack writer for the fluentd Forward protocol, with the encodings tinylib/msgp
// (fluent-logger-golang) picks: the shortest string header (fixstr, str8, str16, str32), the
// shortest signed form of an integer, map headers by size, and fixext8 type 0 for an EventTime.
// A reader of the same subset serves the tests' receivers.

export class MsgpackWriter {
  private buf = Buffer.allocUnsafe(256);
  private len = 0;

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  arrayHeader(n: number): this {
    this.room(5);
    if (n < 16) this.buf[this.len++] = 0x90 | n;
    else if (n < 0x10000) ((this.buf[this.len++] = 0xdc), (this.len = this.buf.writeUInt16BE(n, this.len)));
    else ((this.buf[this.len++] = 0xdd), (this.len = this.buf.writeUInt32BE(n, this.len)));
    return this;
  }

  mapHeader(n: number): this {
    this.room(5);
    if (n < 16) this.buf[this.len++] = 0x80 | n;
    else if (n < 0x10000) ((this.buf[this.len++] = 0xde), (this.len = this.buf.writeUInt16BE(n, this.len)));
    else ((this.buf[this.len++] = 0xdf), (this.len = this.buf.writeUInt32BE(n, this.len)));
    return this;
  }

  /** A string from its UTF-8 bytes. */
  bytesAsString(b: Buffer): this {
    const n = b.length;
    this.room(n + 5);
    if (n < 32) this.buf[this.len++] = 0xa0 | n;
    else if (n < 0x100) ((this.buf[this.len++] = 0xd9), (this.buf[this.len++] = n));
    else if (n < 0x10000) ((this.buf[this.len++] = 0xda), (this.len = this.buf.writeUInt16BE(n, this.len)));
    else ((this.buf[this.len++] = 0xdb), (this.len = this.buf.writeUInt32BE(n, this.len)));
    this.len += b.copy(this.buf, this.len);
    return this;
  }

  string(s: string): this {
    return this.bytesAsString(Buffer.from(s));
  }

  /** msgp's AppendInt64: positive fixint, then int16, int32, int64 (negatives likewise). */
  int(i: number): this {
    this.room(9);
    if (i >= 0 && i <= 0x7f) this.buf[this.len++] = i;
    else if (i < 0 && i >= -32) this.buf[this.len++] = 0xe0 | (i + 32);
    else if (i >= -0x80 && i <= 0x7f) ((this.buf[this.len++] = 0xd0), (this.len = this.buf.writeInt8(i, this.len)));
    else if (i >= -0x8000 && i <= 0x7fff) ((this.buf[this.len++] = 0xd1), (this.len = this.buf.writeInt16BE(i, this.len)));
    else if (i >= -0x80000000 && i <= 0x7fffffff) ((this.buf[this.len++] = 0xd2), (this.len = this.buf.writeInt32BE(i, this.len)));
    else ((this.buf[this.len++] = 0xd3), (this.len = this.buf.writeBigInt64BE(BigInt(i), this.len)));
    return this;
  }

  /** Fluentd's EventTime: ext type 0, seconds and nanoseconds as big-endian uint32. */
  eventTime(ns: bigint): this {
    this.room(10);
    this.buf[this.len++] = 0xd7;
    this.buf[this.len++] = 0x00;
    this.len = this.buf.writeUInt32BE(Number(ns / 1_000_000_000n), this.len);
    this.len = this.buf.writeUInt32BE(Number(ns % 1_000_000_000n), this.len);
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.len));
  }
}

export type MsgpackValue =
  null | boolean | number | bigint | string | Buffer | MsgpackValue[] | { [k: string]: MsgpackValue } | { ext: number; data: Buffer };

/** Thrown when a buffer ends inside a value (a stream reader waits for more). */
export class MsgpackShortRead extends Error {}

/** Decodes one value at `off`; returns it and the offset after it. Depth is bounded. */
export function decodeMsgpack(b: Buffer, off = 0, depth = 0): [MsgpackValue, number] {
  if (depth > 32) throw new Error('msgpack: nested too deep');
  const need = (n: number): void => {
    if (off + n > b.length) throw new MsgpackShortRead('msgpack: short buffer');
  };
  need(1);
  const t = b[off++]!;
  const str = (n: number): [string, number] => (need(n), [b.toString('utf8', off, off + n), off + n]);
  const arr = (n: number): [MsgpackValue[], number] => {
    const out: MsgpackValue[] = [];
    for (let i = 0; i < n; i++) [out[i], off] = decodeMsgpack(b, off, depth + 1);
    return [out, off];
  };
  const map = (n: number): [Record<string, MsgpackValue>, number] => {
    const out: Record<string, MsgpackValue> = {};
    for (let i = 0; i < n; i++) {
      let k: MsgpackValue;
      [k, off] = decodeMsgpack(b, off, depth + 1);
      [out[String(k)], off] = decodeMsgpack(b, off, depth + 1);
    }
    return [out, off];
  };
  const ext = (n: number): [MsgpackValue, number] => (
    need(n + 1),
    [{ ext: b.readInt8(off), data: b.subarray(off + 1, off + 1 + n) }, off + 1 + n]
  );
  if (t <= 0x7f) return [t, off];
  if (t >= 0xe0) return [t - 0x100, off];
  if ((t & 0xf0) === 0x80) return map(t & 0x0f);
  if ((t & 0xf0) === 0x90) return arr(t & 0x0f);
  if ((t & 0xe0) === 0xa0) return str(t & 0x1f);
  switch (t) {
    case 0xc0:
      return [null, off];
    case 0xc2:
      return [false, off];
    case 0xc3:
      return [true, off];
    case 0xd0:
      return (need(1), [b.readInt8(off), off + 1]);
    case 0xd1:
      return (need(2), [b.readInt16BE(off), off + 2]);
    case 0xd2:
      return (need(4), [b.readInt32BE(off), off + 4]);
    case 0xd3:
      return (need(8), [b.readBigInt64BE(off), off + 8]);
    case 0xcc:
      return (need(1), [b[off]!, off + 1]);
    case 0xcd:
      return (need(2), [b.readUInt16BE(off), off + 2]);
    case 0xce:
      return (need(4), [b.readUInt32BE(off), off + 4]);
    case 0xd9:
      return (need(1), (off += 1), str(b[off - 1]!));
    case 0xda:
      return (need(2), (off += 2), str(b.readUInt16BE(off - 2)));
    case 0xdb:
      return (need(4), (off += 4), str(b.readUInt32BE(off - 4)));
    case 0xdc:
      return (need(2), (off += 2), arr(b.readUInt16BE(off - 2)));
    case 0xde:
      return (need(2), (off += 2), map(b.readUInt16BE(off - 2)));
    case 0xd7:
      return ext(8);
    default:
      throw new Error(`msgpack: type 0x${t.toString(16)} not supported`);
  }
}
