// SIGHUP: re-read the configuration file and apply only the reloadable options. The command-line
// values of start-up stay; an option the file now also sets, or any invalid value, fails the reload
// and the daemon keeps its current configuration.

import { isDeepStrictEqual } from 'node:util';
import { buildConfig, collectWarnings, rememberStartupState, startupStateOf } from './build.ts';
import { ConfigError } from './config-error.ts';
import type { DaemonConfig, LoadedConfig } from './daemon-config.ts';
import { OPTIONS } from './options.ts';
import { validateConfig } from './validate.ts';

export type ReloadOutcome = { ok: true; loaded: LoadedConfig; changed: string[] } | { ok: false; error: string };

const RELOADABLE = OPTIONS.filter((o) => o.reloadable).map((o) => o.key);

export function reloadConfig(current: LoadedConfig, env: NodeJS.ProcessEnv): ReloadOutcome {
  const startup = startupStateOf(current);
  try {
    // The same pipeline as start-up: file + start-up flags + environment, fully validated.
    const fresh = buildConfig(startup.flags, env).loaded;
    const previous = current.config as unknown as Record<string, unknown>;
    const next: Record<string, unknown> = structuredClone(previous);
    const fileKeys = new Set([...current.fileKeys].filter((k) => !RELOADABLE.includes(k)));
    const freshValues = fresh.config as unknown as Record<string, unknown>;
    for (const key of RELOADABLE) {
      if (freshValues[key] === undefined) delete next[key];
      else next[key] = structuredClone(freshValues[key]);
      if (fresh.fileKeys.has(key)) fileKeys.add(key);
    }
    // Toggling debug switches the log level; turning it off returns to the level without --debug.
    if (next.debug !== previous.debug) next['log-level'] = next.debug ? 'debug' : startup.baseLogLevel;
    validateConfig(next);

    const config = next as unknown as DaemonConfig;
    const loaded: LoadedConfig = {
      config,
      flagKeys: new Set(current.flagKeys),
      fileKeys,
      warnings: collectWarnings(config, new Set([...current.flagKeys, ...fileKeys])),
      ...(current.minApiVersion ? { minApiVersion: current.minApiVersion } : {}),
    };
    rememberStartupState(loaded, startup);
    const changed = [...RELOADABLE, 'log-level'].filter((k) => !isDeepStrictEqual(previous[k], next[k]));
    return { ok: true, loaded, changed };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, error: err.message };
    throw err;
  }
}
