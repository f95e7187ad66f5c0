// The task table the docker CLI prints for service ps, node ps and stack ps: names made from the
// service name and slot (or node), previous tasks of a slot indented under the newest (` \_ `),
// states pretty-printed ("Running 3 seconds ago"), errors quoted and cut to 30 characters, and
// node/service IDs resolved to names unless --no-resolve.
import type { Cli } from '../../cli.ts';
import { ellipsis, humanDuration, shortId } from '../../output.ts';
import { printRows } from '../family-output.ts';
import { ROW } from '../../go-types.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

/** sortorder.NaturalLess: runs of digits compare as numbers. */
export function naturalLess(a: string, b: string): boolean {
  const re = /(\d+|\D+)/g;
  const xs = a.match(re) ?? [];
  const ys = b.match(re) ?? [];
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
    const [x, y] = [xs[i]!, ys[i]!];
    if (x === y) continue;
    const nx = /^\d/.test(x);
    const ny = /^\d/.test(y);
    if (nx && ny) {
      const d = Number(x) - Number(y);
      if (d !== 0) return d < 0;
      return x.length < y.length;
    }
    return x < y;
  }
  return xs.length < ys.length;
}

/** formatter.PrettyPrint: the first letter upper-cased. */
export function pretty(s: unknown): string {
  const t = String(s ?? '');
  return t ? t[0]!.toUpperCase() + t.slice(1).toLowerCase() : '';
}

/** An image as a task row shows it truncated: the tag kept, the digest dropped, docker.io/library/ removed. */
export function familiarImage(image: string): string {
  const noDigest = image.replace(/@sha256:[0-9a-f]+$/, '');
  return noDigest.replace(/^docker\.io\/library\//, '').replace(/^docker\.io\//, '');
}

/** Resolves node and service IDs to names as the docker CLI's idresolver does (best effort, cached). */
export class Resolver {
  private readonly cache = new Map<string, string>();
  constructor(
    private readonly cli: Cli,
    private readonly noResolve = false,
  ) {}
  async node(id: string): Promise<string> {
    if (this.noResolve || !id) return id;
    return this.get(`n:${id}`, async () => {
      const n = (await this.cli.api.cluster.get('nodes', id)) as Obj;
      return n.Spec?.Name || n.Description?.Hostname || id;
    });
  }
  async service(id: string): Promise<string> {
    if (this.noResolve) return id;
    return this.get(`s:${id}`, async () => String(((await this.cli.api.cluster.get('services', id)) as Obj).Spec?.Name ?? id));
  }
  private async get(key: string, f: () => Promise<string>): Promise<string> {
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    // A node or service gone since the task was listed keeps its ID, as the docker CLI shows it.
    const v = await f().catch(() => key.slice(2));
    this.cache.set(key, v);
    return v;
  }
}

const TITLES = {
  ID: 'ID',
  Name: 'NAME',
  Image: 'IMAGE',
  Node: 'NODE',
  DesiredState: 'DESIRED STATE',
  CurrentState: 'CURRENT STATE',
  Error: 'ERROR',
  Ports: 'PORTS',
};

/** Prints tasks with --format (default the docker table); quiet prints IDs. */
export async function printTasks(
  cli: Cli,
  tasks: Obj[],
  opts: { format?: string; quiet?: boolean; noTrunc?: boolean; noResolve?: boolean },
): Promise<void> {
  const resolver = new Resolver(cli, opts.noResolve);
  const trunc = !opts.noTrunc;
  const named = await Promise.all(
    tasks.map(async (t) => {
      const svc = await resolver.service(String(t.ServiceID ?? ''));
      return { t, name: t.Slot ? `${svc}.${t.Slot}` : `${svc}.${t.NodeID}` };
    }),
  );
  const created = (t: Obj) => Date.parse(t.CreatedAt ?? '') || 0;
  // A stable sort: by name (naturally), the newest of a slot first.
  named.sort((a, b) =>
    a.name !== b.name ? (naturalLess(a.name, b.name) ? -1 : naturalLess(b.name, a.name) ? 1 : 0) : created(b.t) - created(a.t),
  );
  if (opts.quiet && (!opts.format || opts.format === 'table')) {
    cli.out(named.map(({ t }) => `${trunc ? shortId(t.ID) : t.ID}\n`).join(''));
    return;
  }
  const isTable = !opts.format || opts.format.startsWith('table');
  let prev = '';
  const rows: Record<string, unknown>[] = [];
  for (const { t, name } of named) {
    const shown = name === prev && isTable ? ` \\_ ${name}` : name;
    prev = name;
    const image = String(t.Spec?.ContainerSpec?.Image ?? '');
    const ts = Date.parse(t.Status?.Timestamp ?? '');
    const err = String(t.Status?.Err ?? '');
    const cut = trunc ? ellipsis(err, 30) : err;
    rows.push({
      ID: trunc ? shortId(t.ID) : t.ID,
      Name: shown,
      Image: trunc ? familiarImage(image) : image,
      Node: await resolver.node(String(t.NodeID ?? '')),
      DesiredState: pretty(t.DesiredState),
      CurrentState: `${pretty(t.Status?.State)} ${Number.isFinite(ts) ? humanDuration(Date.now() - ts).toLowerCase() : ''} ago`,
      Error: cut ? `"${cut}"` : '',
      Ports: ((t.Status?.PortStatus?.Ports ?? []) as Obj[]).map((p) => `*:${p.PublishedPort}->${p.TargetPort}/${p.Protocol}`).join(','),
    });
  }
  printRows(
    cli,
    rows,
    opts.format,
    'table {{.ID}}\t{{.Name}}\t{{.Image}}\t{{.Node}}\t{{.DesiredState}}\t{{.CurrentState}}\t{{.Error}}\t{{.Ports}}',
    TITLES,
    true,
    ROW.task,
  );
}
