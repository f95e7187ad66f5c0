// The dispatch of `engine`, the command-line client: global options (-H/--host, --tls, --tlsverify,
// --tlscacert/--tlscert/--tlskey, --config, -c/--context, -v), then a command of the command table
// (command-table.ts), also under its management-command name (engine container ls = engine ps).
// A command line runs from its own commands file alone (command-index.ts: `engine ps` evaluates no
// cluster, build or compose code); `--help` anywhere a command is expected, `engine help …`, a
// management command alone, completion and unknown words read the full table (help.ts). Commands
// return the exit status; errors are printed and mapped by Cli.report. engine.ts runs main (both
// the Node bundle and the compiled executable).
import { ArgCountError, FlagError, flagsOf, HelpRequested, UsageError } from './args.ts';
import { Cli } from './cli.ts';
import { familyOf } from './command-index.ts';
import type { CommandSpec } from './command-spec.ts';
import { commandHelp, topHelp, unknownCommand, usageError } from './help.ts';
import { findCommand, GLOBAL_FLAGS } from './table.ts';
import * as contexts from './contexts.ts';
import { ENGINE_VERSION } from '../version.ts';
import { writeErr, writeOut } from './out.ts';

/** Every command family, imported on use. */
const fullTable = (): Promise<readonly CommandSpec[]> => import('./command-table.ts').then((m) => m.TABLE);

/** Where a command line leads: the entry, its path of names, and the words left for it. */
type Resolved =
  | { kind: 'run'; spec: CommandSpec; path: string[]; rest: string[] }
  | { kind: 'help'; spec: CommandSpec; path: string[] }
  | { kind: 'unknown'; path: string[]; name: string };

export function resolve(table: readonly CommandSpec[], words: readonly string[], forHelp = false): Resolved {
  let list = table;
  const path: string[] = [];
  let i = 0;
  for (;;) {
    const name = words[i++]!;
    const spec = findCommand(list, name);
    if (!spec) return { kind: 'unknown', path, name };
    path.push(spec.name);
    const next = words[i];
    if (!spec.subcommands) return forHelp ? { kind: 'help', spec, path } : { kind: 'run', spec, path, rest: words.slice(i) };
    if (next === undefined || next === '--help' || next === '-h') return { kind: 'help', spec, path };
    list = spec.subcommands;
  }
}

/** The command line resolved in its own file's entries when the index places it, else in the full table. */
async function resolveLazily(words: readonly string[], forHelp: boolean): Promise<Resolved> {
  const family = forHelp ? undefined : familyOf(words);
  if (family) {
    const r = resolve(await family(), words);
    if (r.kind === 'run') return r;
  }
  return resolve(await fullTable(), words, forHelp);
}

export async function main(argv: string[]): Promise<number> {
  let cli: Cli | undefined;
  let name = '';
  try {
    let g: ReturnType<typeof flagsOf>;
    try {
      g = flagsOf('', argv, GLOBAL_FLAGS, { interspersed: false });
    } catch (e) {
      if (!(e instanceof FlagError)) throw e;
      writeErr(usageError(e.message, [], undefined));
      return 125;
    }
    if (g.bool('version')) {
      writeOut(`Engine version ${ENGINE_VERSION}\n`);
      return 0;
    }
    const words = g.args;
    const helpOnly = g.bool('help') || words[0] === 'help';
    const target = words[0] === 'help' ? words.slice(1) : words;
    if (!target.length) {
      writeOut(topHelp(await fullTable()));
      return 0;
    }
    const r = await resolveLazily(target, helpOnly);
    if (r.kind === 'unknown') {
      writeErr(helpOnly && words[0] === 'help' ? `unknown help topic: ${target.join(' ')}\n` : unknownCommand(r.path, r.name));
      return 1;
    }
    if (r.kind === 'help') {
      writeOut(commandHelp(await fullTable(), r.path, r.spec));
      return 0;
    }
    name = r.path.join(' ');
    cli = makeCli(g);
    try {
      return await r.spec.run!(cli, r.rest);
    } catch (e) {
      if (e instanceof FlagError || e instanceof ArgCountError) {
        cli.err(usageError(e.message, r.path, r.spec));
        return e instanceof FlagError ? 125 : 1;
      }
      if (!(e instanceof HelpRequested)) throw e;
      cli.out(commandHelp(await fullTable(), r.path, r.spec));
      return 0;
    }
  } catch (e) {
    cli ??= new Cli({}, undefined);
    // run/create's statuses (125) are the container commands' only: `secret create` fails with 1.
    const words = name.split(' ');
    return cli.report(e, words.length === 1 || words[0] === 'container' ? words.at(-1)! : name, name);
  } finally {
    cli?.close();
  }
}

/** The client settings from the global options, then the context in force (contexts.ts). */
function makeCli(g: ReturnType<typeof flagsOf>): Cli {
  const hosts = g.list('host');
  if (hosts.length > 1) throw new UsageError('Specify only one -H');
  const flagSettings = {
    host: hosts[0],
    tls: g.bool('tls') || undefined,
    tlsVerify: g.bool('tlsverify') || undefined,
    tlsCaCert: g.str('tlscacert'),
    tlsCert: g.str('tlscert'),
    tlsKey: g.str('tlskey'),
  };
  let cli = new Cli(flagSettings, g.str('config'));
  const first = cli;
  const ctx = contexts.resolveContext(g.str('context'), hosts.length > 0, process.env, () => first.config);
  if (ctx.settings) cli = new Cli({ ...ctx.settings }, g.str('config'));
  cli.contextName = ctx.name;
  return cli;
}
