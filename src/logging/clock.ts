// Nanosecond wall-clock timestamps and Go's RFC 3339 "nano" text form (trailing zeros of the
// fraction trimmed, as time.RFC3339Nano prints them), which json-file writes and parses.

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
