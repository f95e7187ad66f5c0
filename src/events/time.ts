// The `since`/`until` values of GET /events: unix seconds with an optional fraction (what the docker
// CLI sends, "1700000000.123456789"; the fraction is scaled like dockerd's, "1.5" = 1.5 s), or an
// RFC 3339 date for hand-written requests.
import { invalidParameter } from '../errors.ts';

const NS_PER_S = 1_000_000_000n;

/** Nanoseconds since the epoch; undefined for an absent or empty value. */
export function parseEventTime(value: string | undefined, name: string): bigint | undefined {
  if (value === undefined || value === '') return undefined;
  const m = /^(-?\d+)(?:\.(\d{1,9})\d*)?$/.exec(value);
  if (m) {
    const frac = (m[2] ?? '').padEnd(9, '0');
    const secs = BigInt(m[1]!);
    return secs * NS_PER_S + (secs < 0n ? -1n : 1n) * BigInt(frac || '0');
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) {
      // Date keeps milliseconds only: carry the sub-millisecond digits of the fraction over.
      const sub = /\.\d{3}(\d{1,6})/.exec(value)?.[1]?.padEnd(6, '0') ?? '0';
      return BigInt(ms) * 1_000_000n + BigInt(sub);
    }
  }
  throw invalidParameter(`invalid value for ${name}: ${JSON.stringify(value)}: want unix seconds (with an optional fraction) or an RFC 3339 date`);
}
