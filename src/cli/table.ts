// The `engine` command table: the CommandSpec lists every commands file exports (SPECS), assembled
// into one list, and the lookups dispatch, help and completion share. A family adds itself with
// one import and one spread in command-table.ts and a line in command-index.ts; two files may both
// contribute subcommands to one management command (`container`), which are merged here.
import type { CommandSpec, FlagHelp } from './command-spec.ts';

/** The options before the command (`engine -H tcp://… ps`), as docker's. */
export const GLOBAL_FLAGS: readonly FlagHelp[] = [
  { name: 'config', kind: 'string', description: 'Location of client config files (default "~/.engine")' },
  {
    name: 'context',
    short: 'c',
    kind: 'string',
    description:
      'Name of the context to use to connect to the daemon (overrides ENGINE_HOST env var and default context set with "engine context use")',
  },
  { name: 'debug', short: 'D', kind: 'bool', description: 'Enable debug mode' },
  { name: 'host', short: 'H', kind: 'list', description: 'Daemon socket to connect to' },
  {
    name: 'log-level',
    short: 'l',
    kind: 'string',
    description: 'Set the logging level ("debug", "info", "warn", "error", "fatal") (default "info")',
  },
  { name: 'tls', kind: 'bool', description: 'Use TLS; implied by --tlsverify' },
  { name: 'tlscacert', kind: 'string', description: 'Trust certs signed only by this CA (default "~/.engine/ca.pem")' },
  { name: 'tlscert', kind: 'string', description: 'Path to TLS certificate file (default "~/.engine/cert.pem")' },
  { name: 'tlskey', kind: 'string', description: 'Path to TLS key file (default "~/.engine/key.pem")' },
  { name: 'tlsverify', kind: 'bool', description: 'Use TLS and verify the remote' },
  { name: 'version', short: 'v', kind: 'bool', description: 'Print version information and quit' },
  { name: 'help', kind: 'bool', description: 'Print usage' },
];

/** The lists of several files as one table: management commands of the same name merged. */
export function assemble(...lists: readonly (readonly CommandSpec[])[]): CommandSpec[] {
  const out: CommandSpec[] = [];
  for (const spec of lists.flat()) {
    const i = out.findIndex((s) => s.name === spec.name);
    if (i < 0) {
      out.push(spec);
      continue;
    }
    const had = out[i]!;
    if (!had.subcommands || !spec.subcommands) throw new Error(`engine command table: "${spec.name}" is defined twice`);
    out[i] = { ...had, subcommands: merge(had.subcommands, spec.subcommands, spec.name) };
  }
  return out;
}

function merge(a: readonly CommandSpec[], b: readonly CommandSpec[], parent: string): CommandSpec[] {
  for (const s of b) if (a.some((x) => x.name === s.name)) throw new Error(`engine command table: "${parent} ${s.name}" is defined twice`);
  return [...a, ...b];
}

/** The entry a name (or alias) selects among `list`. */
export function findCommand(list: readonly CommandSpec[], name: string): CommandSpec | undefined {
  return list.find((s) => s.name === name) ?? list.find((s) => s.aliases?.includes(name));
}

/** Every entry with its full path (`['container', 'ls']`), depth first. */
export function walk(list: readonly CommandSpec[], prefix: string[] = []): { path: string[]; spec: CommandSpec }[] {
  return list.flatMap((spec) => [{ path: [...prefix, spec.name], spec }, ...walk(spec.subcommands ?? [], [...prefix, spec.name])]);
}

/** The entry at a path of names (aliases allowed). */
export function lookup(table: readonly CommandSpec[], path: readonly string[]): CommandSpec | undefined {
  let list = table;
  let spec: CommandSpec | undefined;
  for (const name of path) {
    spec = findCommand(list, name);
    if (!spec) return undefined;
    list = spec.subcommands ?? [];
  }
  return spec;
}
