// The command families written as command-table entries (swarm, node, service, secret, config,
// stack, plugin, builder, commit/diff/export/import/update/search), each module loaded when one of
// its commands runs, and a small dispatcher for them with the usage text of a management command
// and of `--help`, until main.ts runs every command from the one table.
import { HelpRequested } from '../args.ts';
import { ExitError, type Cli } from '../cli.ts';
import type { CommandSpec } from '../command-spec.ts';
type Family = { SPECS: CommandSpec[]; CONTAINER_SUBS?: CommandSpec[]; IMAGE_SUBS?: CommandSpec[] };
type Loader = () => Promise<Family>;

// Each family's module is loaded when one of its commands runs: `engine ps` does not run them.
const extra: Loader = () => import('./containers-extra.ts');
const secrets: Loader = () => import('./cluster/secrets.ts');
const TOP = new Map<string, Loader>([
  ['swarm', () => import('./cluster/swarm.ts')],
  ['node', () => import('./cluster/node.ts')],
  ['service', () => import('./cluster/service.ts')],
  ['secret', secrets],
  ['config', secrets],
  ['stack', () => import('./cluster/stack.ts')],
  ['plugin', () => import('./plugins.ts')],
  ['builder', () => import('./builder.ts')],
  ...['commit', 'diff', 'export', 'import', 'update', 'search'].map((n) => [n, extra] as [string, Loader]),
]);
/** Subcommands these families add to management commands main.ts already has. */
const SUBS = new Map<string, { names: string[]; pick: (f: Family) => CommandSpec[] | undefined }>([
  ['container', { names: ['commit', 'diff', 'export', 'update'], pick: (f) => f.CONTAINER_SUBS }],
  ['image', { names: ['import'], pick: (f) => f.IMAGE_SUBS }],
]);

/** The entry `engine <cmd> [<sub>]` names among these families (top: false for `container commit`), loaded on use. */
export async function findFamily(cmd: string, sub: string | undefined): Promise<{ spec: CommandSpec; top: boolean } | undefined> {
  const load = TOP.get(cmd);
  if (load) {
    const spec = findSpec((await load()).SPECS, cmd);
    return spec && { spec, top: true };
  }
  const subs = SUBS.get(cmd);
  if (!subs || sub === undefined || !subs.names.includes(sub)) return undefined;
  const spec = findSpec(subs.pick(await extra()) ?? [], sub);
  return spec && { spec, top: false };
}

/** Every family's entries (the command table's share of them), loading all the modules. */
export async function loadFamilySpecs(): Promise<{ top: CommandSpec[]; container: CommandSpec[]; image: CommandSpec[] }> {
  const mods = await Promise.all([...new Set(TOP.values())].map((l) => l()));
  const x = await extra();
  return { top: mods.flatMap((m) => m.SPECS), container: x.CONTAINER_SUBS ?? [], image: x.IMAGE_SUBS ?? [] };
}

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
