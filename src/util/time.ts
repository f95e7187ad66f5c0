// Time as the Docker API writes and reads it, in one place: the zero time of unset fields, the wall
// clock with nanosecond digits, RFC 3339 with nanoseconds (fixed nine digits as `docker logs -t`
// prints them, or trimmed as Go marshals time.Time — formatted and parsed fast, since every log
// line goes through them), and the since/until values clients send (unix seconds with a fraction,
// RFC 3339 dates, or Go durations before now). Callers word the error of a value that does not
// parse: dockerd words it differently per endpoint.

import { tryGoDuration } from '../wire/go-duration.ts';

/** Go's zero time.Time as JSON: what unset time fields hold (FinishedAt of a never-run container). */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/** "2026-11-24T10:00:00.123456789Z": always nine fraction digits (docker logs -t, records). */
export function rfc3339NanoFixed(ns: bigint): string {
  const iso = new Date(Number(ns / NS_PER_MS)).toISOString();
  return `${iso.slice(0, 19)}.${(((ns % NS_PER_S) + NS_PER_S) % NS_PER_S).toString().padStart(9, '0')}Z`;
}

let wallBase = BigInt(Date.now()) * 1_000_000n;
let hrBase = process.hrtime.bigint();

/**
 * Now, in ns since the epoch. hrtime gives the digits below a millisecond; the anchor to Date.now()
 * is renewed whenever the two drift apart (NTP steps, suspend), so times stay wall-clock times.
 */
export function nowNano(): bigint {
  const hr = process.hrtime.bigint();
  const t = wallBase + (hr - hrBase);
  const wallMs = Date.now();
  const drift = Number(t / 1_000_000n) - wallMs;
  if (drift > 2 || drift < -2) {
    wallBase = BigInt(wallMs) * 1_000_000n;
    hrBase = hr;
    return wallBase;
  }
  return t;
}

let fmtSec = Number.NaN;
let fmtPrefix = '';

/** 2026-11-22T03:20:11.123456789Z; 2026-11-22T03:20:11.1Z; 2026-11-22T03:20:11Z (UTC). */
export function formatTimeNano(ns: bigint): string {
  let sec = ns / 1_000_000_000n;
  let frac = ns - sec * 1_000_000_000n;
  if (frac < 0n) {
    frac += 1_000_000_000n;
    sec -= 1n;
  }
  const s = Number(sec);
  if (s !== fmtSec) {
    fmtPrefix = new Date(s * 1000).toISOString().slice(0, 19);
    fmtSec = s;
  }
  if (frac === 0n) return `${fmtPrefix}Z`;
  let digits = frac.toString().padStart(9, '0');
  let end = 9;
  while (digits.charCodeAt(end - 1) === 48) end--;
  if (end < 9) digits = digits.slice(0, end);
  return `${fmtPrefix}.${digits}Z`;
}

let parsePrefix = '';
let parseMs = 0n;
const TIME_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9})\d*)?(Z|[+-]\d{2}:\d{2})$/;

/** Parses RFC 3339 with up to nanosecond digits; throws on anything else. */
export function parseTimeNano(text: string): bigint {
  // Fast path for what we write: UTC with the same second as the previous call.
  if (text.length >= 20 && text.charCodeAt(text.length - 1) === 90 /* Z */) {
    const prefix = text.slice(0, 19);
    const c = text.charCodeAt(19);
    if (prefix === parsePrefix && (c === 46 /* . */ || text.length === 20)) {
      const frac = text.length === 20 ? '' : text.slice(20, -1);
      if (frac.length <= 9 && /^\d*$/.test(frac)) return parseMs * 1_000_000n + fracNanos(frac);
    }
  }
  const m = TIME_RE.exec(text);
  if (!m) throw new Error(`invalid timestamp: ${JSON.stringify(text)}`);
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) throw new Error(`invalid timestamp: ${JSON.stringify(text)}`);
  if (m[3] === 'Z') {
    parsePrefix = m[1]!;
    parseMs = BigInt(ms);
  }
  return BigInt(ms) * 1_000_000n + fracNanos(m[2] ?? '');
}

function fracNanos(frac: string): bigint {
  return frac === '' ? 0n : BigInt(frac.padEnd(9, '0'));
}

/** Now as RFC 3339 with nine fraction digits: the Created/StartedAt of records. */
export function nowIso(): string {
  return rfc3339NanoFixed(nowNano());
}

const RFC3339 = /^(\d{4}-\d\d-\d\d)(?:[T ](\d\d:\d\d(?::\d\d)?)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)?)?$/;

/**
 * A since/until value as dockerd's GetTimestamp reads it, in nanoseconds since the epoch: unix
 * seconds with an optional fraction ("1700000000.123456789"), an RFC 3339 date or date-time (local
 * time without a zone, as Go's time.ParseInLocation with time.Local), or a Go duration before `now`
 * (milliseconds). Undefined when the text is none of these.
 */
export function parseTimeValue(text: string, now = Date.now()): bigint | undefined {
  const secs = /^(-?\d+)(?:\.(\d{1,9})\d*)?$/.exec(text);
  if (secs) {
    const whole = BigInt(secs[1]!);
    const frac = BigInt((secs[2] ?? '').padEnd(9, '0') || '0');
    return whole * NS_PER_S + (secs[1]!.startsWith('-') ? -frac : frac);
  }
  const d = tryGoDuration(text);
  if (d !== undefined) return BigInt(now) * NS_PER_MS - d;
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const time = m[2] ? (m[2].length === 5 ? `${m[2]}:00` : m[2]) : '00:00:00';
  const zone = m[4] ? (m[4] === 'Z' ? 'Z' : `${m[4].slice(0, 3)}:${m[4].slice(-2)}`) : '';
  const ms = Date.parse(`${m[1]}T${time}${zone}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * NS_PER_MS + BigInt((m[3] ?? '').slice(0, 9).padEnd(9, '0'));
}
