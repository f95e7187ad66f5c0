// engine ps / rm / stop / restart / kill / pause / unpause / rename / wait / logs / top / port /
// inspect: the container commands that do not start processes (run.ts has those).
import type { ContainerSummary, Port } from '../../types/api/index.ts';
import { EngineError } from '../../client/errors.ts';
import { filtersOf, flagsOf } from '../args.ts';
import type { CommandSpec, FlagHelp } from '../command-spec.ts';
import { eachName, ExitError, type Cli } from '../cli.ts';
import { ago, ellipsis, humanSize, printFormatted, shortId, timestampArg } from '../output.ts';
import { compile, usageTemplate } from '../template.ts';
import { realStderr, realStdout } from '../out.ts';
import { ROW } from '../go-types.ts';

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
const EMPTY_PS_ROW = Object.fromEntries(Object.keys(PS_TITLES).map((k) => [k, '']));
const PS_FLAGS: FlagHelp[] = [
  { name: 'all', short: 'a', kind: 'bool', description: 'Show all containers (default shows just running)' },
  { name: 'quiet', short: 'q', kind: 'bool', description: 'Only display container IDs' },
  { name: 'no-trunc', kind: 'bool', description: "Don't truncate output" },
  { name: 'size', short: 's', kind: 'bool', description: 'Display total file sizes' },
  { name: 'latest', short: 'l', kind: 'bool', description: 'Show the latest created container (includes all states)' },
  { name: 'last', short: 'n', kind: 'int', description: 'Show n last created containers (includes all states) (default -1)' },
  { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
  { name: 'format', kind: 'string', description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or 'TEMPLATE'" },
];

export async function ps(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('ps', argv, PS_FLAGS, { max: 0 });
  // As the docker CLI, any --format (even with -q; else the config's psFormat) is parsed and run
  // once over an empty row before the daemon is asked, so a template naming an unknown field fails with no container listed.
  const given = f.str('format') || cli.config.data.psFormat;
  if (f.str('format') && f.bool('quiet')) cli.err('WARNING: Ignoring custom format, because both --format and --quiet are set.\n');
  if (given) compile(given, { errors: 'ps', tables: false, type: ROW.container }).render(EMPTY_PS_ROW);
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
    { errors: 'ps', type: ROW.container },
  );
  return 0;
}

const RM_FLAGS: FlagHelp[] = [
  { name: 'force', short: 'f', kind: 'bool', description: 'Force the removal of a running container (uses SIGKILL)' },
  { name: 'volumes', short: 'v', kind: 'bool', description: 'Remove anonymous volumes associated with the container' },
  { name: 'link', short: 'l', kind: 'bool', description: 'Remove the specified link' },
];

export async function rm(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('rm', argv, RM_FLAGS, { min: 1 });
  return eachName(cli, f.args, (n) =>
    cli.api.containers.remove(n, { force: f.bool('force'), volumes: f.bool('volumes'), link: f.bool('link') }),
  );
}

const TIME_FLAGS: FlagHelp[] = [
  { name: 'time', short: 't', kind: 'int', description: 'Seconds to wait before killing the container' },
  { name: 'signal', short: 's', kind: 'string', description: 'Signal to send to the container' },
];
const KILL_FLAGS: FlagHelp[] = [
  { name: 'signal', short: 's', kind: 'string', description: 'Signal to send to the container (default "KILL")' },
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
  const f = flagsOf('kill', argv, KILL_FLAGS, { min: 1 });
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

const LOGS_FLAGS: FlagHelp[] = [
  { name: 'follow', short: 'f', kind: 'bool', description: 'Follow log output' },
  { name: 'timestamps', short: 't', kind: 'bool', description: 'Show timestamps' },
  { name: 'tail', short: 'n', kind: 'string', description: 'Number of lines to show from the end of the logs (default "all")' },
  {
    name: 'since',
    kind: 'string',
    description: 'Show logs since timestamp (e.g. 2013-01-02T13:23:37Z) or relative (e.g. 42m for 42 minutes)',
  },
  {
    name: 'until',
    kind: 'string',
    description: 'Show logs before a timestamp (e.g. 2013-01-02T13:23:37Z) or relative (e.g. 42m for 42 minutes)',
  },
  { name: 'details', kind: 'bool', description: 'Show extra details provided to logs' },
];

export async function logs(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('logs', argv, LOGS_FLAGS, { min: 1, max: 1 });
  const info = await cli.api.containers.inspect(f.args[0]!);
  const tail = f.str('tail');
  const frames = cli.api.containers.logs(info.Id!, {
    follow: f.bool('follow'),
    timestamps: f.bool('timestamps'),
    tail: tail === undefined || tail === 'all' ? undefined : Number(tail),
    since: timestampArg(f.str('since')),
    until: timestampArg(f.str('until')),
    tty: !!info.Config?.Tty,
  });
  for await (const fr of frames) (fr.stream === 'stderr' ? realStderr() : realStdout()).write(fr.data);
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
  // Service inspect shows the defaults of unset fields, as the docker CLI asks.
  service: (cli, n) => cli.api.cluster.get('services', n, { insertDefaults: true }),
  task: (cli, n) => cli.api.cluster.get('tasks', n),
  node: (cli, n) => cli.api.cluster.get('nodes', n),
  plugin: (cli, n) => cli.api.plugins.inspect(n),
  secret: (cli, n) => cli.api.cluster.get('secrets', n),
  config: (cli, n) => cli.api.cluster.get('configs', n),
};
/** The Go types the docker CLI decodes each kind into, where this CLI knows their fields (cli/commands/go-struct.ts). */
const INSPECTED_TYPES: Record<string, string | undefined> = {
  container: 'container.InspectResponse',
  image: 'image.InspectResponse',
  service: 'swarm.Service',
  node: 'swarm.Node',
  task: 'swarm.Task',
  secret: 'swarm.Secret',
  config: 'swarm.Config',
  volume: 'volume.Volume',
  network: 'network.Inspect',
};
/** The kinds `inspect` tries without --type, in the docker CLI's order. */
const AUTODETECT = ['container', 'image', 'network', 'volume', 'service', 'task', 'node', 'plugin', 'secret', 'config'];
/** Those tried only on a swarm manager (one /info call says so). */
const SWARM_KINDS = new Set(['service', 'task', 'node', 'secret', 'config']);
const ALL_TYPES = Object.keys(FINDERS).sort();

/** Writes items as `docker inspect` does: an indented JSON array, or one template rendering each. */
export function printInspect(cli: Cli, items: unknown[], format: string | undefined): void {
  if (format) {
    const t = usageTemplate(format, { errors: 'formatter', jsonMaps: true });
    for (const it of items) t.renderLine(it, (s) => cli.out(s));
  } else cli.out(`${JSON.stringify(items, null, 4)}\n`);
}

export const INSPECT_FLAGS: FlagHelp[] = [
  { name: 'format', short: 'f', kind: 'string', description: 'Format output using a custom template' },
  { name: 'type', kind: 'string', description: 'Only inspect objects of the given type' },
  { name: 'size', short: 's', kind: 'bool', description: 'Display total file sizes if the type is container' },
];

export async function inspect(cli: Cli, argv: string[], only?: string): Promise<number> {
  const f = flagsOf('inspect', argv, only ? INSPECT_FLAGS.filter((x) => x.name !== 'type') : INSPECT_FLAGS, { min: 1 });
  const type = f.str('type');
  const types = `"${ALL_TYPES.join('", "')}"`;
  if (type === '') throw new ExitError(1, `type is empty: must be one of ${types}`);
  if (type !== undefined && !FINDERS[type]) throw new ExitError(1, `unknown type: "${type}": must be one of ${types}`);
  const kinds = only ? [only] : type ? [type] : AUTODETECT;
  let manager: Promise<boolean> | undefined;
  const swarmManager = () =>
    (manager ??= cli.api.info().then(
      (i) => !!(i as { Swarm?: { ControlAvailable?: boolean } }).Swarm?.ControlAvailable,
      (e: Error) => {
        cli.err(`${e.message}\n`);
        return false;
      },
    ));
  const found: unknown[] = [];
  const missing: string[] = [];
  const ordered: unknown[] = [];
  const kindOf = new WeakMap<object, string>();
  for (const name of f.args) {
    let hit: unknown;
    let refused: string | undefined;
    for (const k of kinds) {
      if (kinds === AUTODETECT && SWARM_KINDS.has(k) && !(await swarmManager())) continue;
      try {
        hit = k === 'container' && f.bool('size') ? await cli.api.containers.inspect(name, { size: true }) : await FINDERS[k]!(cli, name);
        kindOf.set(hit as object, k);
        break;
      } catch (e) {
        if (!(e instanceof EngineError && e.status === 404)) throw e;
        // With --type the daemon's own words are the answer; autodetection goes on to the next kind.
        if (type || only) refused = `Error response from daemon: ${e.message}\n`;
      }
    }
    if (hit === undefined) {
      missing.push(refused ?? (only ? `Error response from daemon: No such ${only}: ${name}\n` : `Error: No such object: ${name}\n`));
      ordered.push({ refused: missing[missing.length - 1]!.slice(0, -1) });
    } else ordered.push(found[found.push(hit) - 1]);
  }
  // What was found is written first, the names not found after it, as the docker CLI does.
  const format = f.str('format');
  if (format) {
    // The template runs over the object's Go type, then over its JSON when that fails; volume
    // inspect has no JSON to fall back on.
    const typeOf = (it: unknown) => INSPECTED_TYPES[kindOf.get(it as object) ?? ''];
    // The Go types load only for a template (`engine ps` and the like never read them).
    const { printTyped, Refusal } = await import('./go-struct.ts');
    const items = ordered.map((it) => (kindOf.has(it as object) ? it : new Refusal((it as { refused: string }).refused)));
    const errors = printTyped(cli, items, format, typeOf, { fallback: only !== 'volume' });
    if (errors.length) cli.err(`${errors.join('\n')}\n`);
    return errors.length ? 1 : 0;
  }
  if (found.length || !format) printInspect(cli, found, format);
  for (const m of missing) cli.err(m);
  return missing.length ? 1 : 0;
}

export const PS: CommandSpec = { name: 'ps', group: 'common', description: 'List containers', flags: PS_FLAGS, run: ps };
export const RM: CommandSpec = {
  name: 'rm',
  group: 'other',
  description: 'Remove one or more containers',
  usage: '[OPTIONS] CONTAINER [CONTAINER...]',
  flags: RM_FLAGS,
  run: rm,
};
const many = (name: string, description: string, run: CommandSpec['run'], flags?: FlagHelp[]): CommandSpec => ({
  name,
  group: 'other',
  description,
  usage: `${flags ? '[OPTIONS] ' : ''}CONTAINER [CONTAINER...]`,
  flags,
  run,
});
export const STOP = many('stop', 'Stop one or more running containers', stop, TIME_FLAGS);
export const RESTART = many('restart', 'Restart one or more containers', restart, TIME_FLAGS);
export const KILL = many('kill', 'Kill one or more running containers', kill, KILL_FLAGS);
export const PAUSE = many('pause', 'Pause all processes within one or more containers', pause);
export const UNPAUSE = many('unpause', 'Unpause all processes within one or more containers', unpause);
export const WAIT = many('wait', 'Block until one or more containers stop, then print their exit codes', wait);
export const RENAME: CommandSpec = {
  name: 'rename',
  group: 'other',
  description: 'Rename a container',
  usage: 'CONTAINER NEW_NAME',
  run: rename,
};
export const LOGS: CommandSpec = {
  name: 'logs',
  group: 'other',
  description: 'Fetch the logs of a container',
  usage: '[OPTIONS] CONTAINER',
  flags: LOGS_FLAGS,
  run: logs,
};
export const TOP: CommandSpec = {
  name: 'top',
  group: 'other',
  description: 'Display the running processes of a container',
  usage: 'CONTAINER [ps OPTIONS]',
  run: top,
};
export const PORT: CommandSpec = {
  name: 'port',
  group: 'other',
  description: 'List port mappings or a specific mapping for the container',
  usage: 'CONTAINER [PRIVATE_PORT[/PROTO]]',
  run: port,
};

/** The top-level entries of this file (management.ts lists them again under `container`). */
export const SPECS: CommandSpec[] = [
  PS,
  RM,
  STOP,
  RESTART,
  KILL,
  PAUSE,
  UNPAUSE,
  WAIT,
  RENAME,
  LOGS,
  TOP,
  PORT,
  {
    name: 'inspect',
    group: 'other',
    description: 'Return low-level information on Engine objects',
    usage: '[OPTIONS] NAME|ID [NAME|ID...]',
    flags: INSPECT_FLAGS,
    run: (cli, argv) => inspect(cli, argv),
  },
];
