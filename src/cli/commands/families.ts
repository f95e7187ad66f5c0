// The command families written as command-table entries (swarm, node, service, secret, config,
// stack, plugin, builder, commit/diff/export/import/update/search) and a small dispatcher for them,
// with the usage text of a management command and of `--help`, until main.ts runs every command
// from the one table.
import { HelpRequested } from '../args.ts';
import { ExitError, type Cli } from '../cli.ts';
import type { CommandSpec } from '../command-spec.ts';
import { SPECS as BUILDER } from './builder.ts';
import { SPECS as EXTRA, CONTAINER_SUBS, IMAGE_SUBS } from './containers-extra.ts';
import { SPECS as NODE } from './cluster/node.ts';
import { SPECS as PLUGINS } from './plugins.ts';
import { SPECS as SECRETS } from './cluster/secrets.ts';
import { SPECS as SERVICE } from './cluster/service.ts';
import { SPECS as STACK } from './cluster/stack.ts';
import { SPECS as SWARM } from './cluster/swarm.ts';

export const FAMILY_SPECS: readonly CommandSpec[] = [...SWARM, ...NODE, ...SERVICE, ...SECRETS, ...STACK, ...PLUGINS, ...BUILDER, ...EXTRA];

/** Subcommands these families add to management commands main.ts already has. */
export const EXTRA_SUBCOMMANDS: Readonly<Record<string, readonly CommandSpec[]>> = { container: CONTAINER_SUBS, image: IMAGE_SUBS };

export function findSpec(specs: readonly CommandSpec[], name: string | undefined): CommandSpec | undefined {
  return name === undefined ? undefined : specs.find((s) => s.name === name || s.aliases?.includes(name));
}

/** Usage text of an entry: its usage line, description, subcommands or flags. */
export function helpText(path: string, s: CommandSpec): string {
  const lines = [`Usage:  engine ${path} ${s.subcommands ? 'COMMAND' : (s.usage ?? '')}`.trimEnd(), '', s.description, ''];
  if (s.aliases?.length)
    lines.push('Aliases:', `  ${[s.name, ...s.aliases].map((a) => `engine ${path.replace(/\S+$/, a)}`).join(', ')}`, '');
  if (s.subcommands) {
    const w = Math.max(...s.subcommands.map((c) => c.name.length)) + 2;
    lines.push('Commands:', ...s.subcommands.map((c) => `  ${c.name.padEnd(Math.max(w, 12))}${c.description}`), '');
    lines.push(`Run 'engine ${path} COMMAND --help' for more information on a command.`, '');
  } else if (s.flags?.length) {
    const cells = s.flags.map((f) => {
      const type = f.kind === 'bool' ? '' : f.kind === 'int' ? ' int' : f.kind === 'list' ? ' list' : ' string';
      return [`${f.short ? `-${f.short}, ` : '    '}--${f.name}${type}`, f.description ?? ''];
    });
    const w = Math.max(...cells.map((c) => c[0]!.length)) + 3;
    lines.push('Options:', ...cells.map(([a, b]) => `  ${a!.padEnd(w)}${b}`.trimEnd()), '');
  }
  return lines.join('\n');
}

/** Runs `engine <spec.name> argv`: a leaf's run, or the subcommand argv[0] names. */
export async function runSpec(cli: Cli, spec: CommandSpec, argv: string[], path = spec.name): Promise<number> {
  if (spec.subcommands) {
    const [sub, ...rest] = argv;
    if (sub === undefined || sub === '--help' || sub === '-h') {
      cli.out(helpText(path, spec));
      return 0;
    }
    const child = findSpec(spec.subcommands, sub);
    if (!child)
      throw new ExitError(1, `engine: unknown command: engine ${path} ${sub}\n\nRun 'engine ${path} --help' for more information`);
    return runSpec(cli, child, rest, `${path} ${child.name}`);
  }
  try {
    return await spec.run!(cli, argv);
  } catch (e) {
    // Reported under the whole path: `engine secret create` is not `create` (whose errors exit 125).
    if (!(e instanceof HelpRequested)) return cli.report(e, path, path);
    cli.out(helpText(path, spec));
    return 0;
  }
}
