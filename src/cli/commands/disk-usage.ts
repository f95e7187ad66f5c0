// `engine system df -v`: the docker CLI's four verbose sections (images with shared and unique
// sizes, containers with their local volumes, volumes with their links, and the build cache with
// its total), each a table printed even when empty; a --format template runs once over all four.
import type { Cli } from '../cli.ts';
import { ago, ellipsis, humanSize, shortId } from '../output.ts';
import { compile } from '../template.ts';
import { tabwrite } from './family-output.ts';
import { ROW } from '../go-types.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

const size = (n: unknown) => (n === undefined || n === null || Number(n) < 0 ? 'N/A' : humanSize(Number(n)));
const epoch = (t: unknown) => (typeof t === 'number' ? t : Math.floor((Date.parse(String(t ?? '')) || 0) / 1000));

function table(cli: Cli, format: string, titles: Record<string, string>, rows: Obj[]): void {
  const t = compile(format);
  cli.out(tabwrite([t.header(titles), ...rows.map((r) => t.render(r))]));
}

export async function dfVerbose(cli: Cli, format: string | undefined): Promise<number> {
  const d = (await cli.api.df()) as Obj;
  const images = ((d.Images ?? []) as Obj[]).map((i) => {
    const tag = ((i.RepoTags ?? []) as string[]).find((t) => t !== '<none>:<none>');
    const at = tag ? tag.lastIndexOf(':') : -1;
    return {
      Repository: tag ? tag.slice(0, at).replace(/^docker\.io\/(library\/)?/, '') : '<none>',
      Tag: tag ? tag.slice(at + 1) : '<none>',
      ID: shortId(i.Id),
      CreatedSince: ago(i.Created),
      Size: size(i.Size),
      SharedSize: Number(i.SharedSize) < 0 ? 'N/A' : humanSize(Number(i.SharedSize ?? 0), 4),
      UniqueSize: Number(i.SharedSize) < 0 ? 'N/A' : humanSize(Number(i.Size) - Number(i.SharedSize ?? 0), 4),
      Containers: String(i.Containers ?? 0),
    };
  });
  const containers = ((d.Containers ?? []) as Obj[]).map((c) => ({
    ID: shortId(c.Id),
    Image: c.Image ?? '',
    Command: JSON.stringify(ellipsis(String(c.Command ?? ''), 20)),
    LocalVolumes: String(((c.Mounts ?? []) as Obj[]).filter((m) => m.Type === 'volume' || m.Driver === 'local').length),
    Size: size(c.SizeRw ?? 0),
    RunningFor: ago(c.Created),
    Status: c.Status ?? '',
    Names: ((c.Names ?? []) as string[]).map((n) => n.replace(/^\//, '')).join(','),
  }));
  const volumes = ((d.Volumes ?? []) as Obj[]).map((v) => ({
    Name: v.Name,
    Links: String(v.UsageData?.RefCount ?? 0),
    Size: size(v.UsageData?.Size),
  }));
  const cache = ((d.BuildCache ?? []) as Obj[])
    .sort((a, b) => epoch(b.LastUsedAt) - epoch(a.LastUsedAt))
    .map((b) => ({
      ID: String(b.ID ?? '').slice(0, 12),
      CacheType: b.Type ?? '',
      Size: humanSize(Number(b.Size ?? 0)),
      CreatedSince: ago(epoch(b.CreatedAt)),
      LastUsedSince: b.LastUsedAt ? ago(epoch(b.LastUsedAt)) : '',
      UsageCount: String(b.UsageCount ?? 0),
      Shared: String(!!b.Shared),
    }));
  if (format && format !== 'table') {
    // The docker CLI prints an execution's failure here bare (its parse, as a formatter's).
    const t = compile(format, { errors: 'bare-exec', type: ROW.diskUsage });
    cli.out(`${t.render({ Images: images, Containers: containers, Volumes: volumes, BuildCache: cache })}\n`);
    return 0;
  }
  cli.out('Images space usage:\n\n');
  table(
    cli,
    'table {{.Repository}}\t{{.Tag}}\t{{.ID}}\t{{.CreatedSince}}\t{{.Size}}\t{{.SharedSize}}\t{{.UniqueSize}}\t{{.Containers}}',
    {
      Repository: 'REPOSITORY',
      Tag: 'TAG',
      ID: 'IMAGE ID',
      CreatedSince: 'CREATED',
      Size: 'SIZE',
      SharedSize: 'SHARED SIZE',
      UniqueSize: 'UNIQUE SIZE',
      Containers: 'CONTAINERS',
    },
    images,
  );
  cli.out('\nContainers space usage:\n\n');
  table(
    cli,
    'table {{.ID}}\t{{.Image}}\t{{.Command}}\t{{.LocalVolumes}}\t{{.Size}}\t{{.RunningFor}}\t{{.Status}}\t{{.Names}}',
    {
      ID: 'CONTAINER ID',
      Image: 'IMAGE',
      Command: 'COMMAND',
      LocalVolumes: 'LOCAL VOLUMES',
      Size: 'SIZE',
      RunningFor: 'CREATED',
      Status: 'STATUS',
      Names: 'NAMES',
    },
    containers,
  );
  cli.out('\nLocal Volumes space usage:\n\n');
  table(cli, 'table {{.Name}}\t{{.Links}}\t{{.Size}}', { Name: 'VOLUME NAME', Links: 'LINKS', Size: 'SIZE' }, volumes);
  const total = ((d.BuildCache ?? []) as Obj[]).reduce((a, b) => a + Math.max(0, Number(b.Size ?? 0)), 0);
  cli.out(`\nBuild cache usage: ${humanSize(total)}\n\n`);
  table(
    cli,
    'table {{.ID}}\t{{.CacheType}}\t{{.Size}}\t{{.CreatedSince}}\t{{.LastUsedSince}}\t{{.UsageCount}}\t{{.Shared}}',
    {
      ID: 'CACHE ID',
      CacheType: 'CACHE TYPE',
      Size: 'SIZE',
      CreatedSince: 'CREATED',
      LastUsedSince: 'LAST USED',
      UsageCount: 'USAGE',
      Shared: 'SHARED',
    },
    cache,
  );
  return 0;
}
