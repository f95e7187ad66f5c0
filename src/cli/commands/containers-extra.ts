// engine commit, diff, export, import, update and search (also as `container commit/diff/export/
// update` and `image import`), with the docker CLI's output: commit prints the new image ID, diff
// one `C|A|D path` line per change, export refuses a terminal, import prints the daemon's status
// (the image ID), update each container name and then the daemon's warnings.
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { filtersOf, UsageError } from '../args.ts';
import type { Cli } from '../cli.ts';
import type { CommandSpec } from '../command-spec.ts';
import { ellipsis } from '../output.ts';
import { parseBytes } from '../run-options.ts';
import { printRows, readSource } from './family-output.ts';
import { OTHER_TEXT as T } from './other-text.ts';
import { leaf, parseFor } from './spec-text.ts';
import { EngineError } from '../../client/errors.ts';
import { realStdout } from '../out.ts';
import type { RestartPolicy, RestartPolicyName } from '../../types/container-api.ts';
import { ROW } from '../go-types.ts';

/** REPOSITORY[:TAG] split as the docker CLI does (a colon after the last slash starts the tag). */
export function splitReference(ref: string): { repo?: string; tag?: string } {
  if (!ref) return {};
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  return colon > slash ? { repo: ref.slice(0, colon), tag: ref.slice(colon + 1) } : { repo: ref };
}

async function commit(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('commit', T.commit, argv, { min: 1, max: 2 });
  const { repo, tag } = splitReference(f.args[1] ?? '');
  const r = await cli.api.images.commit(f.args[0]!, {
    repo,
    tag,
    comment: f.str('message'),
    author: f.str('author'),
    changes: f.list('change'),
    pause: f.has('pause') ? f.bool('pause') : true,
  });
  cli.out(`${r.Id}\n`);
  return 0;
}

const KINDS = ['C', 'A', 'D'];

async function diff(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('diff', T.diff, argv, { min: 1, max: 1 });
  for (const c of (await cli.api.containers.changes(f.args[0]!)) ?? []) cli.out(`${KINDS[c.Kind] ?? '?'} ${c.Path}\n`);
  return 0;
}

async function exportCmd(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('export', T.export, argv, { min: 1, max: 1 });
  const output = f.str('output');
  if (!output && cli.stdoutTty) throw new Error('cowardly refusing to save to a terminal. Use the -o flag or redirect');
  const tar = await cli.api.containers.export(f.args[0]!);
  if (!output) await pipeline(tar, realStdout(), { end: false });
  else
    await pipeline(tar, createWriteStream(output, { mode: 0o600 })).catch((e: Error) => {
      throw new Error(`failed to export container: ${e.message}`);
    });
  return 0;
}

async function importCmd(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('import', T.import, argv, { min: 1, max: 2 });
  const source = f.args[0]!;
  const { repo, tag } = splitReference(f.args[1] ?? '');
  const opts = { repo, tag, message: f.str('message'), changes: f.list('change'), platform: f.str('platform') };
  const isUrl = /^https?:\/\//.test(source);
  let body: Readable | undefined;
  // stdin read whole first: a stream of it as a request body stalls under the compiled CLI (Bun).
  if (source === '-') body = Readable.from([await readSource('-')]);
  else if (!isUrl) body = (await open(source)).createReadStream();
  const stream = cli.api.images.import(body, { ...opts, ...(isUrl ? { source } : {}) });
  for await (const m of stream) {
    if (m.status) cli.out(`${m.status}\n`);
  }
  return 0;
}

/** `--restart` as ParseRestartPolicy reads it: name[:max-retries]. */
function restartPolicy(v: string): RestartPolicy {
  const [name, count] = v.split(':') as [string, string?];
  if (count !== undefined && !/^\d+$/.test(count))
    throw new UsageError(`invalid restart policy format: maximum retry count must be an integer`);
  // The name goes as typed: the daemon refuses an unknown one, and its message is the one shown.
  return { Name: name as RestartPolicyName, ...(count !== undefined ? { MaximumRetryCount: Number(count) } : {}) };
}

async function update(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('update', T.update, argv, { min: 1 });
  if (f.p.flags.size === 0) throw new Error('you must provide one or more flags when using this command');
  const int = (n: string) => f.int(n);
  const bytes = (n: string) => {
    const v = f.str(n);
    return v === undefined ? undefined : v === '-1' ? -1 : parseBytes(v);
  };
  const cpus = f.str('cpus');
  if (cpus !== undefined && !Number.isFinite(Number(cpus)))
    throw new UsageError(`invalid argument "${cpus}" for "--cpus" flag: failed to parse ${cpus} as a rational number`);
  const body = {
    BlkioWeight: int('blkio-weight'),
    CpuPeriod: int('cpu-period'),
    CpuQuota: int('cpu-quota'),
    CpuRealtimePeriod: int('cpu-rt-period'),
    CpuRealtimeRuntime: int('cpu-rt-runtime'),
    CpuShares: int('cpu-shares'),
    NanoCpus: cpus === undefined ? undefined : Math.round(Number(cpus) * 1e9),
    CpusetCpus: f.str('cpuset-cpus'),
    CpusetMems: f.str('cpuset-mems'),
    Memory: bytes('memory'),
    MemoryReservation: bytes('memory-reservation'),
    MemorySwap: bytes('memory-swap'),
    PidsLimit: int('pids-limit') || undefined,
    ...(f.str('restart') ? { RestartPolicy: restartPolicy(f.str('restart')!) } : {}),
  };
  const warnings: string[] = [];
  const errors: string[] = [];
  for (const name of f.args) {
    try {
      const r = await cli.api.containers.update(name, body);
      cli.out(`${name}\n`);
      warnings.push(...(r.Warnings ?? []));
    } catch (e) {
      errors.push(e instanceof EngineError ? `Error response from daemon: ${e.message}` : (e as Error).message);
    }
  }
  if (warnings.length) cli.out(`${warnings.join('\n')}\n`);
  if (errors.length) {
    cli.err(`${errors.join('\n')}\n`);
    return 1;
  }
  return 0;
}

async function search(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('search', T.search, argv, { min: 1, max: 1 });
  const results = await cli.api.images.search(f.args[0]!, { limit: f.int('limit') || undefined, filters: filtersOf(f.list('filter')) });
  const noTrunc = f.bool('no-trunc');
  const rows = results.map((r) => {
    const desc = (r.description ?? '').replace(/\n/g, ' ');
    return {
      Name: r.name,
      Description: noTrunc ? desc : ellipsis(desc, 45),
      StarCount: String(r.star_count ?? 0),
      IsOfficial: r.is_official ? '[OK]' : '',
      IsAutomated: r.is_automated ? '[OK]' : '',
    };
  });
  printRows(
    cli,
    rows,
    f.str('format'),
    'table {{.Name}}\t{{.Description}}\t{{.StarCount}}\t{{.IsOfficial}}',
    {
      Name: 'NAME',
      Description: 'DESCRIPTION',
      StarCount: 'STARS',
      IsOfficial: 'OFFICIAL',
      IsAutomated: 'AUTOMATED',
    },
    false,
    ROW.search,
  );
  return 0;
}

const COMMIT = leaf('commit', T.commit, commit);
const DIFF = leaf('diff', T.diff, diff);
const EXPORT = leaf('export', T.export, exportCmd);
const IMPORT = leaf('import', T.import, importCmd);
const UPDATE = leaf('update', T.update, update);

export const SPECS: CommandSpec[] = [
  { ...COMMIT, group: 'other' },
  { ...DIFF, group: 'other' },
  { ...EXPORT, group: 'other' },
  { ...IMPORT, group: 'other' },
  { ...UPDATE, group: 'other' },
  { ...leaf('search', T.search, search), group: 'common' },
];

/** The same commands under `engine container` and `engine image`. */
export const CONTAINER_SUBS: CommandSpec[] = [COMMIT, DIFF, EXPORT, UPDATE];
export const IMAGE_SUBS: CommandSpec[] = [IMPORT];

/** Their management-command entries, which the table merges with management.ts's of the same name. */
export const UNDER_MANAGEMENT: CommandSpec[] = [
  { name: 'container', group: 'management', description: 'Manage containers', usage: 'COMMAND', subcommands: CONTAINER_SUBS },
  { name: 'image', group: 'management', description: 'Manage images', usage: 'COMMAND', subcommands: IMAGE_SUBS },
];
