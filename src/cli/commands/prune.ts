// engine system df and the prune commands (system prune, container prune, image prune), with
// docker's summaries: what was deleted and the total space reclaimed.
import { filtersOf, flagsOf } from '../args.ts';
import type { Cli } from '../cli.ts';
import type { CommandSpec, FlagHelp } from '../command-spec.ts';
import { ago, alignTable, ellipsis, humanSize, printFormatted, shortId } from '../output.ts';

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
  if (f.bool('verbose') && !f.str('format')) {
    cli.out(verboseDf(d, cache));
    return 0;
  }
  printFormatted(
    rows,
    f.str('format') ?? 'table {{.Type}}\t{{.TotalCount}}\t{{.Active}}\t{{.Size}}\t{{.Reclaimable}}',
    { Type: 'TYPE', TotalCount: 'TOTAL', Active: 'ACTIVE', Size: 'SIZE', Reclaimable: 'RECLAIMABLE' },
    (s) => cli.out(s),
  );
  return 0;
}

type Df = Awaited<ReturnType<Cli['api']['df']>>;

/** `system df -v`: each kind's own table under its heading, as the docker CLI prints them. */
// The df answer's entries are loosely typed in the SDK (Record<string, unknown>): read as the API documents them.
type Loose = Record<string, any>;
function verboseDf(d: Df, cache: NonNullable<Df['BuildCache']>): string {
  const table = (rows: string[][]) => alignTable(rows);
  const images: string[][] = [['REPOSITORY', 'TAG', 'IMAGE ID', 'CREATED', 'SIZE', 'SHARED SIZE', 'UNIQUE SIZE', 'CONTAINERS']];
  for (const i of (d.Images ?? []) as Loose[]) {
    const shared = Number(i.SharedSize ?? -1);
    const tags = i.RepoTags?.length ? i.RepoTags : ['<none>:<none>'];
    for (const t of tags) {
      const at = t.lastIndexOf(':');
      images.push([
        t.slice(0, at),
        t.slice(at + 1),
        shortId(i.Id),
        ago(i.Created),
        humanSize(i.Size ?? 0),
        shared < 0 ? 'N/A' : humanSize(shared),
        shared < 0 ? 'N/A' : humanSize((i.Size ?? 0) - shared),
        Number(i.Containers ?? -1) < 0 ? 'N/A' : String(i.Containers),
      ]);
    }
  }
  const containers: string[][] = [['CONTAINER ID', 'IMAGE', 'COMMAND', 'LOCAL VOLUMES', 'SIZE', 'CREATED', 'STATUS', 'NAMES']];
  for (const c of (d.Containers ?? []) as Loose[]) {
    containers.push([
      shortId(c.Id),
      c.Image ?? '',
      JSON.stringify(ellipsis(c.Command ?? '', 20)),
      String((c.Mounts ?? []).filter((m: Loose) => m.Type === 'volume').length),
      humanSize(c.SizeRw ?? 0),
      ago(c.Created),
      c.Status ?? '',
      (c.Names ?? []).map((n: string) => n.replace(/^\//, '')).join(','),
    ]);
  }
  const volumes: string[][] = [['VOLUME NAME', 'LINKS', 'SIZE']];
  for (const v of (d.Volumes ?? []) as Loose[]) {
    const u = v.UsageData as { Size?: number; RefCount?: number } | undefined;
    volumes.push([v.Name ?? '', String(u?.RefCount ?? 0), humanSize(u?.Size ?? 0)]);
  }
  const caches: string[][] = [['CACHE ID', 'CACHE TYPE', 'SIZE', 'CREATED', 'LAST USED', 'USAGE', 'SHARED']];
  for (const c of cache as Loose[]) {
    const since = (t: string | undefined) => (t ? ago(Date.parse(t) / 1000) : '');
    caches.push([
      c.ID ?? '',
      c.Type ?? '',
      humanSize(c.Size ?? 0),
      since(c.CreatedAt),
      since(c.LastUsedAt ?? undefined),
      String(c.UsageCount ?? 0),
      String(!!c.Shared),
    ]);
  }
  const cacheSize = (cache as Loose[]).reduce((a, c) => a + (c.Size ?? 0), 0);
  return [
    `Images space usage:\n\n${table(images)}`,
    `Containers space usage:\n\n${table(containers)}`,
    `Local Volumes space usage:\n\n${table(volumes)}`,
    `Build cache usage: ${humanSize(cacheSize)}\n\n${table(caches)}`,
  ].join('\n');
}

export async function containerPrune(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('container prune', argv, PRUNE_FLAGS, { max: 0 });
  const r = await cli.api.containers.prune({ filters: filtersOf(f.list('filter')) });
  if (r.ContainersDeleted?.length) cli.out(`Deleted Containers:\n${r.ContainersDeleted.join('\n')}\n\n`);
  cli.out(`Total reclaimed space: ${humanSize(r.SpaceReclaimed ?? 0)}\n`);
  return 0;
}

export async function imagePrune(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('image prune', argv, PRUNE_FLAGS, { max: 0 });
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
