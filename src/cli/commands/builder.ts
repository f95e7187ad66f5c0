// engine builder prune: the build cache pruned (dangling entries, or all with --all), after the
// docker CLI's confirmation unless --force, then the deleted entries and the space reclaimed.
import { filtersOf } from '../args.ts';
import type { Cli } from '../cli.ts';
import type { CommandSpec } from '../command-spec.ts';
import { humanSize } from '../output.ts';
import { parseBytes } from '../run-options.ts';
import { confirm } from './family-output.ts';
import { BUILDER_TEXT as T } from './family-text.ts';
import { leaf, management, parseFor } from './spec-text.ts';

async function prune(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('builder prune', T.prune, argv, { max: 0 });
  const all = f.bool('all');
  if (!f.bool('force')) {
    const warning = all
      ? 'WARNING! This will remove all build cache. Are you sure you want to continue?'
      : 'WARNING! This will remove all dangling build cache. Are you sure you want to continue?';
    // Declined: nothing done, exit 0, as the docker CLI's cancelled prune.
    if (!(await confirm(cli, warning))) return 0;
  }
  const keep = f.str('keep-storage');
  const r = await cli.api.buildPrune({ all, filters: filtersOf(f.list('filter')), keepStorage: keep ? parseBytes(keep) : undefined });
  if (r.CachesDeleted?.length) cli.out(`Deleted build cache objects:\n${r.CachesDeleted.join('\n')}\n\n`);
  cli.out(`Total reclaimed space: ${humanSize(r.SpaceReclaimed ?? 0)}\n`);
  return 0;
}

export const SPECS: CommandSpec[] = [management('builder', 'management', 'Manage builds', [leaf('prune', T.prune, prune)])];
