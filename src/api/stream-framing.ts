// The multiplexed stream of attach, exec start and logs without a TTY: each chunk is preceded by
// an 8-byte header [stream, 0, 0, 0, size as big-endian uint32] (stream 0 stdin, 1 stdout,
// 2 stderr). With a TTY the bytes go raw; that choice stays with the caller.

export type StreamName = 'stdin' | 'stdout' | 'stderr';

const STREAM_ID: Record<StreamName, number> = { stdin: 0, stdout: 1, stderr: 2 };

/** The 8-byte header of one frame. */
export function frameHeader(stream: StreamName, size: number): Buffer {
  const h = Buffer.alloc(8);
  h[0] = STREAM_ID[stream];
  h.writeUInt32BE(size, 4);
  return h;
}

/** One frame as a single buffer (for sockets written with one call per chunk). */
export function frame(stream: StreamName, data: Buffer): Buffer {
  return Buffer.concat([frameHeader(stream, data.length), data]);
}

/** Writes one frame as two writes (no copy of the payload); returns the payload write's result. */
export function writeFrame(out: { write(chunk: Buffer): boolean }, stream: StreamName, data: Buffer): boolean {
  out.write(frameHeader(stream, data.length));
  return out.write(data);
}
