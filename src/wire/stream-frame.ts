// Docker's multiplexed stream ("stdcopy"): attach, exec and logs without a TTY precede each payload
// with an 8-byte header [stream, 0, 0, 0, size as big-endian uint32]; stream 0 is stdin, 1 stdout,
// 2 stderr and 3 the daemon's own error ("systemerr", which ends the stream). The one encoder and
// decoder of that layout, for the daemon and the client alike.

export type FrameStream = 'stdin' | 'stdout' | 'stderr' | 'systemerr';
export interface Frame {
  stream: FrameStream;
  data: Buffer;
}

export const FRAME_HEADER_SIZE = 8;
const IDS: Record<FrameStream, number> = { stdin: 0, stdout: 1, stderr: 2, systemerr: 3 };
const NAMES: readonly FrameStream[] = ['stdin', 'stdout', 'stderr', 'systemerr'];

/** Writes the 8-byte header of a frame at out[at] (for callers packing many frames into one buffer). */
export function writeFrameHeader(out: Uint8Array, at: number, stream: FrameStream | number, size: number): void {
  out[at] = typeof stream === 'number' ? stream : IDS[stream];
  out[at + 1] = 0;
  out[at + 2] = 0;
  out[at + 3] = 0;
  out[at + 4] = size >>> 24;
  out[at + 5] = (size >>> 16) & 0xff;
  out[at + 6] = (size >>> 8) & 0xff;
  out[at + 7] = size & 0xff;
}

/** The header of one frame of `size` bytes. */
export function frameHeader(stream: FrameStream, size: number): Buffer {
  const h = Buffer.allocUnsafe(FRAME_HEADER_SIZE);
  writeFrameHeader(h, 0, stream, size);
  return h;
}

/** One frame, header and payload, as a single buffer. */
export function encodeFrame(stream: FrameStream, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + data.length);
  writeFrameHeader(out, 0, stream, data.length);
  data.copy(out, FRAME_HEADER_SIZE);
  return out;
}

/**
 * Splits bytes arriving in any chunking into frames. push() returns the frames completed by the
 * chunk; `pending` says how many bytes wait for the rest of a frame. A stream byte above 3 is a
 * malformed stream (it throws).
 */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);

  get pending(): number {
    return this.buf.length;
  }

  push(chunk: Buffer): Frame[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Frame[] = [];
    while (this.buf.length >= FRAME_HEADER_SIZE) {
      const len = this.buf.readUInt32BE(4);
      if (this.buf.length < FRAME_HEADER_SIZE + len) break;
      const stream = NAMES[this.buf[0]!];
      if (!stream) throw new Error(`malformed stream: frame type ${this.buf[0]}`);
      out.push({ stream, data: this.buf.subarray(FRAME_HEADER_SIZE, FRAME_HEADER_SIZE + len) });
      this.buf = this.buf.subarray(FRAME_HEADER_SIZE + len);
    }
    return out;
  }
}

/** Every frame of a whole buffer; throws when it ends inside a frame. */
export function decodeFrames(all: Buffer): Frame[] {
  const d = new FrameDecoder();
  const frames = d.push(all);
  if (d.pending) throw new Error('stream ended inside a frame');
  return frames;
}
