// engine secret and engine config: create (from a file or `-`), ls, inspect (also --pretty) and
// rm, as the docker CLI: the new object's ID, tables by name with CREATED/UPDATED ages, and the
// errors of an empty or missing file.
import { readFile } from 'node:fs/promises';
import { ExitError, filtersOf, keyValues } from '../../args.ts';
import type { Cli } from '../../cli.ts';
import type { CommandSpec } from '../../command-spec.ts';
import { humanDuration } from '../../output.ts';
import { EngineError } from '../../../client/errors.ts';
import { CONFIG_TEXT, SECRET_TEXT } from '../family-text.ts';
import { labelText, printInspected, printRows, readSource } from '../family-output.ts';
import { printTyped, Refusal } from '../go-struct.ts';
import { eachJoined, goTime } from './node.ts';
import { leaf, management, parseFor } from '../spec-text.ts';
import { naturalLess } from './tasks.ts';
import { ROW } from '../../go-types.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;
type Kind = 'secrets' | 'configs';

async function readData(file: string, what: string): Promise<Buffer> {
  if (!file) throw new Error(`${what} file is required`);
  if (file === '-') {
    const b = await readSource('-').catch((e: Error) => {
      throw new Error(`error reading from STDIN: ${e.message}`);
    });
    if (!b.length) throw new Error('error reading from STDIN: data is empty');
    return b;
  }
  const b = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`error reading from ${file}: open ${file}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`);
  });
  if (!b.length) throw new Error(`error reading from ${file}: data is empty`);
  return b;
}

const ago = (t: unknown) => `${humanDuration(Date.now() - (Date.parse(String(t ?? '')) || Date.now()))} ago`;

function family(kind: Kind) {
  const T = kind === 'secrets' ? SECRET_TEXT : CONFIG_TEXT;
  const one = kind === 'secrets' ? 'secret' : 'config';

  async function create(cli: Cli, argv: string[]): Promise<number> {
    const f = parseFor(`${one} create`, T.create, argv, kind === 'secrets' ? { min: 1, max: 2 } : { min: 2, max: 2 });
    const [name, file = ''] = f.args as [string, string?];
    const driver = f.str('driver');
    const spec: Obj = { Name: name, Labels: keyValues(f.list('label')) };
    if (driver) {
      if (file) throw new Error('when using secret driver secret data must be empty');
      spec.Driver = { Name: driver };
    } else spec.Data = (await readData(file, one)).toString('base64');
    if (f.str('template-driver')) spec.Templating = { Name: f.str('template-driver') };
    const r = await cli.api.cluster.create(kind, spec);
    cli.out(`${r.ID}\n`);
    return 0;
  }

  async function ls(cli: Cli, argv: string[]): Promise<number> {
    const f = parseFor(`${one} ls`, T.ls, argv, { max: 0 });
    const list = (await cli.api.cluster.list(kind, { filters: filtersOf(f.list('filter')) })) as Obj[];
    list.sort((a, b) =>
      naturalLess(a.Spec?.Name ?? '', b.Spec?.Name ?? '') ? -1 : naturalLess(b.Spec?.Name ?? '', a.Spec?.Name ?? '') ? 1 : 0,
    );
    if (f.bool('quiet') && (!f.str('format') || f.str('format') === 'table')) {
      cli.out(list.map((s) => `${s.ID}\n`).join(''));
      return 0;
    }
    const rows = list.map((s) => ({
      ID: s.ID,
      Name: s.Spec?.Name ?? '',
      ...(kind === 'secrets' ? { Driver: s.Spec?.Driver?.Name ?? '' } : {}),
      CreatedAt: ago(s.CreatedAt),
      UpdatedAt: ago(s.UpdatedAt),
      Labels: labelText(Object.fromEntries(Object.entries((s.Spec?.Labels ?? {}) as Record<string, string>).sort())),
    }));
    const table =
      kind === 'secrets'
        ? 'table {{.ID}}\t{{.Name}}\t{{.Driver}}\t{{.CreatedAt}}\t{{.UpdatedAt}}'
        : 'table {{.ID}}\t{{.Name}}\t{{.CreatedAt}}\t{{.UpdatedAt}}';
    printRows(
      cli,
      rows,
      f.str('format'),
      table,
      { ID: 'ID', Name: 'NAME', Driver: 'DRIVER', CreatedAt: 'CREATED', UpdatedAt: 'UPDATED', Labels: 'LABELS' },
      true,
      kind === 'secrets' ? ROW.secret : ROW.config,
    );
    return 0;
  }

  function pretty(s: Obj): string {
    const labels = Object.entries((s.Spec?.Labels ?? {}) as Record<string, string>).sort();
    const lab = labels.length ? `\nLabels:${labels.map(([k, v]) => `\n - ${k}${v ? `=${v}` : ''}`).join('')}` : '';
    if (kind === 'secrets')
      return `ID:              ${s.ID}\nName:              ${s.Spec?.Name}${lab}\nDriver:            ${s.Spec?.Driver?.Name ?? ''}\nCreated at:        ${goTime(s.CreatedAt).toLowerCase()}\nUpdated at:        ${goTime(s.UpdatedAt).toLowerCase()}\n`;
    const data = s.Spec?.Data ? Buffer.from(String(s.Spec.Data), 'base64').toString() : '';
    return `ID:\t\t\t${s.ID}\nName:\t\t\t${s.Spec?.Name}${lab}\nCreated at:            \t${goTime(s.CreatedAt).toLowerCase()}\nUpdated at:            \t${goTime(s.UpdatedAt).toLowerCase()}\nData:\n${data}\n`;
  }

  async function inspect(cli: Cli, argv: string[]): Promise<number> {
    const f = parseFor(`${one} inspect`, T.inspect, argv, { min: 1 });
    const found: Obj[] = [];
    const errors: string[] = [];
    const ordered: (Obj | Refusal)[] = [];
    for (const name of f.args) {
      try {
        found.push((await cli.api.cluster.get(kind, name)) as Obj);
        ordered.push(found[found.length - 1]!);
      } catch (e) {
        if (e instanceof EngineError) errors.push(`Error response from daemon: ${e.message}`);
        else throw e;
        ordered.push(new Refusal(errors[errors.length - 1]!));
      }
    }
    const format = f.str('format');
    if (!f.bool('pretty') && format?.startsWith('pretty') && format !== 'pretty')
      throw new ExitError(1, 'cannot supply extra formatting options to the pretty template');
    if (format && format !== 'pretty' && !f.bool('pretty')) {
      // Over the Go type, then the raw JSON; a template that does not parse exits 1 as the others.
      const all = printTyped(cli, ordered, format, kind === 'secrets' ? 'swarm.Secret' : 'swarm.Config', {
        parseStatus: 1,
        fallback: true,
      });
      if (all.length) cli.err(`${all.join('\n')}\n`);
      return all.length ? 1 : 0;
    }
    if (f.bool('pretty') || f.str('format') === 'pretty') cli.out(found.map(pretty).join('\n\n'));
    // The docker CLI prints a secret's or config's raw answer (SecretInspectWithRaw), indented, where
    // services and nodes are written back from their Go types: times keep the daemon's digits.
    else if (found.length || !f.str('format')) printInspected(cli, found, f.str('format'));
    if (errors.length) cli.err(`${errors.join('\n')}\n`);
    return errors.length ? 1 : 0;
  }

  async function rm(cli: Cli, argv: string[]): Promise<number> {
    const f = parseFor(`${one} rm`, T.rm, argv, { min: 1 });
    return eachJoined(cli, f.args, async (name) => {
      await cli.api.cluster.remove(kind, name);
      cli.out(`${name}\n`);
    });
  }

  return [leaf('create', T.create, create), leaf('inspect', T.inspect, inspect), leaf('ls', T.ls, ls), leaf('rm', T.rm, rm)];
}

export const SPECS: CommandSpec[] = [
  management('config', 'swarm', 'Manage Swarm configs', family('configs')),
  management('secret', 'swarm', 'Manage Swarm secrets', family('secrets')),
];
