// The `<time> ` prefix of each entry of logs?timestamps=1 (the frames around it: wire/stream-frame.ts).

import { rfc3339NanoFixed } from './time.ts';

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
