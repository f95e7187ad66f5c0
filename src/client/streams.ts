// Streams of the API as async iterables: newline-delimited JSON (pull/push/build progress, events,
// stats) and the 8-byte-header frames of logs and non-TTY attach/exec (stream byte, 3 zero bytes,
// big-endian length; the codec is wire/stream-frame.ts), plus a frame encoder for tests and
// dial-stdio peers.
import type { Readable } from 'node:stream';
import { encodeFrame as encode, FrameDecoder } from '../wire/stream-frame.ts';

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

/** Demultiplexes 8-byte-header frames. The daemon's systemerr frame (3) becomes an error. */
export async function* demux(src: AsyncIterable<Buffer>): AsyncGenerator<Frame> {
  const decoder = new FrameDecoder();
  for await (const chunk of src) {
    for (const f of decoder.push(chunk)) {
      if (f.stream === 'systemerr') throw new Error(f.data.toString('utf8').trim() || 'error from the daemon');
      yield { stream: f.stream, data: f.data };
    }
  }
  if (decoder.pending) throw new Error('stream ended inside a frame');
}

/** A TTY stream has no frames: every chunk is stdout. */
export async function* rawFrames(src: AsyncIterable<Buffer>): AsyncGenerator<Frame> {
  for await (const data of src) yield { stream: 'stdout', data };
}

export function encodeFrame(stream: StdStream, data: Buffer): Buffer {
  return encode(stream, data);
}

/** Reads a stream to the end into one Buffer. */
export async function collect(src: Readable | AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of src) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks);
}
