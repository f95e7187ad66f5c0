// The command line, read the way the Go flag library (pflag) reads dockerd's: --flag value,
// --flag=value, bare --bool, --bool=false, -D, -H value, -Hvalue, -H=value, grouped short bools
// (-De), and `--` ending the options. Every option comes from the OPTIONS table; repeatable and
// structured options accumulate into the same typed values the configuration file produces.

import { ConfigError } from './config-error.ts';
import type { RuntimeSpec, UlimitSpec, AddressPool } from './daemon-config.ts';
import { OPTION_BY_FLAG, OPTION_BY_SHORT, type OptionSpec } from './options.ts';
import {
  parseAddressPool,
  parseBool,
  parseFeature,
  parseInteger,
  parseKeyValue,
  parseNetworkOpt,
  parseRuntimeFlag,
  parseUlimit,
} from './values.ts';

/** Options that make the program do something instead of configuring the daemon. */
export const ACTION_FLAGS = new Set(['help', 'version', 'validate']);

export interface ParsedArgs {
  /** Typed values by config key. An empty string option is left out: it means "the default". */
  values: Map<string, unknown>;
  /** Config keys of every option given on the command line, with or without a value. */
  given: Set<string>;
  help: boolean;
  version: boolean;
  validate: boolean;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const parsed: ParsedArgs = { values: new Map(), given: new Set(), help: false, version: false, validate: false };
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      const name = eq < 0 ? body : body.slice(0, eq);
      const opt = OPTION_BY_FLAG.get(name);
      if (!opt || opt.fileOnly) throw new ConfigError(`unknown flag: --${name}`, true);
      if (eq >= 0) apply(parsed, opt, body.slice(eq + 1));
      else if (opt.type === 'bool') apply(parsed, opt, 'true');
      else if (i + 1 < argv.length) apply(parsed, opt, argv[++i]!);
      else throw new ConfigError(`flag needs an argument: --${name}`, true);
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      i = parseShortGroup(parsed, argv, i);
      continue;
    }
    positional.push(arg);
  }
  if (positional.length > 0) throw new ConfigError(`"engined" accepts no arguments (got "${positional[0]}")`, true);
  return parsed;
}

/** -D, -Dl debug, -Hunix:///x, -H=unix:///x, -H unix:///x. Returns the index of the last argument used. */
function parseShortGroup(parsed: ParsedArgs, argv: readonly string[], i: number): number {
  const arg = argv[i]!;
  for (let j = 1; j < arg.length; j++) {
    const letter = arg[j]!;
    const opt = OPTION_BY_SHORT.get(letter);
    if (!opt) throw new ConfigError(`unknown shorthand flag: '${letter}' in ${arg}`, true);
    const rest = arg.slice(j + 1);
    if (opt.type === 'bool') {
      if (rest.startsWith('=')) {
        apply(parsed, opt, rest.slice(1));
        return i;
      }
      apply(parsed, opt, 'true');
      continue;
    }
    if (rest !== '') apply(parsed, opt, rest.startsWith('=') ? rest.slice(1) : rest);
    else if (i + 1 < argv.length) apply(parsed, opt, argv[++i]!);
    else throw new ConfigError(`flag needs an argument: '${letter}' in -${letter}`, true);
    return i;
  }
  return i;
}

function flagName(opt: OptionSpec): string {
  return opt.short ? `-${opt.short}, --${opt.flag}` : `--${opt.flag}`;
}

function apply(parsed: ParsedArgs, opt: OptionSpec, text: string): void {
  try {
    if (ACTION_FLAGS.has(opt.flag)) {
      parsed[opt.flag as 'help' | 'version' | 'validate'] = parseBool(text);
      return;
    }
    parsed.given.add(opt.key);
    accumulate(parsed.values, opt, text);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(`invalid argument "${text}" for "${flagName(opt)}" flag: ${err.message}`);
  }
}

/** Adds one occurrence of a flag to the typed value of its key (later single values win). */
function accumulate(values: Map<string, unknown>, opt: OptionSpec, text: string): void {
  const key = opt.key;
  const record = <T>() => (values.get(key) as Record<string, T> | undefined) ?? {};
  switch (opt.type) {
    case 'bool':
      values.set(key, parseBool(text));
      return;
    case 'string':
      if (text === '') values.delete(key);
      else values.set(key, text);
      return;
    case 'int':
      values.set(key, parseInteger(text));
      return;
    case 'list':
      values.set(key, [...((values.get(key) as string[] | undefined) ?? []), text]);
      return;
    case 'address-pools':
      values.set(key, [...((values.get(key) as AddressPool[] | undefined) ?? []), parseAddressPool(text)]);
      return;
    case 'map': {
      const [k, v] = parseKeyValue(text);
      values.set(key, { ...record<string>(), [k]: v });
      return;
    }
    case 'ulimits': {
      const u = parseUlimit(text);
      values.set(key, { ...record<UlimitSpec>(), [u.Name]: u });
      return;
    }
    case 'features': {
      const [name, on] = parseFeature(text);
      values.set(key, { ...record<boolean>(), [name]: on });
      return;
    }
    case 'runtimes': {
      const [name, spec] = parseRuntimeFlag(text);
      const current = record<RuntimeSpec>();
      if (name in current) throw new ConfigError(`runtime '${name}' was already defined`);
      values.set(key, { ...current, [name]: spec });
      return;
    }
    case 'network-opts': {
      const [driver, option, value] = parseNetworkOpt(text);
      const current = record<Record<string, string>>();
      values.set(key, { ...current, [driver]: { ...(current[driver] ?? {}), [option]: value } });
      return;
    }
    case 'object':
      throw new ConfigError('can only be set in the configuration file');
  }
}
