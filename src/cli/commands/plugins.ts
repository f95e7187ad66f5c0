// engine plugin: install, create (from a directory holding config.json and rootfs/), enable,
// disable, set, push, rm, upgrade, ls and inspect, with the docker CLI's messages ("Installed
// plugin …", the privileges prompt, "Upgrading plugin … from … to …") and its plugin table.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { filtersOf } from '../args.ts';
import type { Cli } from '../cli.ts';
import type { CommandSpec } from '../command-spec.ts';
import { registryKey } from '../config.ts';
import { ellipsis, shortId } from '../output.ts';
import { renderProgress } from '../progress.ts';
import { tarContext } from '../tar-context.ts';
import { EngineError } from '../../client/errors.ts';
import type { PluginPrivilege } from '../../client/resources.ts';
import { confirm, printInspected, printRows } from './family-output.ts';
import { PLUGIN_TEXT as T } from './family-text.ts';
import { eachJoined } from './cluster/node.ts';
import { leaf, management, parseFor } from './spec-text.ts';
import { realStdout } from '../out.ts';
import { ROW } from '../go-types.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

function registryAuth(cli: Cli, ref: string): string {
  const auth = cli.config.credentials(registryKey(ref));
  return Buffer.from(JSON.stringify(auth ?? {})).toString('base64url');
}

/** A reference with `:latest` added when it has neither tag nor digest. */
function withTag(ref: string): string {
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  return last.includes(':') || ref.includes('@') ? ref : `${ref}:latest`;
}

/** The privileges a remote plugin asks for, accepted with --grant-all-permissions or at the prompt. */
async function grantPrivileges(cli: Cli, remote: string, all: boolean): Promise<PluginPrivilege[]> {
  const privileges = await cli.api.plugins.privileges(remote);
  if (all || !privileges.length) return privileges;
  cli.out(`Plugin ${JSON.stringify(remote)} is requesting the following privileges:\n`);
  for (const p of privileges) cli.out(` - ${p.Name}: [${p.Value.join(' ')}]\n`);
  if (!(await confirm(cli, 'Do you grant the above permissions?'))) throw new Error('permission denied');
  return privileges;
}

async function install(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin install', T.install, argv, { min: 1 });
  const [remoteArg, ...settings] = f.args as [string, ...string[]];
  const alias = f.str('alias');
  if (alias?.includes('@')) throw new Error(`invalid name: ${alias}`);
  const remote = withTag(remoteArg);
  const privileges = await grantPrivileges(cli, remote, f.bool('grant-all-permissions'));
  const r = await cli.api.plugins.install(remote, {
    name: alias ? withTag(alias) : undefined,
    privileges,
    registryAuth: registryAuth(cli, remote),
  });
  await renderProgress(r.progress, realStdout());
  if (settings.length) await cli.api.plugins.set(r.name, settings);
  if (!f.bool('disable')) await cli.api.plugins.enable(r.name, { timeout: 30 });
  cli.out(`Installed plugin ${remoteArg}\n`);
  return 0;
}

async function create(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin create', T.create, argv, { min: 2, max: 2 });
  const [name, dir] = f.args as [string, string];
  if (name.includes('@')) throw new Error(`invalid name: ${name}`);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error('context must be a directory');
  if (!existsSync(join(dir, 'config.json'))) throw new Error(`stat ${join(dir, 'config.json')}: no such file or directory`);
  const { stream } = await tarContext(dir);
  await cli.api.plugins.create(name, f.bool('compress') ? stream.pipe(createGzip()) : stream);
  cli.out(`${name}\n`);
  return 0;
}

async function enable(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin enable', T.enable, argv, { min: 1, max: 1 });
  const timeout = f.int('timeout') ?? 30;
  if (timeout < 0) throw new Error(`negative timeout ${timeout} is invalid`);
  await cli.api.plugins.enable(f.args[0]!, { timeout });
  cli.out(`${f.args[0]}\n`);
  return 0;
}

async function disable(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin disable', T.disable, argv, { min: 1, max: 1 });
  await cli.api.plugins.disable(f.args[0]!, { force: f.bool('force') });
  cli.out(`${f.args[0]}\n`);
  return 0;
}

async function set(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin set', T.set, argv, { min: 2 });
  await cli.api.plugins.set(f.args[0]!, f.args.slice(1));
  return 0;
}

async function push(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin push', T.push, argv, { min: 1, max: 1 });
  const name = f.args[0]!;
  if (name.includes('@')) throw new Error(`invalid name: ${name}`);
  await renderProgress(cli.api.plugins.push(withTag(name), { registryAuth: registryAuth(cli, name) }), realStdout());
  return 0;
}

async function rm(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin rm', T.rm, argv, { min: 1 });
  return eachJoined(cli, f.args, async (name) => {
    await cli.api.plugins.remove(name, { force: f.bool('force') });
    cli.out(`${name}\n`);
  });
}

async function upgrade(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin upgrade', T.upgrade, argv, { min: 1, max: 2 });
  const name = f.args[0]!;
  const p = (await cli.api.plugins.inspect(name).catch((e: Error) => {
    throw new Error(`error reading plugin data: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : e.message}`);
  })) as Obj;
  if (p.Enabled) throw new Error('the plugin must be disabled before upgrading');
  const current = String(p.PluginReference ?? '');
  const remote = withTag(f.args[1] ?? current);
  const familiar = (r: string) => r.replace(/^docker\.io\/(library\/)?/, '');
  cli.out(`Upgrading plugin ${p.Name} from ${familiar(current)} to ${familiar(remote)}\n`);
  if (!f.bool('skip-remote-check') && familiar(withTag(current)).split(':')[0] !== familiar(remote).split(':')[0]) {
    if (!(await confirm(cli, 'Plugin images do not match, are you sure?'))) throw new Error('plugin upgrade has been cancelled');
  }
  const privileges = await grantPrivileges(cli, remote, f.bool('grant-all-permissions'));
  await renderProgress(cli.api.plugins.upgrade(name, remote, { privileges, registryAuth: registryAuth(cli, remote) }), realStdout());
  cli.out(`Upgraded plugin ${name} to ${f.args[1] ?? current}\n`);
  return 0;
}

async function ls(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin ls', T.ls, argv, { max: 0 });
  const list = (await cli.api.plugins.list({ filters: filtersOf(f.list('filter')) })) as Obj[];
  const trunc = !f.bool('no-trunc');
  if (f.bool('quiet') && (!f.str('format') || f.str('format') === 'table')) {
    cli.out(list.map((p) => `${trunc ? shortId(p.Id) : p.Id}\n`).join(''));
    return 0;
  }
  const rows = list.map((p) => {
    const desc = String(p.Config?.Description ?? '').replace(/\n/g, ' ');
    return {
      ID: trunc ? shortId(p.Id) : p.Id,
      Name: p.Name,
      Description: trunc ? ellipsis(desc, 45) : desc,
      Enabled: !!p.Enabled,
      PluginReference: p.PluginReference ?? '',
    };
  });
  printRows(
    cli,
    rows,
    f.str('format'),
    'table {{.ID}}\t{{.Name}}\t{{.Description}}\t{{.Enabled}}',
    {
      ID: 'ID',
      Name: 'NAME',
      Description: 'DESCRIPTION',
      Enabled: 'ENABLED',
      PluginReference: 'IMAGE',
    },
    false,
    ROW.plugin,
  );
  return 0;
}

async function inspect(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('plugin inspect', T.inspect, argv, { min: 1 });
  const found: unknown[] = [];
  const errors: string[] = [];
  for (const name of f.args) {
    try {
      found.push(await cli.api.plugins.inspect(name));
    } catch (e) {
      if (e instanceof EngineError) errors.push(`Error response from daemon: ${e.message}`);
      else throw e;
    }
  }
  if (found.length || !f.str('format')) printInspected(cli, found, f.str('format'));
  if (errors.length) cli.err(`${errors.join('\n')}\n`);
  return errors.length ? 1 : 0;
}

export const SPECS: CommandSpec[] = [
  management('plugin', 'management', 'Manage plugins', [
    leaf('create', T.create, create),
    leaf('disable', T.disable, disable),
    leaf('enable', T.enable, enable),
    leaf('inspect', T.inspect, inspect),
    leaf('install', T.install, install),
    leaf('ls', T.ls, ls),
    leaf('push', T.push, push),
    leaf('rm', T.rm, rm),
    leaf('set', T.set, set),
    leaf('upgrade', T.upgrade, upgrade),
  ]),
];
