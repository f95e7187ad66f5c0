// Docker's multiplexed stream ("stdcopy"), the byte layout shared by attach, exec and logs without a
// TTY: each payload is preceded by an 8-byte header [stream, 0, 0, 0, size as big-endian uint32]
// (stream 0 stdin, 1 stdout, 2 stderr); and the `<time> ` prefix of logs?timestamps=1.

import { rfc3339NanoFixed } from './time.ts';

/** Writes the 8-byte header of a frame at out[at]. */
export function writeFrameHeader(out: Uint8Array, at: number, streamId: number, size: number): void {
  out[at] = streamId;
  out[at + 1] = 0;
  out[at + 2] = 0;
  out[at + 3] = 0;
  out[at + 4] = size >>> 24;
  out[at + 5] = (size >>> 16) & 0xff;
  out[at + 6] = (size >>> 8) & 0xff;
  out[at + 7] = size & 0xff;
}

/** `<RFC 3339 time with 9 fixed decimals> ` before each entry of `logs?timestamps=1`; consecutive entries mostly share a time. */
export class TimestampPrefixes {
  private lastNs = -1n;
  private last = Buffer.alloc(0);

  of(ns: bigint): Buffer {
    if (ns !== this.lastNs) {
      this.last = Buffer.from(`${rfc3339NanoFixed(ns)} `, 'latin1');
      this.lastNs = ns;
    }
    return this.last;
  }
}
