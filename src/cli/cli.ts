// What every command gets: the SDK client (made on first use from -H/--tls* or ENGINE_*), the
// config directory, the output streams, and the error → exit status rule: a usage error exits
// 125 for run/create and 1 elsewhere as in docker; a daemon error prints "Error response from
// daemon: …"; an unreachable daemon prints the "Cannot connect" line.
import { EngineClient } from '../client/client.ts';
import { ConnectionError, EngineError } from '../client/errors.ts';
import { defaultConfigDir, type SettingsInput } from '../client/host.ts';
import { ExitError, HelpRequested, UsageError } from './args.ts';
import { CliConfig } from './config.ts';
import { stdoutColumns, stdoutIsTty, writeErr, writeOut } from './out.ts';
import type { Fit } from './output.ts';

export type Command = (cli: Cli, argv: string[]) => Promise<number>;

export { ExitError };

export class Cli {
  private client?: EngineClient;
  private cfg?: CliConfig;
  readonly configDir: string;
  /** The context in force (contexts.ts), set by main once resolved. */
  contextName = 'default';
  constructor(
    readonly settings: SettingsInput,
    configDir: string | undefined,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.configDir = configDir ?? defaultConfigDir(env);
  }
  get api(): EngineClient {
    this.client ??= new EngineClient({ ...this.settings, env: this.env });
    return this.client;
  }
  get config(): CliConfig {
    this.cfg ??= new CliConfig(this.configDir);
    return this.cfg;
  }
  out(s: string): void {
    writeOut(s);
  }
  err(s: string): void {
    writeErr(s);
  }
  get stdoutTty(): boolean {
    return stdoutIsTty();
  }
  /** How a list table is fitted: to the terminal's width on a TTY; never with --no-trunc or when piped. */
  tableFit(noTrunc: boolean): Fit | undefined {
    const cols = stdoutColumns();
    return !noTrunc && cols > 0 ? { width: cols } : undefined;
  }
  close(): void {
    this.client?.close();
  }

  /** Prints an error the docker way and returns the exit status. */
  report(e: unknown, cmd: string, fullName = cmd): number {
    if (e instanceof ExitError) {
      if (e.message) this.err(`${e.message}\n`);
      return e.status;
    }
    if (e instanceof HelpRequested) {
      this.out(e.usage(fullName));
      return 0;
    }
    if (e instanceof UsageError) {
      this.err(`${e.message.startsWith('"engine') ? e.message : `${e.message}`}\nSee 'engine ${fullName} --help'.\n`);
      return cmd === 'run' || cmd === 'create' ? 125 : 1;
    }
    if (e instanceof EngineError) {
      this.err(`Error response from daemon: ${e.message}\n`);
      return cmd === 'run' || cmd === 'create' ? 125 : 1;
    }
    if (e instanceof ConnectionError) {
      this.err(`${e.message}\n`);
      return cmd === 'run' || cmd === 'create' ? 125 : 1;
    }
    this.err(`${(e as Error)?.message ?? String(e)}\n`);
    return 1;
  }
}

/** Runs fn over each name (rm, stop, kill …): prints each name done, errors to stderr; 1 if any failed. */
export async function eachName(cli: Cli, names: string[], fn: (name: string) => Promise<string | void>): Promise<number> {
  let failed = false;
  for (const name of names) {
    try {
      const shown = await fn(name);
      cli.out(`${shown ?? name}\n`);
    } catch (e) {
      failed = true;
      if (e instanceof EngineError) cli.err(`Error response from daemon: ${e.message}\n`);
      else cli.err(`${(e as Error).message}\n`);
    }
  }
  return failed ? 1 : 0;
}
