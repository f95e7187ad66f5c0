// Rootless mode's defaults (as dockerd's in rootless mode, with neutral names): data under
// $XDG_DATA_HOME/engine, runtime state, pidfile and socket under $XDG_RUNTIME_DIR, the
// configuration file under $XDG_CONFIG_HOME/engine. Rootless is on with --rootless or when the
// daemon runs inside rootlesskit (ROOTLESSKIT_STATE_DIR set, dockerd's detection).
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config-error.ts';

/** Whether the daemon is started in rootless mode (the flag, or rootlesskit's environment). */
export function rootlessRequested(flag: unknown, env: NodeJS.ProcessEnv): boolean {
  return flag === true || (flag === undefined && !!env.ROOTLESSKIT_STATE_DIR);
}

function runtimeDir(env: NodeJS.ProcessEnv): string {
  const dir = env.XDG_RUNTIME_DIR;
  if (!dir) throw new ConfigError('rootless mode needs XDG_RUNTIME_DIR to be set (bin/engined-rootless sets it when it is missing)');
  return dir;
}

/** The rootless default configuration file. */
export function rootlessConfigFile(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'engine', 'daemon.json');
}

/** Defaults that replace the table's for what neither the command line nor the file set. */
export function rootlessDefaults(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const run = runtimeDir(env);
  return {
    'data-root': join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share'), 'engine'),
    'exec-root': join(run, 'engine'),
    pidfile: join(run, 'engine.pid'),
    hosts: [`unix://${join(run, 'engine.sock')}`],
    rootless: true,
  };
}
