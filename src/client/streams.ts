// Streams of the API as async iterables: newline-delimited JSON (pull/push/build progress, events,
// stats) and the 8-byte-header frames of logs and non-TTY attach/exec (stream byte, 3 zero bytes,
// big-endian length), plus a frame encoder for tests and dial-stdio peers.
import type { Readable } from 'node:stream';

export type StdStream = 'stdin' | 'stdout' | 'stderr';
export interface Frame {
  stream: StdStream;
  data: Buffer;
}

/** Each JSON value of a newline-delimited stream (empty lines skipped). */
export async function* jsonLines<T = unknown>(src: AsyncIterable<Buffer | string>): AsyncGenerator<T> {
  let pending = '';
  for await (const chunk of src) {
    pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line) yield JSON.parse(line) as T;
    }
  }
  if (pending.trim()) yield JSON.parse(pending) as T;
}

const STREAMS: StdStream[] = ['stdin', 'stdout', 'stderr'];

/** Demultiplexes 8-byte-header frames. A stream byte other than 0–2 (the daemon's systemerr, 3) is an error. */
export async function* demux(src: AsyncIterable<Buffer>): AsyncGenerator<Frame> {
  let buf: Buffer = Buffer.alloc(0);
  for await (const chunk of src) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 8) {
      const len = buf.readUInt32BE(4);
      if (buf.length < 8 + len) break;
      const kind = buf[0]!;
      const data = buf.subarray(8, 8 + len);
      buf = buf.subarray(8 + len);
      if (kind === 3) throw new Error(data.toString('utf8').trim() || 'error from the daemon');
      const stream = STREAMS[kind];
      if (!stream) throw new Error(`malformed stream: frame type ${kind}`);
      yield { stream, data };
    }
  }
  if (buf.length) throw new Error('stream ended inside a frame');
}

/** A TTY stream has no frames: every chunk is stdout. */
export async function* rawFrames(src: AsyncIterable<Buffer>): AsyncGenerator<Frame> {
  for await (const data of src) yield { stream: 'stdout', data };
}

export function encodeFrame(stream: StdStream, data: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h[0] = STREAMS.indexOf(stream);
  h.writeUInt32BE(data.length, 4);
  return Buffer.concat([h, data]);
}

/** Reads a stream to the end into one Buffer. */
export async function collect(src: Readable | AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of src) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks);
}
