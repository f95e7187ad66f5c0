// The multiplexed stream of attach, exec start and logs without a TTY, as the API writes it (the
// frame layout itself: wire/stream-frame.ts). With a TTY the bytes go raw; that choice stays with
// the caller. Logs are framed a batch of entries at a time into one buffer (logPayload).

import { TimestampPrefixes } from '../util/stdcopy.ts';
import { encodeFrame, frameHeader, writeFrameHeader } from '../wire/stream-frame.ts';

export { TimestampPrefixes, frameHeader, encodeFrame as frame };

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
