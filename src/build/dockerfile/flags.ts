// Instruction flags (`COPY --from=x`, `HEALTHCHECK --interval=5s`) with Docker's BFlags rules and
// messages, and Go's time.ParseDuration for the HEALTHCHECK durations.

import { GoDurationError, parseGoDuration as parseGo } from '../../wire/go-duration.ts';

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

/** Go's time.ParseDuration, in nanoseconds (as a JS number: exact below 2^53 ns ≈ 104 days). */
export function parseGoDuration(s: string): number {
  try {
    return Number(parseGo(s));
  } catch (e) {
    if (e instanceof GoDurationError) throw new FlagError(e.message);
    throw e;
  }
}
