// engine ps / rm / stop / restart / kill / pause / unpause / rename / wait / logs / top / port /
// inspect: the container commands that do not start processes (run.ts has those).
import type { ContainerSummary, Port } from '../../types/api/index.ts';
import { EngineError } from '../../client/errors.ts';
import { filtersOf, flagsOf, type FlagSpec } from '../args.ts';
import { eachName, ExitError, type Cli } from '../cli.ts';
import { ago, ellipsis, humanSize, printFormatted, shortId } from '../output.ts';
import { compile } from '../template.ts';

export function formatPorts(ports: Port[] | undefined): string {
  return (ports ?? [])
    .map((p) =>
      p.PublicPort
        ? `${p.IP?.includes(':') ? `[${p.IP}]` : (p.IP ?? '')}:${p.PublicPort}->${p.PrivatePort}/${p.Type}`
        : `${p.PrivatePort}/${p.Type}`,
    )
    .join(', ');
}

/** The fields `docker ps --format` offers, from a list entry. */
export function psRow(c: ContainerSummary, noTrunc: boolean): Record<string, unknown> {
  const cmd = c.Command ?? '';
  return {
    ID: noTrunc ? c.Id : shortId(c.Id),
    Image: c.Image,
    Command: JSON.stringify(noTrunc ? cmd : ellipsis(cmd, 20)),
    CreatedAt: c.Created
      ? new Date(c.Created * 1000)
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' +0000 UTC')
      : '',
    RunningFor: ago(c.Created),
    Status: c.Status,
    State: c.State,
    Ports: formatPorts(c.Ports),
    Names: (c.Names ?? [])
      .map((n) => n.replace(/^\//, ''))
      .filter((n) => !n.includes('/'))
      .join(','),
    Labels: Object.entries(c.Labels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
    Mounts: (c.Mounts ?? []).map((m) => m.Name || m.Source).join(','),
    Networks: Object.keys(c.NetworkSettings?.Networks ?? {}).join(','),
    Size: c.SizeRw !== undefined && c.SizeRw !== null ? `${humanSize(c.SizeRw)} (virtual ${humanSize(c.SizeRootFs ?? 0)})` : '',
  };
}

const PS_TITLES = {
  ID: 'CONTAINER ID',
  Image: 'IMAGE',
  Command: 'COMMAND',
  CreatedAt: 'CREATED AT',
  RunningFor: 'CREATED',
  Status: 'STATUS',
  State: 'STATE',
  Ports: 'PORTS',
  Names: 'NAMES',
  Labels: 'LABELS',
  Mounts: 'MOUNTS',
  Networks: 'NETWORKS',
  Size: 'SIZE',
};
const PS_FLAGS: FlagSpec[] = [
  { name: 'all', short: 'a', kind: 'bool' },
  { name: 'quiet', short: 'q', kind: 'bool' },
  { name: 'no-trunc', kind: 'bool' },
  { name: 'size', short: 's', kind: 'bool' },
  { name: 'latest', short: 'l', kind: 'bool' },
  { name: 'last', short: 'n', kind: 'int' },
  { name: 'filter', short: 'f', kind: 'list' },
  { name: 'format', kind: 'string' },
];

export async function ps(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('ps', argv, PS_FLAGS, { max: 0 });
  const last = f.bool('latest') ? 1 : f.int('last');
  const list = await cli.api.containers.list({
    all: f.bool('all') || (last ?? -1) > 0,
    limit: last,
    size: f.bool('size'),
    filters: filtersOf(f.list('filter')),
  });
  const noTrunc = f.bool('no-trunc');
  if (f.bool('quiet')) {
    cli.out(list.map((c) => `${noTrunc ? c.Id : shortId(c.Id)}\n`).join(''));
    return 0;
  }
  const fallback = `table {{.ID}}\t{{.Image}}\t{{.Command}}\t{{.RunningFor}}\t{{.Status}}\t{{.Ports}}\t{{.Names}}${f.bool('size') ? '\t{{.Size}}' : ''}`;
  const format = f.str('format') ?? cli.config.data.psFormat ?? fallback;
  printFormatted(
    list.map((c) => psRow(c, noTrunc)),
    format === 'table' ? fallback : format,
    PS_TITLES,
    (s) => cli.out(s),
    cli.tableFit(noTrunc),
  );
  return 0;
}

export async function rm(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf(
    'rm',
    argv,
    [
      { name: 'force', short: 'f', kind: 'bool' },
      { name: 'volumes', short: 'v', kind: 'bool' },
      { name: 'link', short: 'l', kind: 'bool' },
    ],
    { min: 1 },
  );
  return eachName(cli, f.args, (n) =>
    cli.api.containers.remove(n, { force: f.bool('force'), volumes: f.bool('volumes'), link: f.bool('link') }),
  );
}

const TIME_FLAGS: FlagSpec[] = [
  { name: 'time', short: 't', kind: 'int' },
  { name: 'signal', short: 's', kind: 'string' },
];

export async function stop(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('stop', argv, TIME_FLAGS, { min: 1 });
  return eachName(cli, f.args, (n) => cli.api.containers.stop(n, { timeout: f.int('time'), stopSignal: f.str('signal') }));
}

export async function restart(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('restart', argv, TIME_FLAGS, { min: 1 });
  return eachName(cli, f.args, (n) => cli.api.containers.restart(n, { timeout: f.int('time'), stopSignal: f.str('signal') }));
}

export async function kill(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('kill', argv, [{ name: 'signal', short: 's', kind: 'string' }], { min: 1 });
  return eachName(cli, f.args, (n) => cli.api.containers.kill(n, { killSignal: f.str('signal') }));
}

export async function pause(cli: Cli, argv: string[]): Promise<number> {
  return eachName(cli, flagsOf('pause', argv, [], { min: 1 }).args, (n) => cli.api.containers.pause(n));
}

export async function unpause(cli: Cli, argv: string[]): Promise<number> {
  return eachName(cli, flagsOf('unpause', argv, [], { min: 1 }).args, (n) => cli.api.containers.unpause(n));
}

export async function rename(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('rename', argv, [], { min: 2, max: 2 });
  await cli.api.containers.rename(f.args[0]!, f.args[1]!);
  return 0;
}

export async function wait(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('wait', argv, [], { min: 1 });
  let failed = false;
  for (const n of f.args) {
    try {
      cli.out(`${(await cli.api.containers.wait(n)).StatusCode}\n`);
    } catch (e) {
      failed = true;
      cli.err(`Error response from daemon: ${(e as Error).message}\n`);
    }
  }
  return failed ? 1 : 0;
}

const LOGS_FLAGS: FlagSpec[] = [
  { name: 'follow', short: 'f', kind: 'bool' },
  { name: 'timestamps', short: 't', kind: 'bool' },
  { name: 'tail', short: 'n', kind: 'string' },
  { name: 'since', kind: 'string' },
  { name: 'until', kind: 'string' },
  { name: 'details', kind: 'bool' },
];

export async function logs(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('logs', argv, LOGS_FLAGS, { min: 1, max: 1 });
  const info = await cli.api.containers.inspect(f.args[0]!);
  const tail = f.str('tail');
  const frames = cli.api.containers.logs(info.Id!, {
    follow: f.bool('follow'),
    timestamps: f.bool('timestamps'),
    tail: tail === undefined || tail === 'all' ? undefined : Number(tail),
    since: f.str('since'),
    until: f.str('until'),
    tty: !!info.Config?.Tty,
  });
  for await (const fr of frames) (fr.stream === 'stderr' ? process.stderr : process.stdout).write(fr.data);
  return 0;
}

export async function top(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('top', argv, [], { min: 1, interspersed: false });
  const [id, ...psArgs] = f.args as [string, ...string[]];
  const r = await cli.api.containers.top(id, { psArgs: psArgs.length ? psArgs.join(' ') : undefined });
  const rows = [r.Titles ?? [], ...(r.Processes ?? [])];
  const { alignTable } = await import('../output.ts');
  cli.out(alignTable(rows));
  return 0;
}

export async function port(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('port', argv, [], { min: 1, max: 2 });
  const info = await cli.api.containers.inspect(f.args[0]!);
  const ports = (info.NetworkSettings?.Ports ?? {}) as Record<string, { HostIp: string; HostPort: string }[] | null>;
  const want = f.args[1] ? (f.args[1].includes('/') ? f.args[1] : `${f.args[1]}/tcp`) : undefined;
  const addr = (b: { HostIp: string; HostPort: string }) =>
    `${b.HostIp.includes(':') ? `[${b.HostIp}]` : b.HostIp || '0.0.0.0'}:${b.HostPort}`;
  if (want) {
    const bs = ports[want];
    if (!bs?.length) throw new ExitError(1, `Error: No public port '${want}' published for ${f.args[0]}`);
    cli.out(bs.map((b) => `${addr(b)}\n`).join(''));
    return 0;
  }
  for (const [p, bs] of Object.entries(ports).sort()) for (const b of bs ?? []) cli.out(`${p} -> ${addr(b)}\n`);
  return 0;
}

type Finder = (cli: Cli, name: string) => Promise<unknown>;
const FINDERS: Record<string, Finder> = {
  container: (cli, n) => cli.api.containers.inspect(n),
  image: (cli, n) => cli.api.images.inspect(n),
  network: (cli, n) => cli.api.networks.inspect(n),
  volume: (cli, n) => cli.api.volumes.inspect(n),
};

/** Writes items as `docker inspect` does: an indented JSON array, or one template rendering each. */
export function printInspect(cli: Cli, items: unknown[], format: string | undefined): void {
  if (format) {
    const t = compile(format);
    for (const it of items) cli.out(`${t.render(it)}\n`);
  } else cli.out(`${JSON.stringify(items, null, 4)}\n`);
}

export async function inspect(cli: Cli, argv: string[], only?: string): Promise<number> {
  const f = flagsOf(
    'inspect',
    argv,
    [
      { name: 'format', short: 'f', kind: 'string' },
      { name: 'type', kind: 'string' },
      { name: 'size', short: 's', kind: 'bool' },
    ],
    { min: 1 },
  );
  const kinds = only ? [only] : f.str('type') ? [f.str('type')!] : ['container', 'image', 'volume', 'network'];
  const found: unknown[] = [];
  let failed = false;
  for (const name of f.args) {
    let hit: unknown;
    for (const k of kinds) {
      try {
        hit = k === 'container' && f.bool('size') ? await cli.api.containers.inspect(name, { size: true }) : await FINDERS[k]!(cli, name);
        break;
      } catch (e) {
        if (!(e instanceof EngineError && e.status === 404)) throw e;
      }
    }
    if (hit === undefined) {
      failed = true;
      cli.err(only ? `Error response from daemon: No such ${only}: ${name}\n` : `Error: No such object: ${name}\n`);
    } else found.push(hit);
  }
  if (found.length || !f.str('format')) printInspect(cli, found, f.str('format'));
  return failed ? 1 : 0;
}
