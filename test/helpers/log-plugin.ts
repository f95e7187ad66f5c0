// A test log-driver plugin: dockerd's LogDriver protocol on a unix socket. StartLogging opens the
// FIFO it is given and decodes the length-prefixed protobuf entries with its own small decoder (so
// the daemon's encoder is checked against an independent reading of entry.proto); ReadLogs streams
// the stored entries back (since, until, tail, follow). Works as a real plugin would, in-process.
import { constants, openSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';

export interface StoredEntry {
  source: string;
  timeNano: bigint;
  line: Buffer;
  partial: boolean;
  meta?: { last: boolean; id: string; ordinal: number };
}

interface Stream {
  file: string;
  containerId: string;
  sock: Socket;
  pending: Buffer;
  lastData: number;
}

const CT = 'application/vnd.docker.plugins.v1+json';

function readVarint(b: Buffer, at: { pos: number }): bigint {
  let v = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = b[at.pos++]!;
    v |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return v;
  }
}

/** entry.proto: source = 1, time_nano = 2, line = 3, partial = 4, partial_log_metadata = 5. */
export function decodeEntry(b: Buffer): StoredEntry {
  const e: StoredEntry = { source: '', timeNano: 0n, line: Buffer.alloc(0), partial: false };
  const at = { pos: 0 };
  while (at.pos < b.length) {
    const tag = Number(readVarint(b, at));
    if ((tag & 7) === 2) {
      const n = Number(readVarint(b, at));
      const v = b.subarray(at.pos, at.pos + n);
      at.pos += n;
      if (tag >> 3 === 1) e.source = v.toString();
      if (tag >> 3 === 3) e.line = Buffer.from(v);
      if (tag >> 3 === 5) {
        const m = { last: false, id: '', ordinal: 0 };
        const mat = { pos: 0 };
        while (mat.pos < v.length) {
          const t = Number(readVarint(v, mat));
          if (t === 0x08) m.last = readVarint(v, mat) === 1n;
          else if (t === 0x18) m.ordinal = Number(readVarint(v, mat));
          else if (t === 0x12) {
            const n2 = Number(readVarint(v, mat));
            m.id = v.subarray(mat.pos, mat.pos + n2).toString();
            mat.pos += n2;
          }
        }
        e.meta = m;
      }
    } else {
      const v = readVarint(b, at);
      if (tag >> 3 === 2) e.timeNano = v;
      if (tag >> 3 === 4) e.partial = v === 1n;
    }
  }
  return e;
}

/** Every whole entry of a FIFO's bytes (each after its big-endian uint32 length). */
export function decodeFrames(b: Buffer): StoredEntry[] {
  const out: StoredEntry[] = [];
  for (let off = 0; off + 4 <= b.length;) {
    const n = b.readUInt32BE(off);
    if (off + 4 + n > b.length) break;
    out.push(decodeEntry(b.subarray(off + 4, off + 4 + n)));
    off += 4 + n;
  }
  return out;
}

function varint(v: bigint): number[] {
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

export function encodeEntry(e: StoredEntry): Buffer {
  const src = Buffer.from(e.source);
  const line = e.line;
  const body = Buffer.concat([
    Buffer.from([0x0a, ...varint(BigInt(src.length))]),
    src,
    Buffer.from([0x10, ...varint(e.timeNano)]),
    Buffer.from([0x1a, ...varint(BigInt(line.length))]),
    line,
    Buffer.from(e.partial ? [0x20, 1] : []),
  ]);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

export class TestLogPlugin {
  /** Entries by container id, in arrival order. */
  readonly entries = new Map<string, StoredEntry[]>();
  readonly started: { File: string; Info: Record<string, unknown> }[] = [];
  readonly stopped: string[] = [];
  /** What Capabilities answers. */
  readLogs = true;
  /** An Err for StartLogging, when set. */
  startError = '';
  private readonly streams = new Map<string, Stream>();
  private readonly followers = new Map<string, Set<ServerResponse>>();
  private server?: Server;

  constructor(readonly socketPath: string) {}

  async start(): Promise<void> {
    await rm(this.socketPath, { force: true });
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString() || 'null') : null;
        void this.answer(req.url ?? '', body, res);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.socketPath, resolve));
  }

  async stop(): Promise<void> {
    for (const s of this.streams.values()) s.sock.destroy();
    for (const set of this.followers.values()) for (const r of set) r.end();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    await rm(this.socketPath, { force: true });
  }

  /** Resolves once nothing has come down any FIFO for a while (what was written has been read). */
  async quiet(ms = 40): Promise<void> {
    for (;;) {
      await new Promise((r) => setTimeout(r, 20));
      const last = Math.max(0, ...[...this.streams.values()].map((s) => s.lastData));
      if (Date.now() - last >= ms) return;
    }
  }

  lines(containerId: string): string[] {
    return (this.entries.get(containerId) ?? []).map((e) => e.line.toString());
  }

  private json(res: ServerResponse, body: unknown): void {
    res.writeHead(200, { 'Content-Type': CT });
    res.end(JSON.stringify(body));
  }

  private async answer(url: string, body: any, res: ServerResponse): Promise<void> {
    switch (url) {
      case '/Plugin.Activate':
        return this.json(res, { Implements: ['LogDriver'] });
      case '/LogDriver.Capabilities':
        return this.json(res, { Cap: { ReadLogs: this.readLogs } });
      case '/LogDriver.StartLogging': {
        this.started.push(body);
        if (this.startError) return this.json(res, { Err: this.startError });
        const containerId = String(body.Info.ContainerID);
        const sock = new Socket({ fd: openSync(body.File, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false });
        const s: Stream = { file: body.File, containerId, sock, pending: Buffer.alloc(0), lastData: Date.now() };
        sock.on('data', (c: Buffer) => this.onData(s, c));
        sock.on('error', () => {});
        this.streams.set(body.File, s);
        if (!this.entries.has(containerId)) this.entries.set(containerId, []);
        return this.json(res, {});
      }
      case '/LogDriver.StopLogging': {
        const s = this.streams.get(body.File);
        // The protocol: everything on the FIFO is read before the answer (quiet for 100 ms here).
        while (s && Date.now() - s.lastData < 100) await new Promise((r) => setTimeout(r, 20));
        s?.sock.destroy();
        this.streams.delete(body.File);
        this.stopped.push(body.File);
        if (s) for (const r of this.followers.get(s.containerId) ?? []) r.end();
        this.followers.delete(s?.containerId ?? '');
        return this.json(res, {});
      }
      case '/LogDriver.ReadLogs':
        return this.readLogsAnswer(body, res);
      default:
        res.writeHead(404, { 'Content-Type': CT });
        res.end(JSON.stringify({ Err: `unknown method ${url}` }));
    }
  }

  private onData(s: Stream, chunk: Buffer): void {
    s.lastData = Date.now();
    s.pending = Buffer.concat([s.pending, chunk]);
    while (s.pending.length >= 4) {
      const n = s.pending.readUInt32BE(0);
      if (s.pending.length < 4 + n) break;
      const e = decodeEntry(s.pending.subarray(4, 4 + n));
      s.pending = s.pending.subarray(4 + n);
      this.entries.get(s.containerId)!.push(e);
      for (const r of this.followers.get(s.containerId) ?? []) r.write(encodeEntry(e));
    }
  }

  private readLogsAnswer(body: any, res: ServerResponse): void {
    const id = String(body.Info.ContainerID);
    const cfg = body.Config as { Since: string; Until: string; Tail: number; Follow: boolean };
    const zero = '0001-01-01T00:00:00Z';
    // RFC 3339 with up to nine fraction digits, to the nanosecond.
    const ns = (t: string) => {
      const m = /^(.*?)(?:\.(\d+))?Z$/.exec(t)!;
      return BigInt(Date.parse(`${m[1]}Z`)) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
    };
    let list = this.entries.get(id) ?? [];
    if (cfg.Since !== zero) list = list.filter((e) => e.timeNano >= ns(cfg.Since));
    if (cfg.Until !== zero) list = list.filter((e) => e.timeNano <= ns(cfg.Until));
    if (cfg.Tail >= 0) list = list.slice(Math.max(0, list.length - cfg.Tail));
    res.writeHead(200, { 'Content-Type': 'application/x-json-stream' });
    for (const e of list) res.write(encodeEntry(e));
    const live = [...this.streams.values()].some((s) => s.containerId === id);
    if (!cfg.Follow || !live) return void res.end();
    let set = this.followers.get(id);
    if (!set) this.followers.set(id, (set = new Set()));
    set.add(res);
    res.on('close', () => set.delete(res));
  }
}
