// `--help` text in the docker CLI's shape, read from the command table: the top-level list under
// docker's headings (Common, Management, Swarm, Commands), a management command's subcommands, a
// command's usage line, description, aliases and options (pflag's columns), and the words of an
// unknown command.
import type { CommandGroup, CommandSpec, FlagHelp } from './command-spec.ts';
import { byteOrder } from './output.ts';
import { GLOBAL_FLAGS, walk } from './table.ts';

const HEADINGS: [CommandGroup, string][] = [
  ['common', 'Common Commands'],
  ['management', 'Management Commands'],
  ['swarm', 'Swarm Commands'],
  ['other', 'Commands'],
];

/** docker's order of its common commands (the other headings are alphabetical). */
const COMMON_ORDER = ['run', 'exec', 'ps', 'build', 'pull', 'push', 'images', 'login', 'logout', 'search', 'version', 'info'];

/** Names padded as cobra pads them: to the longest name, at least 11, then a space. */
function commandLines(specs: readonly CommandSpec[]): string {
  const shown = specs.filter((s) => !s.hidden);
  const pad = Math.max(11, ...shown.map((s) => s.name.length));
  return shown.map((s) => `  ${s.name.padEnd(pad)} ${s.description}\n`).join('');
}

/** A flag's left column: `  -a, --all`, `      --format string`. */
function flagColumn(f: FlagHelp): string {
  const type = f.kind === 'bool' ? '' : f.name === 'filter' ? ' filter' : ` ${f.kind}`;
  return `${f.short ? `  -${f.short}, ` : '      '}--${f.name}${type}`;
}

/** pflag's option lines: descriptions start 3 columns after the longest left column. */
export function optionLines(flags: readonly FlagHelp[]): string {
  const shown = flags.filter((f) => f.name !== 'help' && !f.hidden);
  const width = Math.max(0, ...shown.map((f) => flagColumn(f).length)) + 3;
  return [...shown]
    .sort((a, b) => byteOrder(a.name, b.name))
    .map((f) => `${flagColumn(f).padEnd(width)}${f.description ?? ''}`.trimEnd() + '\n')
    .join('');
}

/** `engine --help`. */
export function topHelp(table: readonly CommandSpec[]): string {
  const sections = HEADINGS.flatMap(([group, title]) => {
    const specs = table.filter((s) => (s.group ?? 'other') === group);
    if (!specs.length) return [];
    const order = (s: CommandSpec) => (group === 'common' ? COMMON_ORDER.indexOf(s.name) >>> 0 : 0);
    specs.sort((a, b) => order(a) - order(b) || byteOrder(a.name, b.name));
    return [`${title}:\n${commandLines(specs)}`];
  });
  return [
    'Usage:  engine [OPTIONS] COMMAND\n',
    'A self-sufficient runtime for containers\n',
    ...sections,
    `Global Options:\n${optionLines(GLOBAL_FLAGS)}`,
    "Run 'engine COMMAND --help' for more information on a command.\n",
  ].join('\n');
}

/** Every path at which the same command runs (`container ls`, `container ps`, `ps` …), as docker lists aliases. */
function aliasesOf(table: readonly CommandSpec[], path: readonly string[], spec: CommandSpec): string[] {
  if (!spec.run) return [];
  const names: string[] = [];
  // docker's order: the management paths first, the top-level name last.
  const paths = walk(table).sort((a, b) => (a.path.length === 1 ? 1 : 0) - (b.path.length === 1 ? 1 : 0));
  for (const e of paths) {
    if (e.spec.run !== spec.run) continue;
    const parent = e.path.slice(0, -1).join(' ');
    for (const n of [e.spec.name, ...(e.spec.aliases ?? [])]) names.push(['engine', parent, n].filter(Boolean).join(' '));
  }
  const own = `engine ${path.join(' ')}`;
  return names.length > 1 || names[0] !== own ? names : [];
}

/** `engine <path> --help`: a management command's list, or a command's usage and options. */
export function commandHelp(table: readonly CommandSpec[], path: readonly string[], spec: CommandSpec): string {
  const name = `engine ${path.join(' ')}`;
  if (spec.subcommands) {
    const subs = [...spec.subcommands].sort((a, b) => byteOrder(a.name, b.name));
    return [
      `Usage:  ${name} COMMAND\n`,
      `${spec.description}\n`,
      `Commands:\n${commandLines(subs)}`,
      `Run '${name} COMMAND --help' for more information on a command.\n`,
    ].join('\n');
  }
  const flags = spec.flags ?? [];
  const usage = spec.usage ?? (flags.length ? '[OPTIONS]' : '');
  const aliases = aliasesOf(table, path, spec);
  return [
    `Usage:  ${name}${usage ? ` ${usage}` : ''}\n`,
    `${spec.description}\n`,
    ...(aliases.length ? [`Aliases:\n  ${aliases.join(', ')}\n`] : []),
    ...(flags.some((f) => f.name !== 'help') ? [`Options:\n${optionLines(flags)}`] : []),
  ].join('\n');
}

/** docker's words for a name that is not a command (stderr, exit status 1). */
export function unknownCommand(path: readonly string[], name: string): string {
  const parent = ['engine', ...path].join(' ');
  return path.length
    ? `engine: unknown command: ${parent} ${name}\n\nUsage:  ${parent}\n\nRun '${parent} --help' for more information\n`
    : `engine: unknown command: engine ${name}\n\nRun 'engine --help' for more information\n`;
}

/** docker 28's words for a refused flag or a wrong number of arguments: the message, the usage line, the hint. */
export function usageError(message: string, path: readonly string[], spec: CommandSpec | undefined): string {
  const name = ['engine', ...path].join(' ');
  const usage = !spec
    ? '[OPTIONS] COMMAND [ARG...]'
    : spec.subcommands
      ? 'COMMAND'
      : (spec.usage ?? (spec.flags?.length ? '[OPTIONS]' : ''));
  return `${message}\n\nUsage:  ${name}${usage ? ` ${usage}` : ''}\n\nRun '${name} --help' for more information\n`;
}
