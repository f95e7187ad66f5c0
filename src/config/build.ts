// Builds the daemon configuration from its sources: table defaults, the configuration file, the
// command line (which wins) and the environment (which only fills what neither set). Refuses an
// option given both as a flag and in the file, validates the result and lists the warnings for
// options whose behaviour is not built. Shared by start-up (load.ts) and SIGHUP (reload.ts).

import { homedir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { ConfigError } from './config-error.ts';
import type { DaemonConfig, LoadedConfig } from './daemon-config.ts';
import { convertFileValues, readConfigFile, unknownDirectives } from './file.ts';
import { OPTIONS, OPTION_BY_KEY } from './options.ts';
import { ACTION_FLAGS } from './args.ts';
import { KNOWN_FEATURES, normalizeConfig, validateConfig } from './validate.ts';
import { formatValue, maskCredentials } from './values.ts';
import { rootlessConfigFile, rootlessDefaults, rootlessRequested } from './rootless.ts';

export const DEFAULT_CONFIG_FILE = OPTION_BY_KEY.get('config-file')!.default as string;

/** What the command line set: typed values, and every key given (even as an empty string). */
export interface FlagValues {
  values: Map<string, unknown>;
  given: Set<string>;
}

/** What a reload needs besides LoadedConfig: the command-line values and the log level without --debug. */
interface StartupState {
  flags: FlagValues;
  baseLogLevel: string;
}
const STARTUP = new WeakMap<LoadedConfig, StartupState>();

export function startupStateOf(loaded: LoadedConfig): StartupState {
  const known = STARTUP.get(loaded);
  if (known) return known;
  // A LoadedConfig made elsewhere (tests, hand-built): the flag values are the current values of the flag keys.
  const config = loaded.config as unknown as Record<string, unknown>;
  const values = new Map([...loaded.flagKeys].filter((k) => config[k] !== undefined).map((k) => [k, config[k]] as const));
  const explicitLevel = loaded.flagKeys.has('log-level') || !loaded.config.debug;
  return { flags: { values, given: new Set(loaded.flagKeys) }, baseLogLevel: explicitLevel ? loaded.config['log-level'] : 'info' };
}

export function rememberStartupState(loaded: LoadedConfig, state: StartupState): void {
  STARTUP.set(loaded, state);
}

export function defaultConfig(): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const opt of OPTIONS) {
    if (ACTION_FLAGS.has(opt.flag) || opt.default === undefined) continue;
    config[opt.key] = structuredClone(opt.default);
  }
  return config;
}

export interface Built {
  loaded: LoadedConfig;
  baseLogLevel: string;
}

/** Throws ConfigError; errors that involve the file name it (`unable to configure … with file <path>: …`). */
export function buildConfig(flags: FlagValues, env: NodeJS.ProcessEnv): Built {
  const rootless = rootlessRequested(flags.values.get('rootless'), env);
  const path = (flags.values.get('config-file') as string | undefined) ?? (rootless ? rootlessConfigFile(env) : DEFAULT_CONFIG_FILE);
  const inFile = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError(`unable to configure the Engine daemon with file ${path}: ${err.message}`);
      throw err;
    }
  };

  let file = { values: new Map<string, unknown>(), given: new Set<string>() };
  let haveFile = false;
  inFile(() => {
    const raw = readConfigFile(path, flags.given.has('config-file'));
    if (!raw) return;
    haveFile = true;
    const unknown = unknownDirectives(raw);
    if (unknown.length > 0) throw new ConfigError(`the following directives don't match any configuration option: ${unknown.join(', ')}`);
    const conflicts = findConflicts(raw, flags);
    if (conflicts.length > 0) throw new ConfigError(conflicts.join('\n'));
    file = convertFileValues(raw);
  });

  const config = defaultConfig();
  for (const [key, value] of file.values) config[key] = value;
  for (const [key, value] of flags.values) {
    config[key] = key === 'runtimes' ? { ...(config.runtimes as object), ...(value as object) } : value;
  }
  config['config-file'] = path;
  const explicit = (key: string) => flags.values.has(key) || file.values.has(key);
  if (rootless) {
    for (const [key, value] of Object.entries(rootlessDefaults(env))) if (!explicit(key)) config[key] = value;
  }
  applyEnvironment(config, explicit, env);
  normalizeConfig(config);

  const baseLogLevel = config['log-level'] as string;
  if (config.debug === true && !explicit('log-level')) config['log-level'] = 'debug';
  if (config.tlsverify === true) config.tls = true;

  if (haveFile) inFile(() => validateConfig(config));
  else validateConfig(config);

  const flagKeys = new Set(flags.given);
  const fileKeys = new Set(file.given);
  const daemonConfig = config as unknown as DaemonConfig;
  const loaded: LoadedConfig = {
    config: daemonConfig,
    flagKeys,
    fileKeys,
    warnings: collectWarnings(daemonConfig, new Set([...flagKeys, ...fileKeys])),
  };
  rememberStartupState(loaded, { flags, baseLogLevel });
  return { loaded, baseLogLevel };
}

/**
 * Directives also given as flags, in dockerd's message shape; plus an older and a newer form of one
 * key given together. `runtimes` merge with --add-runtime (as in dockerd); only a name defined in
 * both places conflicts.
 */
export function findConflicts(raw: Map<string, unknown>, flags: FlagValues): string[] {
  const errors: string[] = [];
  for (const opt of OPTIONS) {
    for (const alt of opt.altKeys ?? []) {
      if (raw.has(alt) && raw.has(opt.key)) errors.push(`${alt} and ${opt.key} must not both be specified in the config file`);
    }
  }
  const conflicts: [string, string][] = [];
  const describe = (name: string, fromFlag: unknown, fromFile: unknown) => {
    const shown = (v: unknown) => (name.endsWith('-proxy') && typeof v === 'string' ? maskCredentials(v) : formatValue(v));
    conflicts.push([name, `${name}: (from flag: ${shown(fromFlag)}, from file: ${shown(fromFile)})`]);
  };
  for (const [directive, fileValue] of raw) {
    const opt = OPTION_BY_KEY.get(directive);
    if (!opt || !flags.given.has(opt.key)) continue;
    const flagValue = flags.values.get(opt.key) ?? '';
    if (opt.type === 'runtimes') {
      const fromFlags = flagValue as Record<string, { path?: string }>;
      const fromFile = (typeof fileValue === 'object' && fileValue !== null ? fileValue : {}) as Record<string, unknown>;
      for (const name of Object.keys(fromFile)) {
        if (name in fromFlags) describe(`runtimes.${name}`, fromFlags[name]?.path, fromFile[name]);
      }
      continue;
    }
    describe(directive.split('.').pop()!, flagValue, fileValue);
  }
  if (conflicts.length > 0) {
    conflicts.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const list = conflicts.map(([, text]) => text).join(', ');
    errors.push(`the following directives are specified both as a flag and in the configuration file: ${list}`);
  }
  return errors;
}

const PROXY_ENV: [string, string[]][] = [
  ['proxies.http-proxy', ['HTTP_PROXY', 'http_proxy']],
  ['proxies.https-proxy', ['HTTPS_PROXY', 'https_proxy']],
  ['proxies.no-proxy', ['NO_PROXY', 'no_proxy']],
];
const TLS_FILES: [string, string][] = [
  ['tlscacert', 'ca.pem'],
  ['tlscert', 'cert.pem'],
  ['tlskey', 'key.pem'],
];

/** The environment fills only what neither the command line nor the file set. */
function applyEnvironment(config: Record<string, unknown>, explicit: (key: string) => boolean, env: NodeJS.ProcessEnv): void {
  if (!explicit('storage-driver') && env.ENGINE_DRIVER) config['storage-driver'] = env.ENGINE_DRIVER;
  if (!explicit('tlsverify') && env.ENGINE_TLS_VERIFY) config.tlsverify = true;
  const certDir = env.ENGINE_CERT_PATH || '~/.engine';
  for (const [key, name] of TLS_FILES) {
    if (!explicit(key)) config[key] = `${certDir.replace(/\/+$/, '')}/${name}`;
    config[key] = expandHome(config[key] as string, env);
  }
  for (const [key, names] of PROXY_ENV) {
    if (explicit(key)) continue;
    const value = names.map((n) => env[n]).find((v) => v);
    if (value) config[key] = value;
  }
}

function expandHome(path: string, env: NodeJS.ProcessEnv): string {
  if (path !== '~' && !path.startsWith('~/')) return path;
  return (env.HOME || homedir()) + path.slice(1);
}

/**
 * One line per option that is set (by flag or file) to something other than its default while its
 * behaviour is pending or unsupported, and one per unknown feature name.
 */
export function collectWarnings(config: DaemonConfig, setKeys: Set<string>): string[] {
  const values = config as unknown as Record<string, unknown>;
  const warnings: string[] = [];
  for (const opt of OPTIONS) {
    if (opt.status === 'built' || !setKeys.has(opt.key)) continue;
    const value = values[opt.key];
    if (value === undefined || isDeepStrictEqual(value, opt.default)) continue;
    warnings.push(`${opt.key} is set but ${opt.note ?? 'is not built yet'}`);
  }
  for (const name of Object.keys(config.features ?? {})) {
    if (!KNOWN_FEATURES.has(name)) warnings.push(`features.${name} is set but is not a known feature`);
  }
  return warnings;
}
