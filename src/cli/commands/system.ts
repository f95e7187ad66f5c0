// engine version / info / events / stats / cp / system (df, prune, info, events, dial-stdio).
// `system dial-stdio` is what ssh:// runs on the remote: it joins its stdin and stdout to the
// daemon's socket, half-closing each way as the other side ends, so one ssh session carries one
// HTTP connection.
import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import type * as ChildProcess from 'node:child_process';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { connector } from '../../client/transport.ts';
import { settingsFromEnv } from '../../client/host.ts';
import type { ContainerStatsResponse, EventMessage, SystemVersion } from '../../types/api/index.ts';
import type { GoJson } from '../../types/go-nil.ts';
import { ENGINE_VERSION as VERSION } from '../../version.ts';
import { filtersOf, flagsOf, UsageError } from '../args.ts';
import type { CommandSpec, FlagHelp } from '../command-spec.ts';
import { ExitError, type Cli } from '../cli.ts';
import { byteOrder, bytesSize, humanSize, printFormatted, shortId, timestampArg } from '../output.ts';
import { eventsTemplate, usageTemplate } from '../template.ts';
import { infoText } from './info-text.ts';
import { realStdout } from '../out.ts';
import { DOCKER_INFO, EVENT_MESSAGE, ROW, VERSION_INFO } from '../go-types.ts';

const VERSION_FLAGS: FlagHelp[] = [
  { name: 'format', short: 'f', kind: 'string', description: 'Format the output using the given Go template' },
];

export async function version(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('version', argv, VERSION_FLAGS, { max: 0 });
  const template = f.str('format') ? usageTemplate(f.str('format')!, { name: 'version', type: VERSION_INFO }) : undefined;
  const apiVersion = await cli.api.apiVersion().catch(() => undefined); // No daemon: `version` still prints the client part, as docker does (the server part reports the error).
  const client = {
    Version: VERSION,
    ApiVersion: apiVersion ?? '1.51',
    NodeVersion: process.version,
    Os: process.platform,
    Arch: process.arch === 'x64' ? 'amd64' : process.arch,
  };
  let server: GoJson<SystemVersion> | undefined;
  let failure: unknown;
  try {
    server = await cli.api.version();
  } catch (e) {
    failure = e;
  }
  if (template) {
    template.renderLine({ Client: client, Server: server ?? null }, (s) => cli.out(s));
  } else {
    cli.out(
      `Client:\n Version:           ${client.Version}\n API version:       ${client.ApiVersion}\n Node version:      ${client.NodeVersion}\n OS/Arch:           ${client.Os}/${client.Arch}\n`,
    );
    if (server) {
      cli.out(
        `\nServer:\n Engine:\n  Version:          ${server.Version}\n  API version:      ${server.ApiVersion} (minimum version ${server.MinAPIVersion})\n  Git commit:       ${server.GitCommit}\n  OS/Arch:          ${server.Os}/${server.Arch}\n  Experimental:     ${!!server.Experimental}\n`,
      );
      for (const c of server.Components ?? []) {
        if (c.Name === 'Engine') continue;
        cli.out(
          ` ${c.Name}:\n  Version:          ${c.Version}\n${Object.entries(c.Details ?? {})
            .map(([k, v]) => `  ${`${k}:`.padEnd(18)}${v}\n`)
            .join('')}`,
        );
      }
    }
  }
  if (failure) throw failure;
  return 0;
}

const INFO_FLAGS: FlagHelp[] = [
  { name: 'format', short: 'f', kind: 'string', description: 'Format the output using the given Go template' },
];

export async function info(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('info', argv, INFO_FLAGS, { max: 0 });
  const template = f.str('format') ? usageTemplate(f.str('format')!, { type: DOCKER_INFO }) : undefined;
  const i = await cli.api.info();
  if (template) {
    template.renderLine(i, (s) => cli.out(s));
    return 0;
  }
  cli.out(infoText(i, { version: VERSION, context: cli.contextName, debug: false }));
  for (const w of i.Warnings ?? []) cli.err(`${w}\n`);
  return 0;
}

/** An event line as the docker CLI prints it: time, type, action, actor and its attributes. */
export function eventLine(e: EventMessage): string {
  const ns = BigInt(e.timeNano ?? (e.time ?? 0) * 1e9);
  const secs = Number(ns / 1_000_000_000n);
  const iso = new Date(secs * 1000).toISOString().replace(/\.\d+Z$/, `.${String(ns % 1_000_000_000n).padStart(9, '0')}Z`);
  const attrs = Object.entries(e.Actor?.Attributes ?? {})
    .sort(([a], [b]) => byteOrder(a, b))
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return `${iso} ${e.Type} ${e.Action} ${e.Actor?.ID ?? ''}${attrs ? ` (${attrs})` : ''}`;
}

/**
 * A message as the docker CLI's template reads it, an events.Message: the API's lower-case fields
 * (status, id, from, scope, time, timeNano) read under their Go names too, Actor always there;
 * `json` still writes the API's JSON (the Go names are not enumerable).
 */
function goEvent(e: EventMessage): object {
  const raw = e as EventMessage & Record<string, unknown>;
  const go = {
    ...raw,
    Type: raw.Type ?? '',
    Action: raw.Action ?? '',
    Actor: { ID: raw.Actor?.ID ?? '', Attributes: raw.Actor?.Attributes ?? null },
  };
  const hidden = (value: unknown) => ({ value, enumerable: false });
  return Object.defineProperties(go, {
    Status: hidden(raw.status ?? ''),
    ID: hidden(raw.id ?? ''),
    From: hidden(raw.from ?? ''),
    Scope: hidden(raw.scope ?? ''),
    Time: hidden(raw.time ?? 0),
    TimeNano: hidden(raw.timeNano ?? 0),
  });
}

const EVENTS_FLAGS: FlagHelp[] = [
  { name: 'since', kind: 'string', description: 'Show all events created since timestamp' },
  { name: 'until', kind: 'string', description: 'Stream events until this timestamp' },
  { name: 'filter', short: 'f', kind: 'list', description: 'Filter output based on conditions provided' },
  { name: 'format', kind: 'string', description: 'Format the output using the given Go template' },
];

export async function events(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('events', argv, EVENTS_FLAGS, { max: 0 });
  const t = f.str('format') && f.str('format') !== 'json' ? eventsTemplate(f.str('format')!, goEvent({}), EVENT_MESSAGE) : undefined;
  for await (const e of cli.api.events({
    since: timestampArg(f.str('since')),
    until: timestampArg(f.str('until')),
    filters: filtersOf(f.list('filter')),
  })) {
    // A failure while streaming ends the command; what the template wrote, and the newline, come first.
    if (t) t.renderLine(goEvent(e), (s) => cli.out(s));
    else cli.out(`${f.str('format') === 'json' ? JSON.stringify(e) : eventLine(e)}\n`);
  }
  return 0;
}

export function statsRow(name: string, s: ContainerStatsResponse): Record<string, string> {
  const cpuDelta = (s.cpu_stats?.cpu_usage?.total_usage ?? 0) - (s.precpu_stats?.cpu_usage?.total_usage ?? 0);
  const sysDelta = (s.cpu_stats?.system_cpu_usage ?? 0) - (s.precpu_stats?.system_cpu_usage ?? 0);
  const cpus = s.cpu_stats?.online_cpus || 1;
  const cpu = sysDelta > 0 && cpuDelta > 0 ? (cpuDelta / sysDelta) * cpus * 100 : 0;
  const m = s.memory_stats ?? {};
  const cache =
    (m.stats as Record<string, number> | undefined)?.inactive_file ??
    (m.stats as Record<string, number> | undefined)?.total_inactive_file ??
    0;
  const used = Math.max(0, (m.usage ?? 0) - cache);
  const limit = m.limit ?? 0;
  const nets = Object.values(s.networks ?? {}) as { rx_bytes?: number; tx_bytes?: number }[];
  const rx = nets.reduce((a, n) => a + (n.rx_bytes ?? 0), 0);
  const tx = nets.reduce((a, n) => a + (n.tx_bytes ?? 0), 0);
  const blk = (s.blkio_stats?.io_service_bytes_recursive ?? []) as { op: string; value: number }[];
  const sum = (op: string) => blk.filter((b) => b.op.toLowerCase() === op).reduce((a, b) => a + b.value, 0);
  return {
    ID: shortId(s.id ?? undefined),
    Container: name,
    Name: (s.name ?? '').replace(/^\//, ''),
    CPUPerc: `${cpu.toFixed(2)}%`,
    MemUsage: `${bytesSize(used)} / ${bytesSize(limit)}`,
    MemPerc: `${limit ? ((used / limit) * 100).toFixed(2) : '0.00'}%`,
    NetIO: `${humanSize(rx)} / ${humanSize(tx)}`,
    BlockIO: `${humanSize(sum('read'))} / ${humanSize(sum('write'))}`,
    PIDs: String(s.pids_stats?.current ?? 0),
  };
}

const STATS_FORMAT = 'table {{.ID}}\t{{.Name}}\t{{.CPUPerc}}\t{{.MemUsage}}\t{{.MemPerc}}\t{{.NetIO}}\t{{.BlockIO}}\t{{.PIDs}}';
const STATS_TITLES = {
  ID: 'CONTAINER ID',
  Container: 'CONTAINER',
  Name: 'NAME',
  CPUPerc: 'CPU %',
  MemUsage: 'MEM USAGE / LIMIT',
  MemPerc: 'MEM %',
  NetIO: 'NET I/O',
  BlockIO: 'BLOCK I/O',
  PIDs: 'PIDS',
};

const STATS_FLAGS: FlagHelp[] = [
  { name: 'no-stream', kind: 'bool', description: 'Disable streaming stats and only pull the first result' },
  { name: 'all', short: 'a', kind: 'bool', description: 'Show all containers (default shows just running)' },
  { name: 'format', kind: 'string', description: 'Pretty-print images using a Go template' },
  { name: 'no-trunc', kind: 'bool', description: 'Do not truncate output' },
];

export async function stats(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('stats', argv, STATS_FLAGS);
  const names = f.args.length ? f.args : (await cli.api.containers.list({ all: f.bool('all') })).map((c) => c.Id!);
  const format = f.str('format') ?? STATS_FORMAT;
  const latest = new Map<string, Record<string, string>>();
  const draw = () => {
    if (!f.bool('no-stream') && cli.stdoutTty) cli.out('\x1b[2J\x1b[H');
    printFormatted(names.map((n) => latest.get(n)).filter(Boolean), format, STATS_TITLES, (s) => cli.out(s), undefined, {
      type: ROW.stats,
    });
  };
  if (f.bool('no-stream')) {
    await Promise.all(
      names.map(async (n) => {
        for await (const s of cli.api.containers.stats(n, { stream: false })) latest.set(n, statsRow(n, s));
      }),
    );
    draw();
    return 0;
  }
  const timer = setInterval(draw, 1000);
  try {
    await Promise.all(
      names.map(async (n) => {
        for await (const s of cli.api.containers.stats(n)) latest.set(n, statsRow(n, s));
      }),
    );
  } finally {
    clearInterval(timer);
  }
  return 0;
}

/** engine cp CONTAINER:SRC DEST | SRC CONTAINER:DEST (tar through the archive endpoints; extraction by tar(1)). */
const CP_FLAGS: FlagHelp[] = [
  { name: 'archive', short: 'a', kind: 'bool', description: 'Archive mode (copy all uid/gid information)' },
  { name: 'follow-link', short: 'L', kind: 'bool', description: 'Always follow symbol link in SRC_PATH' },
  {
    name: 'quiet',
    short: 'q',
    kind: 'bool',
    description: 'Suppress progress output during copy. Progress output is automatically suppressed if no terminal is attached',
  },
];

export async function cp(cli: Cli, argv: string[]): Promise<number> {
  const f = flagsOf('cp', argv, CP_FLAGS, { min: 2, max: 2 });
  const split = (s: string) => {
    const i = s.indexOf(':');
    return i > 0 && !s.startsWith('/') && !s.startsWith('.') ? { ctr: s.slice(0, i), path: s.slice(i + 1) } : { path: s };
  };
  const src = split(f.args[0]!);
  const dst = split(f.args[1]!);
  if (!!src.ctr === !!dst.ctr)
    throw new UsageError(src.ctr ? 'copying between containers is not supported' : 'must specify at least one container source');
  const api = cli.api.containers;
  if (src.ctr) {
    const tar = await api.getArchive(src.ctr, src.path);
    if (dst.path === '-') return pipeline(tar, realStdout()).then(() => 0);
    const intoDir = existsSync(dst.path) && statSync(dst.path).isDirectory();
    const workDir = mkdtempSync(join(intoDir ? dst.path : dirname(dst.path) || '.', '.engine-cp-'));
    try {
      const tarProc = (process.getBuiltinModule('node:child_process') as typeof ChildProcess).spawn(
        'tar',
        ['-x', '-C', workDir, ...(f.bool('archive') ? ['--same-owner'] : ['--no-same-owner'])],
        { stdio: ['pipe', 'inherit', 'inherit'] },
      );
      const done = new Promise<number>((res) => tarProc.on('close', (c) => res(c ?? 1)));
      await pipeline(tar, tarProc.stdin);
      if ((await done) !== 0) throw new ExitError(1, 'tar failed to extract the archive');
      const top = basename(src.path.replace(/\/+$/, '')) || '.';
      renameSync(join(workDir, top), intoDir ? join(dst.path, top) : dst.path);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
    return 0;
  }
  if (src.path === '-') {
    await api.putArchive(dst.ctr!, dst.path, process.stdin as unknown as import('node:stream').Readable);
    return 0;
  }
  // Into a container: an existing directory receives the source under its own name; else the path is the new name.
  let name = basename(src.path.replace(/\/+$/, ''));
  let parent = dst.path;
  try {
    const st = await api.statPath(dst.ctr!, dst.path);
    if (!((st.mode ?? 0) & 0x80000000)) {
      parent = dirname(dst.path);
      name = basename(dst.path);
    }
  } catch {
    parent = dirname(dst.path); // the destination does not exist yet: it is the new name
    name = basename(dst.path);
  }
  // The tar writer is cp's alone (into a container): imported here, not at start-up.
  const { tarPath } = await import('../tar-context.ts');
  await api.putArchive(dst.ctr!, parent, tarPath(src.path, name));
  return 0;
}

export async function dialStdio(cli: Cli, argv: string[]): Promise<number> {
  flagsOf('system dial-stdio', argv, [], { max: 0 });
  const conn = connector(settingsFromEnv(cli.settings, cli.env))();
  await new Promise<void>((resolve, reject) => {
    conn.on('error', reject);
    process.stdin.on('data', (b: Buffer) => conn.write(b));
    process.stdin.on('end', () => conn.end()); // half-close towards the daemon
    conn.on('data', (b: Buffer) => realStdout().write(b));
    conn.on('end', () => realStdout().end(() => resolve()));
  });
  return 0;
}

export const INFO: CommandSpec = {
  name: 'info',
  group: 'common',
  description: 'Display system-wide information',
  flags: INFO_FLAGS,
  run: info,
};
export const EVENTS: CommandSpec = {
  name: 'events',
  group: 'other',
  description: 'Get real time events from the server',
  flags: EVENTS_FLAGS,
  run: events,
};
export const STATS: CommandSpec = {
  name: 'stats',
  group: 'other',
  description: 'Display a live stream of container(s) resource usage statistics',
  usage: '[OPTIONS] [CONTAINER...]',
  flags: STATS_FLAGS,
  run: stats,
};
export const CP: CommandSpec = {
  name: 'cp',
  group: 'other',
  description: 'Copy files/folders between a container and the local filesystem',
  usage: '[OPTIONS] CONTAINER:SRC_PATH DEST_PATH|-\n\tengine cp [OPTIONS] SRC_PATH|- CONTAINER:DEST_PATH',
  flags: CP_FLAGS,
  run: cp,
};
export const DIAL_STDIO: CommandSpec = {
  name: 'dial-stdio',
  description: 'Proxy the stdio stream to the daemon connection. Should not be invoked manually.',
  hidden: true,
  run: dialStdio,
};

export const SPECS: CommandSpec[] = [
  {
    name: 'version',
    group: 'common',
    description: 'Show the Engine version information',
    flags: VERSION_FLAGS,
    run: version,
  },
  INFO,
  EVENTS,
  STATS,
  CP,
];
