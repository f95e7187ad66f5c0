// engine node: ls, ps, inspect (also --pretty), update, promote, demote and rm, with the docker
// CLI's table (the current node marked `*`, states pretty-printed) and messages.
import { ExitError, filtersOf } from '../../args.ts';
import type { Cli } from '../../cli.ts';
import type { CommandSpec } from '../../command-spec.ts';
import { EngineError } from '../../../client/errors.ts';
import { printInspected, printRows } from '../family-output.ts';
import { printTyped, Refusal } from '../go-struct.ts';
import { leaf, management, parseFor } from '../spec-text.ts';
import { NODE_TEXT as T } from './swarm-text.ts';
import { naturalLess, pretty, printTasks } from './tasks.ts';
import { ROW } from '../../go-types.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

/** `self` as the current node's ID; other references as given. */
async function reference(cli: Cli, ref: string): Promise<string> {
  if (ref !== 'self') return ref;
  const id = String((await cli.api.info()).Swarm?.NodeID ?? '');
  if (!id)
    throw new Error(
      'This node is not a swarm manager. Use "engine swarm init" or "engine swarm join" to connect this node to swarm and try again.',
    );
  return id;
}

/** Runs fn over each name, printing errors joined as the docker CLI's errors.Join does; 1 if any failed. */
export async function eachJoined(cli: Cli, names: string[], fn: (name: string) => Promise<void>): Promise<number> {
  const errors: string[] = [];
  for (const n of names) {
    try {
      await fn(n);
    } catch (e) {
      errors.push(e instanceof EngineError ? `Error response from daemon: ${e.message}` : (e as Error).message);
    }
  }
  if (errors.length) cli.err(`${errors.join('\n')}\n`);
  return errors.length ? 1 : 0;
}

async function ls(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('node ls', T.ls, argv, { max: 0 });
  const nodes = (await cli.api.cluster.list('nodes', { filters: filtersOf(f.list('filter')) })) as Obj[];
  nodes.sort((a, b) => (naturalLess(a.Description?.Hostname ?? '', b.Description?.Hostname ?? '') ? -1 : 1));
  if (f.bool('quiet') && (!f.str('format') || f.str('format') === 'table')) {
    cli.out(nodes.map((n) => `${n.ID}\n`).join(''));
    return 0;
  }
  const info = nodes.length ? await cli.api.info() : undefined;
  const self = String(info?.Swarm?.NodeID ?? '');
  const rows = nodes.map((n) => ({
    ID: n.ID,
    Self: n.ID === self,
    Hostname: n.Description?.Hostname ?? '',
    Status: pretty(n.Status?.State),
    Availability: pretty(n.Spec?.Availability),
    ManagerStatus: pretty(n.ManagerStatus ? (n.ManagerStatus.Leader ? 'Leader' : n.ManagerStatus.Reachability) : ''),
    EngineVersion: n.Description?.Engine?.EngineVersion ?? '',
    TLSStatus: tlsStatus(n, info?.Swarm?.Cluster as Obj | undefined),
  }));
  printRows(
    cli,
    rows,
    f.str('format'),
    'table {{.ID}} {{if .Self}}*{{else}} {{end}}\t{{.Hostname}}\t{{.Status}}\t{{.Availability}}\t{{.ManagerStatus}}\t{{.EngineVersion}}',
    {
      ID: 'ID',
      Self: '',
      Hostname: 'HOSTNAME',
      Status: 'STATUS',
      Availability: 'AVAILABILITY',
      ManagerStatus: 'MANAGER STATUS',
      EngineVersion: 'ENGINE VERSION',
      TLSStatus: 'TLS STATUS',
    },
    true,
    ROW.node,
  );
  return 0;
}

function tlsStatus(n: Obj, cluster: Obj | undefined): string {
  const a = cluster?.TLSInfo as Obj | undefined;
  const b = n.Description?.TLSInfo as Obj | undefined;
  const empty = (t?: Obj) => !t || (!t.TrustRoot && !t.CertIssuerSubject && !t.CertIssuerPublicKey);
  if (empty(a) || empty(b)) return 'Unknown';
  return a!.TrustRoot === b!.TrustRoot && a!.CertIssuerSubject === b!.CertIssuerSubject && a!.CertIssuerPublicKey === b!.CertIssuerPublicKey
    ? 'Ready'
    : 'Needs Rotation';
}

async function ps(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('node ps', T.ps, argv);
  const refs = f.args.length ? f.args : ['self'];
  const tasks: Obj[] = [];
  const errors: string[] = [];
  for (const ref of refs) {
    try {
      const node = (await cli.api.cluster.get('nodes', await reference(cli, ref))) as Obj;
      const filters = filtersOf(f.list('filter')) ?? {};
      filters.node = [...(filters.node ?? []), String(node.ID)];
      tasks.push(...((await cli.api.cluster.list('tasks', { filters })) as Obj[]));
    } catch (e) {
      errors.push(e instanceof EngineError ? `Error response from daemon: ${e.message}` : (e as Error).message);
    }
  }
  if (!errors.length || tasks.length)
    await printTasks(cli, tasks, {
      format: f.str('format'),
      quiet: f.bool('quiet'),
      noTrunc: f.bool('no-trunc'),
      noResolve: f.bool('no-resolve'),
    });
  if (errors.length) cli.err(`${errors.join('\n')}\n`);
  return errors.length ? 1 : 0;
}

function prettyNode(n: Obj): string {
  const lines = [`ID:\t\t\t${n.ID}`];
  if (n.Spec?.Name) lines.push(`Name:\t\t\t${n.Spec.Name}`);
  const labels = Object.entries((n.Spec?.Labels ?? {}) as Record<string, string>).sort();
  if (labels.length) lines.push('Labels:', ...labels.map(([k, v]) => ` - ${k}${v ? `=${v}` : ''}`));
  lines.push(
    `Hostname:              \t${n.Description?.Hostname ?? ''}`,
    `Joined at:             \t${goTime(n.CreatedAt).toLowerCase()}`,
    'Status:',
  );
  lines.push(` State:\t\t\t${pretty(n.Status?.State)}`);
  if (n.Status?.Message) lines.push(` Message:              \t${n.Status.Message}`);
  lines.push(` Availability:         \t${pretty(n.Spec?.Availability)}`);
  if (n.Status?.Addr) lines.push(` Address:\t\t${n.Status.Addr}`);
  if (n.ManagerStatus)
    lines.push(
      'Manager Status:',
      ` Address:\t\t${n.ManagerStatus.Addr}`,
      ` Raft Status:\t\t${pretty(n.ManagerStatus.Reachability)}`,
      ` Leader:\t\t${n.ManagerStatus.Leader ? 'Yes' : 'No'}`,
    );
  const d = n.Description ?? {};
  lines.push('Platform:', ` Operating System:\t${d.Platform?.OS ?? ''}`, ` Architecture:\t\t${d.Platform?.Architecture ?? ''}`);
  lines.push(
    'Resources:',
    ` CPUs:\t\t\t${Number(d.Resources?.NanoCPUs ?? 0) / 1e9}`,
    ` Memory:\t\t${bytesIEC(Number(d.Resources?.MemoryBytes ?? 0))}`,
  );
  const plugins = new Map<string, string[]>();
  for (const p of (d.Engine?.Plugins ?? []) as Obj[]) plugins.set(p.Type, [...(plugins.get(p.Type) ?? []), p.Name]);
  if (plugins.size) lines.push('Plugins:', ...[...plugins].sort().map(([k, v]) => ` ${k}:\t\t${v.sort().join(', ')}`));
  lines.push(`Engine Version:\t\t${d.Engine?.EngineVersion ?? ''}`);
  const el = Object.entries((d.Engine?.Labels ?? {}) as Record<string, string>).sort();
  if (el.length) lines.push('Engine Labels:', ...el.map(([k, v]) => ` - ${k}${v ? `=${v}` : ''}`));
  if (d.TLSInfo?.TrustRoot)
    lines.push(
      'TLS Info:',
      ' TrustRoot:',
      String(d.TLSInfo.TrustRoot),
      ` Issuer Subject:\t${d.TLSInfo.CertIssuerSubject ?? ''}`,
      ` Issuer Public Key:\t${d.TLSInfo.CertIssuerPublicKey ?? ''}`,
    );
  return `${lines.join('\n')}\n`;
}

/** A time as Go's time.Time String() prints it: `2026-11-28 22:48:56.12 +0000 UTC`. */
export function goTime(t: unknown): string {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(String(t ?? ''));
  if (!m) return String(t ?? '');
  const frac = (m[3] ?? '').replace(/0+$/, '');
  return `${m[1]} ${m[2]}${frac ? `.${frac}` : ''} +0000 UTC`;
}

/** go-units BytesSize with 2 decimals ("1.944GiB"), as node inspect --pretty prints memory. */
function bytesIEC(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${Number(n.toPrecision(4))}${units[i]}`;
}

async function inspect(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('node inspect', T.inspect, argv, { min: 1 });
  const found: Obj[] = [];
  const errors: string[] = [];
  const ordered: (Obj | Refusal)[] = [];
  for (const ref of f.args) {
    try {
      found.push((await cli.api.cluster.get('nodes', await reference(cli, ref))) as Obj);
      ordered.push(found[found.length - 1]!);
    } catch (e) {
      errors.push(e instanceof EngineError ? `Error response from daemon: ${e.message}` : (e as Error).message);
      ordered.push(new Refusal(errors[errors.length - 1]!));
    }
  }
  const format = f.str('format');
  if (!f.bool('pretty') && format?.startsWith('pretty') && format !== 'pretty')
    throw new ExitError(1, 'cannot supply extra formatting options to the pretty template');
  if (format && format !== 'pretty' && !f.bool('pretty')) {
    // Over swarm.Node, the errors in the order of the names; a template that does not parse exits 1 too.
    const all = printTyped(cli, ordered, format, 'swarm.Node', { parseStatus: 1 });
    if (all.length) cli.err(`${all.join('\n')}\n`);
    return all.length ? 1 : 0;
  }
  if (f.bool('pretty') || f.str('format') === 'pretty') cli.out(found.map(prettyNode).join('\n'));
  else if (found.length || !f.str('format')) printInspected(cli, found, f.str('format'), 'Node');
  if (errors.length) cli.err(`${errors.join('\n')}\n`);
  return errors.length ? 1 : 0;
}

/** Reads a node, applies change to its spec, and writes it back at the version read. */
async function updateNode(cli: Cli, ref: string, change: (spec: Obj) => void | 'unchanged'): Promise<Obj> {
  // As the docker CLI: update, promote and demote take a node as named (`self` only for inspect and ps).
  const node = (await cli.api.cluster.get('nodes', ref)) as Obj;
  const spec = (node.Spec ?? {}) as Obj;
  if (change(spec) !== 'unchanged') await cli.api.cluster.update('nodes', String(node.ID), Number(node.Version?.Index ?? 0), spec);
  return node;
}

async function update(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('node update', T.update, argv, { min: 1, max: 1 });
  const ref = f.args[0]!;
  await updateNode(cli, ref, (spec) => {
    if (f.has('role')) spec.Role = f.str('role');
    if (f.has('availability')) spec.Availability = f.str('availability');
    const labels = (spec.Labels ??= {}) as Record<string, string>;
    for (const kv of f.list('label-add')) {
      const eq = kv.indexOf('=');
      labels[eq < 0 ? kv : kv.slice(0, eq)] = eq < 0 ? '' : kv.slice(eq + 1);
    }
    for (const k of f.list('label-rm')) {
      if (!(k in labels)) throw new Error(`key ${k} doesn't exist in node's labels`);
      delete labels[k];
    }
  });
  cli.out(`${ref}\n`);
  return 0;
}

function roleChange(role: 'manager' | 'worker') {
  return async (cli: Cli, argv: string[]): Promise<number> => {
    const f = parseFor(role === 'manager' ? 'node promote' : 'node demote', role === 'manager' ? T.promote : T.demote, argv, { min: 1 });
    return eachJoined(cli, f.args, async (ref) => {
      let same = false;
      const node = await updateNode(cli, ref, (spec) => {
        if (spec.Role === role) {
          same = true;
          return 'unchanged';
        }
        spec.Role = role;
      });
      if (same) cli.out(role === 'manager' ? `Node ${node.ID} is already a manager.\n` : `Node ${node.ID} is already a worker.\n`);
      else cli.out(role === 'manager' ? `Node ${ref} promoted to a manager in the swarm.\n` : `Manager ${ref} demoted in the swarm.\n`);
    });
  };
}

async function rm(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('node rm', T.rm, argv, { min: 1 });
  return eachJoined(cli, f.args, async (id) => {
    await cli.api.cluster.remove('nodes', id, { force: f.bool('force') });
    cli.out(`${id}\n`);
  });
}

export const SPECS: CommandSpec[] = [
  management('node', 'swarm', 'Manage Swarm nodes', [
    leaf('demote', T.demote, roleChange('worker')),
    leaf('inspect', T.inspect, inspect),
    leaf('ls', T.ls, ls),
    leaf('promote', T.promote, roleChange('manager')),
    leaf('ps', T.ps, ps),
    leaf('rm', T.rm, rm),
    leaf('update', T.update, update),
  ]),
];
