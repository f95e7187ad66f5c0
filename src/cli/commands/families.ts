// The command families written as command-table entries (swarm, node, service, secret, config,
// stack, plugin, builder, commit/diff/export/import/update/search) for the command table: their
// top-level entries, and the subcommands they add to `engine container` and `engine image` (the
// table merges management commands of one name).
import type { CommandSpec } from '../command-spec.ts';
import { SPECS as BUILDER } from './builder.ts';
import { SPECS as NODE } from './cluster/node.ts';
import { SPECS as SECRETS } from './cluster/secrets.ts';
import { SPECS as SERVICE } from './cluster/service.ts';
import { SPECS as STACK } from './cluster/stack.ts';
import { SPECS as SWARM } from './cluster/swarm.ts';
import { SPECS as EXTRA, UNDER_MANAGEMENT } from './containers-extra.ts';
import { SPECS as PLUGINS } from './plugins.ts';

export const SPECS: CommandSpec[] = [
  ...SWARM,
  ...NODE,
  ...SERVICE,
  ...SECRETS,
  ...STACK,
  ...PLUGINS,
  ...BUILDER,
  ...EXTRA,
  ...UNDER_MANAGEMENT,
];
