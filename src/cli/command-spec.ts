// The shape of one entry of the `engine` command table: what `--help` prints (grouped as the docker
// CLI groups its commands), what `engine completion bash|zsh` completes, and what runs. Each file of
// commands/ exports its entries; command-table.ts assembles them into the one table.
import type { FlagSpec } from './args.ts';
import type { Command } from './cli.ts';

/** The headings of `engine --help`, in the docker CLI's order. */
export type CommandGroup = 'common' | 'management' | 'swarm' | 'other';

export interface CommandSpec {
  /** The command's name as typed: `run`, `service`, `ls`. */
  name: string;
  /** Other names (`list` for `ls`, `remove` for `rm`). */
  aliases?: string[];
  /** Top-level entries only: the `--help` heading it is listed under. */
  group?: CommandGroup;
  /** One line, as the docker CLI describes the command. */
  description: string;
  /** What follows `engine <path>` in the usage line: `[OPTIONS] IMAGE [COMMAND] [ARG...]`. */
  usage?: string;
  /** Its flags, with one-line descriptions where given (help and completion read them). */
  flags?: readonly FlagHelp[];
  /** A leaf command: what runs. */
  run?: Command;
  /** A management command: its subcommands. */
  subcommands?: readonly CommandSpec[];
  /** Runs and completes, but is left out of `--help` lists (docker hides `system dial-stdio`). */
  hidden?: boolean;
}

/** A flag of the table: the parser's spec with its one-line description; hidden: parsed, not listed. */
export type FlagHelp = FlagSpec & { description?: string; hidden?: boolean };
