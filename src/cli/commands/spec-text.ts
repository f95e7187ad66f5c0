// The text of a command as the docker CLI shows it (usage line, one-line description, aliases,
// flags with descriptions), kept apart from the code in the *-text.ts tables, and the helpers that
// turn a text and a run function into a command-table entry.
import { flagsOf, type FlagSpec, type Flags } from '../args.ts';
import type { Command } from '../cli.ts';
import type { CommandGroup, CommandSpec } from '../command-spec.ts';

export type TextFlag = FlagSpec & { description: string };

/** The flags of the cluster families' inspect (service, node, secret, config): a template or --pretty. */
export const PRETTY_INSPECT_FLAGS: readonly TextFlag[] = [
  { name: 'format', short: 'f', kind: 'string', description: 'Format output using a custom template' },
  { name: 'pretty', kind: 'bool', description: 'Print the information in a human friendly format' },
];

export interface SpecText {
  usage: string;
  description: string;
  aliases?: string[];
  flags: readonly TextFlag[];
}

/** A leaf entry: `name` with its docker text and what runs. */
export function leaf(name: string, t: SpecText, run: Command): CommandSpec {
  return { name, aliases: t.aliases, description: t.description, usage: t.usage, flags: t.flags, run };
}

/** A management entry (`engine service`): its subcommands. */
export function management(name: string, group: CommandGroup, description: string, subcommands: CommandSpec[]): CommandSpec {
  return { name, group, description, usage: 'COMMAND', subcommands };
}

/** Parses argv against a text's flags, with positional counts checked in docker's words. */
export function parseFor(
  path: string,
  t: SpecText,
  argv: string[],
  opts: { min?: number; max?: number; interspersed?: boolean } = {},
): Flags {
  return flagsOf(path, argv, [...t.flags] as FlagSpec[], opts);
}
