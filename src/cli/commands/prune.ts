// engine system df and the prune commands (system prune, container prune, image prune), with
// docker's summaries: what was deleted and the total space reclaimed.
import { filtersOf, flagsOf } from '../args.ts';
import type { Cli } from '../cli.ts';
import type { CommandSpec, FlagHelp } from '../command-spec.ts';
import { humanSize, printFormatted } from '../output.ts';
import { confirm } from './family-output.ts';
import { dfVerbose } from './disk-usage.ts';
import { DISK_USAGE_ROWS } from '../go-types.ts';

const PRUNE_FLAGS: FlagHelp[] = [
  { name: 'force', short: 'f', kind: 'bool', description: 'Do not prompt for confirmation' },
  { name: 'all', short: 'a', kind: 'bool', description: 'Remove all unused objects, not just dangling ones' },
  { name: 'volumes', kind: 'bool', description: 'Prune anonymous volumes' },
  { name: 'filter', kind: 'list', description: "Provide filter values (e.g. 'until=<timestamp>')" },
];

const SYSTEM_DF_FLAGS: FlagHelp[] = [
  { name: 'verbose', short: 'v', kind: 'bool', description: 'Show detailed information on space usage' },
  { name: 'format', kind: 'string', description: 'Pretty-print images using a Go template' },
];

export async function df(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('system df', argv, SYSTEM_DF_FLAGS, { max: 0 });
  if (f.bool('verbose')) return dfVerbose(cli, f.str('format'));
  const d = await cli.api.df();
  const sum = (xs: Record<string, unknown>[] | undefined, key: string) =>
    (xs ?? []).reduce((a, x) => a + Math.max(0, Number(x[key] ?? 0)), 0);
  const images = d.Images ?? [];
  const containers = d.Containers ?? [];
  const volumes = d.Volumes ?? [];
  const cache = d.BuildCache ?? [];
  const imgSize = d.LayersSize ?? sum(images, 'Size');
  const activeImgs = images.filter((i) => Number(i.Containers ?? 0) > 0);
  const ctrSize = sum(containers, 'SizeRw');
  const running = containers.filter((c) => c.State === 'running');
  const volSize = volumes.reduce((a, v) => a + Math.max(0, Number((v.UsageData as { Size?: number } | undefined)?.Size ?? 0)), 0);
  const activeVols = volumes.filter((v) => Number((v.UsageData as { RefCount?: number } | undefined)?.RefCount ?? 0) > 0);
  const pct = (part: number, total: number) => (total > 0 ? ` (${Math.round((part * 100) / total)}%)` : '');
  const reclaimImg = imgSize - sum(activeImgs, 'Size');
  const rows = [
    {
      Type: 'Images',
      TotalCount: String(images.length),
      Active: String(activeImgs.length),
      Size: humanSize(imgSize),
      Reclaimable: `${humanSize(Math.max(0, reclaimImg))}${pct(reclaimImg, imgSize)}`,
    },
    {
      Type: 'Containers',
      TotalCount: String(containers.length),
      Active: String(running.length),
      Size: humanSize(ctrSize),
      Reclaimable: `${humanSize(ctrSize - sum(running, 'SizeRw'))}${pct(ctrSize - sum(running, 'SizeRw'), ctrSize)}`,
    },
    {
      Type: 'Local Volumes',
      TotalCount: String(volumes.length),
      Active: String(activeVols.length),
      Size: humanSize(volSize),
      Reclaimable: `${humanSize(volSize - activeVols.reduce((a, v) => a + Number((v.UsageData as { Size?: number }).Size ?? 0), 0))}`,
    },
    {
      Type: 'Build Cache',
      TotalCount: String(cache.length),
      Active: String(cache.filter((c) => c.InUse).length),
      Size: humanSize(sum(cache, 'Size')),
      Reclaimable: humanSize(
        sum(
          cache.filter((c) => !c.InUse),
          'Size',
        ),
      ),
    },
  ];
  printFormatted(
    rows,
    f.str('format') ?? 'table {{.Type}}\t{{.TotalCount}}\t{{.Active}}\t{{.Size}}\t{{.Reclaimable}}',
    { Type: 'TYPE', TotalCount: 'TOTAL', Active: 'ACTIVE', Size: 'SIZE', Reclaimable: 'RECLAIMABLE' },
    (s) => cli.out(s),
    undefined,
    { type: (row) => DISK_USAGE_ROWS[(row as { Type: string }).Type] },
  );
  return 0;
}

export async function containerPrune(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('container prune', argv, PRUNE_FLAGS, { max: 0 });
  // Declined: nothing done, exit 0, as the docker CLI's cancelled prune.
  if (!f.bool('force') && !(await confirm(cli, 'WARNING! This will remove all stopped containers.\nAre you sure you want to continue?')))
    return 0;
  const r = await cli.api.containers.prune({ filters: filtersOf(f.list('filter')) });
  if (r.ContainersDeleted?.length) cli.out(`Deleted Containers:\n${r.ContainersDeleted.join('\n')}\n\n`);
  cli.out(`Total reclaimed space: ${humanSize(r.SpaceReclaimed ?? 0)}\n`);
  return 0;
}

export async function imagePrune(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('image prune', argv, PRUNE_FLAGS, { max: 0 });
  const what = f.bool('all') ? 'all images without at least one container associated to them' : 'all dangling images';
  if (!f.bool('force') && !(await confirm(cli, `WARNING! This will remove ${what}.\nAre you sure you want to continue?`))) return 0;
  const filters = filtersOf(f.list('filter')) ?? {};
  filters.dangling = [f.bool('all') ? 'false' : 'true'];
  const r = await cli.api.images.prune({ filters });
  const lines = (r.ImagesDeleted ?? []).map((d) => (d.Untagged ? `untagged: ${d.Untagged}` : `deleted: ${d.Deleted}`));
  if (lines.length) cli.out(`Deleted Images:\n${lines.join('\n')}\n\n`);
  cli.out(`Total reclaimed space: ${humanSize(r.SpaceReclaimed ?? 0)}\n`);
  return 0;
}

export async function systemPrune(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('system prune', argv, PRUNE_FLAGS, { max: 0 });
  const items = [
    'all stopped containers',
    'all networks not used by at least one container',
    ...(f.bool('volumes') ? ['all anonymous volumes not used by at least one container'] : []),
    f.bool('all') ? 'all images without at least one container associated to them' : 'all dangling images',
    f.bool('all') ? 'all build cache' : 'unused build cache',
  ];
  const warning = `WARNING! This will remove:\n${items.map((i) => `  - ${i}\n`).join('')}\nAre you sure you want to continue?`;
  if (!f.bool('force') && !(await confirm(cli, warning))) return 0;
  const filters = filtersOf(f.list('filter'));
  let total = 0;
  const c = await cli.api.containers.prune({ filters });
  total += c.SpaceReclaimed ?? 0;
  if (c.ContainersDeleted?.length) cli.out(`Deleted Containers:\n${c.ContainersDeleted.join('\n')}\n\n`);
  const n = await cli.api.networks.prune({ filters });
  if (n.NetworksDeleted?.length) cli.out(`Deleted Networks:\n${n.NetworksDeleted.join('\n')}\n\n`);
  if (f.bool('volumes')) {
    const v = await cli.api.volumes.prune({ filters });
    total += v.SpaceReclaimed ?? 0;
    if (v.VolumesDeleted?.length) cli.out(`Deleted Volumes:\n${v.VolumesDeleted.join('\n')}\n\n`);
  }
  const i = await cli.api.images.prune({ filters: { ...filters, dangling: [f.bool('all') ? 'false' : 'true'] } });
  total += i.SpaceReclaimed ?? 0;
  const lines = (i.ImagesDeleted ?? []).map((d) => (d.Untagged ? `untagged: ${d.Untagged}` : `deleted: ${d.Deleted}`));
  if (lines.length) cli.out(`Deleted Images:\n${lines.join('\n')}\n\n`);
  const b = await cli.api.buildPrune({ all: f.bool('all'), filters }).catch(() => ({ SpaceReclaimed: 0, CachesDeleted: null }));
  total += b.SpaceReclaimed ?? 0;
  cli.out(`Total reclaimed space: ${humanSize(total)}\n`);
  return 0;
}

export const DF: CommandSpec = { name: 'df', description: 'Show engine disk usage', flags: SYSTEM_DF_FLAGS, run: df };
const prune = (description: string, run: CommandSpec['run']): CommandSpec => ({ name: 'prune', description, flags: PRUNE_FLAGS, run });
export const CONTAINER_PRUNE = prune('Remove all stopped containers', containerPrune);
export const IMAGE_PRUNE = prune('Remove unused images', imagePrune);
export const SYSTEM_PRUNE = prune('Remove unused data', systemPrune);
