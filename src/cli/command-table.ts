// The whole `engine` command table: one spread of `SPECS` per commands file, assembled (table.ts).
// Help, completion and any command line the index (command-index.ts) does not place read it;
// importing it evaluates every command family, so a command that runs imports only its own file.
import type { CommandSpec } from './command-spec.ts';
import { completionSpec } from './completion.ts';
import { assemble } from './table.ts';
import * as containers from './commands/containers.ts';
import * as families from './commands/families.ts';
import * as images from './commands/images.ts';
import * as management from './commands/management.ts';
import * as resources from './commands/resources.ts';
import * as run from './commands/run.ts';
import * as system from './commands/system.ts';
import * as contexts from './contexts.ts';

/** The command table: one spread per commands file (each exports `SPECS`). */
export const TABLE: readonly CommandSpec[] = assemble(
  run.SPECS,
  containers.SPECS,
  images.SPECS,
  system.SPECS,
  resources.SPECS,
  contexts.SPECS,
  management.SPECS,
  families.SPECS,
  [completionSpec(() => TABLE)],
);
