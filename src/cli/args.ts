// The command line parser of `engine`, docker-style: long flags (--name value, --name=value), short
// flags that combine (-it, -p 80:80, -p80:80), repeatable flags, booleans that take =true/=false,
// `--` ending the flags, and commands such as run/exec whose flags stop at the first positional
// (everything after the image belongs to the container).

/** An error whose exit status is set (run's 125/126/127, a container's own code). */
export class ExitError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type FlagKind = 'bool' | 'string' | 'list' | 'int';

export interface FlagSpec {
  name: string;
  short?: string;
  kind: FlagKind;
  /** Other long names (e.g. --tty for -t). */
  alias?: string[];
}

export interface Parsed {
  flags: Map<string, string | boolean | number | string[]>;
  args: string[];
}

export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

/** A flag the parser refused (unknown, a bad value, a missing value): docker 28 exits 125 with the usage line. */
export class FlagError extends UsageError {
  override readonly name = 'FlagError';
}

/** Too few or too many positional arguments: docker 28 exits 1 with the usage line. */
export class ArgCountError extends UsageError {
  override readonly name = 'ArgCountError';
}

/** `--help` given to a command: the caller prints the flags (exit status 0, as docker). */
export class HelpRequested extends Error {
  override readonly name = 'HelpRequested';
  constructor(readonly specs: readonly FlagSpec[]) {
    super('help requested');
  }
  usage(cmd: string): string {
    const flags = this.specs.map(
      (s) =>
        `  ${s.short ? `-${s.short}, ` : '    '}--${s.name}${s.kind === 'bool' ? '' : s.kind === 'list' ? ' list' : s.kind === 'int' ? ' int' : ' string'}`,
    );
    return `Usage:  engine ${cmd} [OPTIONS]${flags.length ? `\n\nOptions:\n${flags.join('\n')}` : ''}\n`;
  }
}

/** Parses argv against specs; interspersed=false stops at the first positional argument. */
export function parseArgs(argv: string[], specs: readonly FlagSpec[], interspersed = true): Parsed {
  const byLong = new Map<string, FlagSpec>();
  const byShort = new Map<string, FlagSpec>();
  for (const s of specs) {
    byLong.set(s.name, s);
    for (const a of s.alias ?? []) byLong.set(a, s);
    if (s.short) byShort.set(s.short, s);
  }
  const flags = new Map<string, string | boolean | number | string[]>();
  const args: string[] = [];
  const set = (s: FlagSpec, value: string | undefined, next: () => string) => {
    if (s.kind === 'bool') {
      if (value === undefined || value === 'true' || value === '1') flags.set(s.name, true);
      else if (value === 'false' || value === '0') flags.set(s.name, false);
      else throw new FlagError(`invalid argument "${value}" for "--${s.name}" flag: strconv.ParseBool: parsing "${value}": invalid syntax`);
      return;
    }
    const v = value ?? next();
    if (s.kind === 'list') flags.set(s.name, [...((flags.get(s.name) as string[] | undefined) ?? []), v]);
    else if (s.kind === 'int') {
      const n = Number(v);
      if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n))
        throw new FlagError(
          `invalid argument "${v}" for "${s.short ? `-${s.short}, ` : ''}--${s.name}" flag: strconv.ParseInt: parsing "${v}": invalid syntax`,
        );
      flags.set(s.name, n);
    } else flags.set(s.name, v);
  };
  let i = 0;
  const nextValue = (flag: string) => () => {
    if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: ${flag}`);
    return argv[++i]!;
  };
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    // --help (and -h where no flag owns it, as cobra) asks for the command's help.
    if ((a === '--help' && !byLong.has('help')) || (a === '-h' && !byShort.has('h'))) throw new HelpRequested(specs);
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const s = byLong.get(name);
      if (!s) throw new FlagError(`unknown flag: --${name}`);
      set(s, eq < 0 ? undefined : a.slice(eq + 1), nextValue(`--${name}`));
    } else if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const s = byShort.get(a[j]!);
        if (!s) throw new FlagError(`unknown shorthand flag: '${a[j]}' in ${a}`);
        if (s.kind === 'bool') {
          set(s, undefined, () => '');
          continue;
        }
        const rest = a.slice(j + 1).replace(/^=/, '');
        set(s, rest === '' ? undefined : rest, nextValue(`'${a[j]}' in ${a}`));
        break;
      }
    } else {
      if (!interspersed) {
        args.push(...argv.slice(i));
        break;
      }
      args.push(a);
    }
  }
  return { flags, args };
}

/** Typed reads of parsed flags. */
export class Flags {
  constructor(readonly p: Parsed) {}
  bool(name: string): boolean {
    return this.p.flags.get(name) === true;
  }
  has(name: string): boolean {
    return this.p.flags.has(name);
  }
  str(name: string): string | undefined {
    const v = this.p.flags.get(name);
    return typeof v === 'string' ? v : undefined;
  }
  int(name: string): number | undefined {
    const v = this.p.flags.get(name);
    return typeof v === 'number' ? v : undefined;
  }
  list(name: string): string[] {
    const v = this.p.flags.get(name);
    return Array.isArray(v) ? v : [];
  }
  get args(): string[] {
    return this.p.args;
  }
}

/** Parses and wraps; with min/max positional counts checked in docker 28's words. */
export function flagsOf(
  cmd: string,
  argv: string[],
  specs: readonly FlagSpec[],
  opts: { interspersed?: boolean; min?: number; max?: number } = {},
): Flags {
  const f = new Flags(parseArgs(argv, specs, opts.interspersed ?? true));
  const n = f.args.length;
  const count = (k: number) => `${k} argument${k === 1 ? '' : 's'}`;
  const { min, max } = opts;
  const fail = (what: string) => new ArgCountError(`engine: 'engine ${cmd}' ${what}`);
  if (min !== undefined && n < min) throw fail(`requires ${min === max ? '' : 'at least '}${count(min)}`);
  if (max !== undefined && n > max)
    throw fail(max === 0 ? 'accepts no arguments' : `requires ${min === max ? '' : 'at most '}${count(max)}`);
  return f;
}

/** Repeated KEY=VALUE flags (labels, build args, options) as a map. */
export function keyValues(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list) {
    const eq = kv.indexOf('=');
    if (eq < 0) out[kv] = '';
    else out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/** --filter key=value flags as the API's filters map. */
export function filtersOf(list: string[]): Record<string, string[]> | undefined {
  if (!list.length) return undefined;
  const out: Record<string, string[]> = {};
  for (const kv of list) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid filter '${kv}'`);
    (out[kv.slice(0, eq)] ??= []).push(kv.slice(eq + 1));
  }
  return out;
}
