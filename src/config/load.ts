// Start-up entry point: turns argv and the environment into either a configuration to run with or
// an exit (--help, --version, --validate, or a configuration error with exit status 1).

import { parseArgs, type ParsedArgs } from './args.ts';
import { buildConfig } from './build.ts';
import { ConfigError } from './config-error.ts';
import { minApiVersionError } from '../util/api-version.ts';
import type { LoadedConfig } from './daemon-config.ts';
import { usageText } from './help.ts';

export type LoadOutcome = { kind: 'run'; loaded: LoadedConfig } | { kind: 'exit'; code: number; stdout?: string; stderr?: string };

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv, version: { version: string; commit: string }): LoadOutcome {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const hint = err.usage ? "\nSee 'engined --help'." : '';
    return { kind: 'exit', code: 1, stderr: `${err.message}${hint}\n` };
  }
  if (args.help) return { kind: 'exit', code: 0, stdout: usageText() };
  if (args.version) return { kind: 'exit', code: 0, stdout: `Engine version ${version.version}, build ${version.commit}\n` };

  let loaded: LoadedConfig;
  try {
    loaded = buildConfig(args, env).loaded;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { kind: 'exit', code: 1, stderr: `${err.message}\n` };
  }
  // As dockerd: DOCKER_MIN_API_VERSION raises the oldest API version served, within those spoken.
  const minApi = env.DOCKER_MIN_API_VERSION;
  if (minApi !== undefined && minApi !== '') {
    const why = minApiVersionError(minApi);
    if (why) return { kind: 'exit', code: 1, stderr: `invalid DOCKER_MIN_API_VERSION: ${why}\n` };
    loaded.minApiVersion = minApi;
  }
  if (args.validate) {
    const warnings = loaded.warnings.map((w) => `WARNING: ${w}\n`).join('');
    return { kind: 'exit', code: 0, stdout: 'configuration OK\n', ...(warnings ? { stderr: warnings } : {}) };
  }
  return { kind: 'run', loaded };
}
