// The multiplexed stream of attach, exec start and logs without a TTY: each chunk is preceded by
// an 8-byte header [stream, 0, 0, 0, size as big-endian uint32] (stream 0 stdin, 1 stdout,
// 2 stderr). With a TTY the bytes go raw; that choice stays with the caller. Logs are framed a
// batch of entries at a time into one buffer (logPayload).

import { TimestampPrefixes, writeFrameHeader } from '../util/stdcopy.ts';

export { TimestampPrefixes };

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

/**
 * A batch of log entries as one buffer: each entry framed (or raw with a TTY), preceded by its
 * time when `stamps` is given. One write per batch instead of two per entry.
 */
export function logPayload(
  batch: readonly { stream: 'stdout' | 'stderr'; line: Buffer; timeNano: bigint }[],
  tty: boolean,
  stamps?: TimestampPrefixes,
): Buffer {
  const head = tty ? 0 : 8;
  let size = 0;
  for (let k = 0; k < batch.length; k++) {
    const m = batch[k]!;
    size += head + m.line.length + (stamps ? stamps.of(m.timeNano).length : 0);
  }
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (let k = 0; k < batch.length; k++) {
    const m = batch[k]!;
    const stamp = stamps?.of(m.timeNano);
    const n = m.line.length + (stamp ? stamp.length : 0);
    if (!tty) {
      writeFrameHeader(out, o, m.stream === 'stdout' ? 1 : 2, n);
      o += 8;
    }
    if (stamp) o += stamp.copy(out, o);
    o += m.line.copy(out, o);
  }
  return out;
}
