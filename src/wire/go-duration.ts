// Go's time.Duration as it crosses the wire: ParseDuration's grammar and error words ("1h30m",
// "-1.5s", "300µs"; "time: invalid duration \"x\"") and Duration.String's form ("1m30s", "500ms").
// Daemon options, Dockerfile flags, filters, since/until, health checks and the CLI all read and
// write durations through this one module. Values are nanoseconds in a bigint (Go's int64).

const MAX = (1n << 63n) - 1n;
const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

export class GoDurationError extends Error {}

const quote = (s: string) => JSON.stringify(s);
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** time.ParseDuration: the duration in nanoseconds, or a GoDurationError with Go's words. */
export function parseGoDuration(text: string): bigint {
  const invalid = () => new GoDurationError(`time: invalid duration ${quote(text)}`);
  let i = 0;
  let negative = false;
  if (text[0] === '-' || text[0] === '+') {
    negative = text[0] === '-';
    i = 1;
  }
  if (text.slice(i) === '0') return 0n;
  if (i === text.length) throw invalid();
  let total = 0n;
  while (i < text.length) {
    if (!(text[i] === '.' || isDigit(text[i]))) throw invalid();
    const wholeStart = i;
    while (isDigit(text[i])) i++;
    const whole = text.slice(wholeStart, i);
    let frac = '';
    if (text[i] === '.') {
      const fracStart = ++i;
      while (isDigit(text[i])) i++;
      frac = text.slice(fracStart, i);
    }
    if (whole === '' && frac === '') throw invalid();
    const unitStart = i;
    while (i < text.length && text[i] !== '.' && !isDigit(text[i])) i++;
    const unitText = text.slice(unitStart, i);
    if (unitText === '') throw new GoDurationError(`time: missing unit in duration ${quote(text)}`);
    const unit = UNITS[unitText];
    if (unit === undefined) throw new GoDurationError(`time: unknown unit ${quote(unitText)} in duration ${quote(text)}`);
    let v = BigInt(whole || '0');
    if (v > MAX / unit) throw invalid();
    v *= unit;
    // Go scales the fraction in float64 and truncates, as here.
    if (frac) v += BigInt(Math.trunc(Number(`0.${frac}`) * Number(unit)));
    total += v;
    if (total > MAX + (negative ? 1n : 0n)) throw invalid();
  }
  return negative ? -total : total;
}

/** The duration, or undefined when the text is not one. */
export function tryGoDuration(text: string): bigint | undefined {
  try {
    return parseGoDuration(text);
  } catch (e) {
    if (e instanceof GoDurationError) return undefined; // not a duration: the caller tries other forms
    throw e;
  }
}

/** Duration.String(): "0s", "500ms", "1.5s", "1m30s", "2h0m0s", "-1µs". */
export function formatGoDuration(ns: bigint | number): string {
  let u = typeof ns === 'bigint' ? ns : BigInt(Math.round(ns));
  if (u === 0n) return '0s';
  const sign = u < 0n ? '-' : '';
  if (u < 0n) u = -u;
  const frac = (whole: bigint, rest: bigint, digits: number) => {
    const f = String(rest).padStart(digits, '0').replace(/0+$/, '');
    return f ? `${whole}.${f}` : String(whole);
  };
  if (u < 1_000n) return `${sign}${u}ns`;
  if (u < 1_000_000n) return `${sign}${frac(u / 1_000n, u % 1_000n, 3)}µs`;
  if (u < 1_000_000_000n) return `${sign}${frac(u / 1_000_000n, u % 1_000_000n, 6)}ms`;
  const h = u / UNITS.h!;
  u -= h * UNITS.h!;
  const m = u / UNITS.m!;
  u -= m * UNITS.m!;
  const s = frac(u / UNITS.s!, u % UNITS.s!, 9);
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
