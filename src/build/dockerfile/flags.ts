// Instruction flags (`COPY --from=x`, `HEALTHCHECK --interval=5s`) with Docker's BFlags rules and
// messages, and Go's time.ParseDuration for the HEALTHCHECK durations.

export type FlagType = 'string' | 'bool' | 'strings';

export class FlagError extends Error {}

/**
 * Checks `raw` (as split off the instruction, e.g. `--from=build`) against the flags the
 * instruction declares. Returns name → value ('true'/'false' for booleans; repeated `strings`
 * flags joined with '\n').
 */
export function parseFlags(raw: string[], spec: Record<string, FlagType>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of raw) {
    if (a === '--') break;
    if (!a.startsWith('--')) throw new FlagError(`arg should start with -- : ${a}`);
    const eq = a.indexOf('=');
    const flagName = eq < 0 ? a : a.slice(0, eq);
    const value = eq < 0 ? '' : a.slice(eq + 1);
    const name = flagName.slice(2);
    const type = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (!type) throw new FlagError(`unknown flag: ${flagName}`);
    if (Object.hasOwn(out, name) && type !== 'strings') throw new FlagError(`duplicate flag specified: ${flagName}`);
    if (type === 'bool') {
      if (eq >= 0 && value === '') throw new FlagError(`missing a value on flag: ${flagName}`);
      const v = value.toLowerCase();
      if (v === 'true' || v === '') out[name] = 'true';
      else if (v === 'false') out[name] = 'false';
      else throw new FlagError(`expecting boolean value for flag ${flagName}, not: ${value}`);
    } else {
      if (eq < 0) throw new FlagError(`missing a value on flag: ${flagName}`);
      out[name] = type === 'strings' && Object.hasOwn(out, name) ? `${out[name]}\n${value}` : value;
    }
  }
  return out;
}

const UNIT_NS: Record<string, number> = {
  ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9,
};

/** Go's time.ParseDuration, in nanoseconds (as a JS number: exact below 2^53 ns ≈ 104 days). */
export function parseGoDuration(s: string): number {
  const invalid = () => new FlagError(`time: invalid duration ${JSON.stringify(s)}`);
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw invalid();
  let total = 0;
  while (rest !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    const whole = m[1] ?? '';
    const frac = m[2];
    if (whole === '' && (frac === undefined || frac === '')) throw invalid();
    rest = rest.slice(m[0].length);
    const u = /^[^\d.]+/.exec(rest);
    if (!u) throw new FlagError(`time: missing unit in duration ${JSON.stringify(s)}`);
    const unit = UNIT_NS[u[0]];
    if (unit === undefined) throw new FlagError(`time: unknown unit ${JSON.stringify(u[0])} in duration ${JSON.stringify(s)}`);
    rest = rest.slice(u[0].length);
    total += Number(whole || '0') * unit + (frac ? Number(`0.${frac}`) * unit : 0);
  }
  return sign * Math.trunc(total);
}
