// The gelf driver (Graylog Extended Log Format), as dockerd sends it: one JSON object per entry
// (version 1.1, host, short_message, timestamp in seconds with milliseconds, level 6 for stdout and
// 3 for stderr, then the container's fields and the extra attributes with a leading underscore).
// Over UDP the object is compressed (gzip at level 1 by default, zlib, or none) and cut into GELF
// chunks when it exceeds 1420 bytes (magic 0x1e 0x0f, an 8-byte message id, sequence number and
// count, at most 128 chunks); over TCP it is sent uncompressed, each object ended by a NUL byte.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { constants, crc32, gzipSync, deflateSync } from 'node:zlib';
import { goJsonObject, goJsonString } from '../json-escape.ts';
import { extraAttrs, logTag } from './attrs.ts';
import { deflateBound, deflateRawInto, gzipFast, zlibFast } from './fast-deflate.ts';
import { RemoteLogDriver, type RemoteFactoryOptions, type RemoteRecord } from './driver.ts';
import { DatagramTransport, StreamTransport, type Transport } from './transport.ts';
import { atoi, gelfAddress } from './validate.ts';

/** go-gelf's UDP chunk size and header. */
export const CHUNK_SIZE = 1420;
const CHUNK_HEADER = 12;
const CHUNK_DATA = CHUNK_SIZE - CHUNK_HEADER;
const MAX_CHUNKS = 128;

export type GelfCompression = 'gzip' | 'zlib' | 'none';

/** The fields every message of the container carries, as go-gelf appends dockerd's RawExtra. */
export function gelfExtra(containerId: string, options: Record<string, string>, attrs: Record<string, string>): string {
  const extra: Record<string, string> = {
    _container_id: containerId,
    _container_name: attrs['name'] ?? '',
    _image_id: attrs['imageId'] ?? '',
    _image_name: attrs['image'] ?? '',
    _command: attrs['command'] ?? '',
    _tag: logTag(containerId, options, attrs),
    _created: attrs['created'] ?? '',
    ...extraAttrs(options, attrs, (k) => (k.startsWith('_') ? k : `_${k}`)),
  };
  return goJsonObject(extra);
}

/** One message's JSON (go-gelf's Message marshalled, RawExtra spliced in before the closing brace). */
export function gelfJson(rec: RemoteRecord, host: string, extraJson: string): string {
  const seconds = Number(rec.timeNano / 1_000_000n) / 1000;
  const level = rec.stream === 'stderr' ? 3 : 6;
  const base = `{"version":"1.1","host":${goJsonString(host)},"short_message":${goJsonString(rec.line.toString())},"timestamp":${seconds},"level":${level}`;
  return extraJson.length > 2 ? `${base},${extraJson.slice(1)}` : `${base}}`;
}

/** A compressed payload as the datagrams go-gelf sends: itself, or its chunks. */
export function gelfDatagrams(payload: Buffer): Buffer[] {
  if (payload.length <= CHUNK_SIZE) return [payload];
  // go-gelf's count: one more than the whole chunks (an exact multiple ends with an empty chunk).
  const count = Math.floor(payload.length / CHUNK_DATA) + 1;
  if (count > MAX_CHUNKS) throw new Error(`msg too large, would need ${count} chunks`);
  const id = randomBytes(8);
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const data = payload.subarray(i * CHUNK_DATA, Math.min((i + 1) * CHUNK_DATA, payload.length));
    const chunk = Buffer.allocUnsafe(CHUNK_HEADER + data.length);
    chunk[0] = 0x1e;
    chunk[1] = 0x0f;
    id.copy(chunk, 2);
    chunk[10] = i;
    chunk[11] = count;
    data.copy(chunk, CHUNK_HEADER);
    out.push(chunk);
  }
  return out;
}

export function compress(json: Buffer, type: GelfCompression, level: number): Buffer {
  // BestSpeed, the default: the in-process encoder (zlib's engine per message costs far more)
  if (level === 1 && type === 'gzip') return gzipFast(json);
  if (level === 1 && type === 'zlib') return zlibFast(json);
  const lvl = level === -1 ? constants.Z_DEFAULT_COMPRESSION : level;
  if (type === 'gzip') return gzipSync(json, { level: lvl });
  if (type === 'zlib') return deflateSync(json, { level: lvl });
  return json;
}

// Bytes a JSON string takes as they are (printable ASCII but the ones encoding/json escapes).
const PLAIN = new Uint8Array(256);
for (let b = 0x20; b < 0x7f; b++) PLAIN[b] = 1;
for (const c of '"\\<>&') PLAIN[c.charCodeAt(0)] = 0;
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff]);

/**
 * The UDP encoder: gelfJson's bytes, compressed, as datagrams, with the constant parts (everything
 * before the message and the container's fields after it) encoded once and the JSON and deflate
 * output built in buffers kept across messages. A line of plain ASCII is copied as it is; anything
 * else goes through gelfJson, so the bytes are the same either way.
 */
export class GelfUdpEncoder {
  private readonly head: Buffer;
  private readonly tail: Buffer;
  private json = Buffer.allocUnsafe(4096);
  private deflated = Buffer.allocUnsafe(deflateBound(4096));
  private lastMs = -1n;
  private lastSeconds = '';

  constructor(
    private readonly host: string,
    private readonly extraJson: string,
    private readonly type: GelfCompression,
    private readonly level: number,
  ) {
    this.head = Buffer.from(`{"version":"1.1","host":${goJsonString(host)},"short_message":"`);
    this.tail = Buffer.from(extraJson.length > 2 ? `,${extraJson.slice(1)}` : '}');
  }

  encode(rec: RemoteRecord): Buffer[] | null {
    const line = rec.line;
    if (line.length === 0) return null;
    let plain = true;
    for (let i = 0; i < line.length; i++)
      if (PLAIN[line[i]!] === 0) {
        plain = false;
        break;
      }
    if (!plain) return gelfDatagrams(compress(Buffer.from(gelfJson(rec, this.host, this.extraJson)), this.type, this.level));
    const ms = rec.timeNano / 1_000_000n;
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastSeconds = `${Number(ms) / 1000}`;
    }
    const level = rec.stream === 'stderr' ? '3' : '6';
    const need = this.head.length + line.length + 40 + this.lastSeconds.length + this.tail.length;
    if (need > this.json.length) {
      this.json = Buffer.allocUnsafe(need * 2);
      this.deflated = Buffer.allocUnsafe(deflateBound(need * 2));
    }
    const j = this.json;
    let n = this.head.copy(j, 0);
    n += line.copy(j, n);
    n += j.write(`","timestamp":${this.lastSeconds},"level":${level}`, n, 'latin1');
    n += this.tail.copy(j, n);
    return gelfDatagrams(this.compressed(j, n));
  }

  /** The payload of `j[0, n)`: the in-process encoder at BestSpeed, zlib otherwise. */
  private compressed(j: Buffer, n: number): Buffer {
    if (this.level !== 1 || this.type === 'none') return compress(Buffer.from(j.subarray(0, n)), this.type, this.level);
    const end = deflateRawInto(j, n, this.deflated, 0);
    const src = j.subarray(0, n);
    if (this.type === 'gzip') {
      const out = Buffer.allocUnsafe(10 + end + 8);
      GZIP_HEADER.copy(out, 0);
      this.deflated.copy(out, 10, 0, end);
      out.writeUInt32LE(crc32(src), 10 + end);
      out.writeUInt32LE(n >>> 0, 14 + end);
      return out;
    }
    return zlibFast(Buffer.from(src)); // zlib framing: rare, the plain path
  }
}

export function createGelfDriver(o: RemoteFactoryOptions): RemoteLogDriver {
  const cfg = o.options;
  const address = gelfAddress(cfg['gelf-address']);
  const host = hostname();
  const extraJson = gelfExtra(o.containerId, cfg, o.attrs);
  const debug = o.onDebug ?? (() => {});
  let transport: Transport;
  let encode: (rec: RemoteRecord) => Buffer[] | null;
  if (address.scheme === 'udp') {
    const type = (cfg['gelf-compression-type'] ?? 'gzip') as GelfCompression;
    const level = atoi(cfg['gelf-compression-level'] ?? '') ?? 1; // go-gelf: flate.BestSpeed
    transport = new DatagramTransport(address.host, Number(address.port));
    const encoder = new GelfUdpEncoder(host, extraJson, type, level);
    encode = (rec) => encoder.encode(rec);
  } else {
    const retries = atoi(cfg['gelf-tcp-max-reconnect'] ?? '') ?? 3;
    const delay = atoi(cfg['gelf-tcp-reconnect-delay'] ?? '') ?? 1;
    transport = new StreamTransport(
      { host: address.host, port: Number(address.port) },
      {
        bufferLimit: 4 << 20, // above the driver's pause mark: blocking mode holds the container before anything drops
        // go-gelf: up to gelf-tcp-max-reconnect attempts, gelf-tcp-reconnect-delay seconds apart,
        // then what waits is given up (later messages try again)
        retryDelayMs: Math.max(delay * 1000, 10),
        maxDelayMs: Math.max(delay * 1000, 10),
        maxRetries: retries,
        failStart: true, // dockerd: "gelf: cannot connect to GELF endpoint"
        dialTimeoutMs: 10_000,
        onError: (err) => debug(`gelf: ${err.message}`),
      },
    );
    encode = (rec) => (rec.line.length === 0 ? null : [Buffer.from(`${gelfJson(rec, host, extraJson)}\0`)]);
  }
  return new RemoteLogDriver({
    name: 'gelf',
    encode,
    transport,
    options: cfg,
    cachePath: join(o.dir, 'container-cached.log'),
    onDebug: debug,
    onError: o.onError,
    startError: (err) => `gelf: cannot connect to GELF endpoint: ${address.host}:${address.port} ${err.message}`,
  });
}
