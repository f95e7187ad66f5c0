// engine service: create, update, scale, ps, logs, rollback, inspect (also --pretty), ls and rm,
// with the docker CLI's output (the new service's ID, then its convergence unless --detach;
// "web scaled to 3"; the service table with running/desired replicas; logs prefixed with
// `service.slot.task@node    | `).
import { ExitError, filtersOf, UsageError } from '../../args.ts';
import type { Cli } from '../../cli.ts';
import type { CommandSpec } from '../../command-spec.ts';
import { shortId } from '../../output.ts';
import { EngineError } from '../../../client/errors.ts';
import { printInspected, printRows } from '../family-output.ts';
import { printTyped, Refusal } from '../go-struct.ts';
import { eachJoined } from './node.ts';
import { SERVICE_TEXT as T } from './service-text.ts';
import { createSpec, updateSpec, withLatest } from './service-spec.ts';
import { waitOnService } from './service-wait.ts';
import { prettyService } from './service-pretty.ts';
import { leaf, management, parseFor } from '../spec-text.ts';
import { familiarImage, naturalLess, printTasks, Resolver } from './tasks.ts';
import { realStderr, realStdout } from '../../out.ts';
import { ROW } from '../../go-types.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

/** Pins the image to its registry digest as the docker CLI does; a warning when the registry cannot tell. */
async function resolveImage(cli: Cli, image: string): Promise<{ image: string; warning?: string }> {
  image = withLatest(image);
  try {
    const d = await cli.api.images.distributionInspect(image);
    const digest = (d as Obj).Descriptor?.digest as string | undefined;
    if (digest && !image.includes('@'))
      return { image: `${image.includes(':', image.lastIndexOf('/') + 1) ? image : `${image}:latest`}@${digest}` };
    return { image };
  } catch {
    // Not on a registry (a local image): the docker CLI's warning, and the image as given.
    return {
      image,
      warning: `image ${image} could not be accessed on a registry to record\nits digest. Each node will access ${image} independently,\npossibly leading to different nodes running different\nversions of the image.\n`,
    };
  }
}

async function create(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service create', T.create, argv, { min: 1, interspersed: false });
  let image = withLatest(f.args[0]!);
  const warnings: string[] = [];
  if (!f.bool('no-resolve-image')) {
    const r = await resolveImage(cli, image);
    image = r.image;
    if (r.warning) warnings.push(r.warning);
  }
  const spec = await createSpec(cli, f, image, f.args.slice(1));
  const r = await cli.api.cluster.createService(spec);
  for (const w of [...warnings, ...(r.Warnings ?? [])]) cli.err(w.endsWith('\n') ? w : `${w}\n`);
  cli.out(`${r.ID}\n`);
  if (!f.bool('detach')) await waitOnService(cli, r.ID, { quiet: f.bool('quiet') });
  return 0;
}

async function update(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service update', T.update, argv, { min: 1, max: 1 });
  const name = f.args[0]!;
  const svc = (await cli.api.cluster.get('services', name)) as Obj;
  const rollback = f.bool('rollback');
  if (rollback && [...f.p.flags.keys()].some((k) => !['rollback', 'detach', 'quiet'].includes(k)))
    throw new Error('other flags may not be combined with --rollback');
  const spec = svc.Spec as Obj;
  const warnings: string[] = [];
  if (!rollback) {
    if (f.has('image')) f.p.flags.set('image', withLatest(f.str('image')!));
    if (f.has('image') && !f.bool('no-resolve-image')) {
      const r = await resolveImage(cli, f.str('image')!);
      f.p.flags.set('image', r.image);
      if (r.warning) warnings.push(r.warning);
    }
    await updateSpec(cli, spec, f);
  }
  const r = await cli.api.cluster.updateService(
    String(svc.ID),
    Number(svc.Version?.Index ?? 0),
    spec,
    rollback ? { rollback: 'previous' } : {},
  );
  for (const w of [...warnings, ...(r.Warnings ?? [])]) cli.err(w.endsWith('\n') ? w : `${w}\n`);
  cli.out(`${name}\n`);
  if (!f.bool('detach')) await waitOnService(cli, String(svc.ID), { quiet: f.bool('quiet'), rollback });
  return 0;
}

async function rollback(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service rollback', T.rollback, argv, { min: 1, max: 1 });
  const name = f.args[0]!;
  const svc = (await cli.api.cluster.get('services', name)) as Obj;
  const r = await cli.api.cluster.updateService(String(svc.ID), Number(svc.Version?.Index ?? 0), svc.Spec as Obj, { rollback: 'previous' });
  for (const w of r.Warnings ?? []) cli.err(`${w}\n`);
  cli.out(`${name}\n`);
  if (!f.bool('detach')) await waitOnService(cli, String(svc.ID), { quiet: f.bool('quiet'), rollback: true });
  return 0;
}

async function scale(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service scale', T.scale, argv, { min: 1 });
  for (const a of f.args)
    if (!/^[^=]+=[^=]*$/.test(a))
      throw new UsageError(
        `invalid scale specifier '${a}'.\nSee 'engine service scale --help'.\n\nUsage:  engine service scale SERVICE=REPLICAS [SERVICE=REPLICAS...]\n\n${T.scale.description}`,
      );
  const errors: string[] = [];
  const scaled: string[] = [];
  for (const a of f.args) {
    const [name, n] = a.split('=') as [string, string];
    if (!/^\d+$/.test(n)) {
      errors.push(`${name}: invalid replicas value ${n}: strconv.ParseUint: parsing "${n}": invalid syntax`);
      continue;
    }
    try {
      const svc = (await cli.api.cluster.get('services', name)) as Obj;
      const spec = svc.Spec as Obj;
      if (spec.Mode?.Replicated) spec.Mode.Replicated.Replicas = Number(n);
      else if (spec.Mode?.ReplicatedJob) spec.Mode.ReplicatedJob.TotalCompletions = Number(n);
      else throw new Error('scale can only be used with replicated or replicated-job mode');
      const r = await cli.api.cluster.updateService(String(svc.ID), Number(svc.Version?.Index ?? 0), spec);
      for (const w of r.Warnings ?? []) cli.err(`${w}\n`);
      cli.out(`${name} scaled to ${n}\n`);
      scaled.push(name);
    } catch (e) {
      errors.push(`${name}: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : (e as Error).message}`);
    }
  }
  if (!f.bool('detach'))
    for (const name of scaled)
      await waitOnService(cli, name).catch((e: Error) => {
        errors.push(`${name}: ${e.message}`);
      });
  if (errors.length) cli.err(`${errors.join('\n')}\n`);
  return errors.length ? 1 : 0;
}

/** `*:8080->80/tcp` for each ingress-published port, sorted by protocol and port. */
function portsText(svc: Obj): string {
  const ports = ((svc.Endpoint?.Ports ?? []) as Obj[]).filter((p) => p.PublishMode === 'ingress' || !p.PublishMode);
  ports.sort((a, b) => (a.Protocol === b.Protocol ? a.PublishedPort - b.PublishedPort : a.Protocol < b.Protocol ? -1 : 1));
  return ports.map((p) => `*:${p.PublishedPort}->${p.TargetPort}/${p.Protocol}`).join(', ');
}

export function serviceRow(svc: Obj): Record<string, string> {
  const m = svc.Spec?.Mode ?? {};
  const st = svc.ServiceStatus ?? {};
  const [run, want, done] = [Number(st.RunningTasks ?? 0), Number(st.DesiredTasks ?? 0), Number(st.CompletedTasks ?? 0)];
  const max = m.Replicated ? Number(svc.Spec?.TaskTemplate?.Placement?.MaxReplicas ?? 0) : 0;
  const replicas = m.ReplicatedJob
    ? `${run}/${want} (${done}/${m.ReplicatedJob.TotalCompletions ?? 0} completed)`
    : m.GlobalJob
      ? `${run}/${want} (${done}/${want + done} completed)`
      : max > 0
        ? `${run}/${want} (max ${max} per node)`
        : `${run}/${want}`;
  return {
    ID: shortId(svc.ID),
    Name: svc.Spec?.Name ?? '',
    Mode: m.Global ? 'global' : m.Replicated ? 'replicated' : m.ReplicatedJob ? 'replicated job' : m.GlobalJob ? 'global job' : '',
    Replicas: replicas,
    Image: familiarImage(String(svc.Spec?.TaskTemplate?.ContainerSpec?.Image ?? '')),
    Ports: portsText(svc),
  };
}

export const SERVICE_TITLES = { ID: 'ID', Name: 'NAME', Mode: 'MODE', Replicas: 'REPLICAS', Image: 'IMAGE', Ports: 'PORTS' };
export const SERVICE_TABLE = 'table {{.ID}}\t{{.Name}}\t{{.Mode}}\t{{.Replicas}}\t{{.Image}}\t{{.Ports}}';

export function sortServices(list: Obj[]): Obj[] {
  return list.sort((a, b) =>
    naturalLess(a.Spec?.Name ?? '', b.Spec?.Name ?? '') ? -1 : naturalLess(b.Spec?.Name ?? '', a.Spec?.Name ?? '') ? 1 : 0,
  );
}

async function ls(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service ls', T.ls, argv, { max: 0 });
  const quiet = f.bool('quiet') && (!f.str('format') || f.str('format') === 'table');
  const list = sortServices((await cli.api.cluster.list('services', { filters: filtersOf(f.list('filter')), status: !quiet })) as Obj[]);
  if (quiet) cli.out(list.map((s) => `${s.ID}\n`).join(''));
  else printRows(cli, list.map(serviceRow), f.str('format'), SERVICE_TABLE, SERVICE_TITLES, true, ROW.service);
  return 0;
}

async function ps(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service ps', T.ps, argv, { min: 1 });
  const filters = filtersOf(f.list('filter')) ?? {};
  const errors: string[] = [];
  const ids: string[] = [];
  for (const name of f.args) {
    // A service named exactly, else an ID prefix, as the docker CLI matches.
    const byName = (await cli.api.cluster.list('services', { filters: { name: [name] } })) as Obj[];
    const exact = byName.find((s) => s.Spec?.Name === name);
    if (exact) ids.push(String(exact.ID));
    else {
      const byId = (await cli.api.cluster.list('services', { filters: { id: [name] } })) as Obj[];
      if (byId.length === 1) ids.push(String(byId[0]!.ID));
      else errors.push(`no such service: ${name}`);
    }
  }
  if (errors.length) throw new Error(errors.join('\n'));
  filters.service = [...(filters.service ?? []), ...ids];
  const tasks = (await cli.api.cluster.list('tasks', { filters })) as Obj[];
  await printTasks(cli, tasks, {
    format: f.str('format'),
    quiet: f.bool('quiet'),
    noTrunc: f.bool('no-trunc'),
    noResolve: f.bool('no-resolve'),
  });
  return 0;
}

/** logdetails.Parse: `k=v,k=v` with URL-escaped values. */
function parseDetails(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of s.split(',')) {
    const eq = kv.indexOf('=');
    if (eq > 0) out[decodeURIComponent(kv.slice(0, eq))] = decodeURIComponent(kv.slice(eq + 1));
  }
  return out;
}

async function logs(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service logs', T.logs, argv, { min: 1, max: 1 });
  const target = f.args[0]!;
  const raw = f.bool('raw');
  let kind: 'services' | 'tasks' = 'services';
  let tty = false;
  let width = 1;
  try {
    const svc = (await cli.api.cluster.get('services', target)) as Obj;
    tty = !!svc.Spec?.TaskTemplate?.ContainerSpec?.TTY;
    const reps = svc.Spec?.Mode?.Replicated?.Replicas;
    if (reps !== undefined) width = String(reps).length;
  } catch (e) {
    if (!(e instanceof EngineError && e.status === 404)) throw e;
    kind = 'tasks';
    const task = (await cli.api.cluster.get('tasks', target).catch((e2: unknown) => {
      if (e2 instanceof EngineError && e2.status === 404) throw new Error(`no such task or service: ${target}`);
      throw e2;
    })) as Obj;
    tty = !!task.Spec?.ContainerSpec?.TTY;
    width = String(task.Slot ?? 0).length;
  }
  if (tty && !raw) throw new Error('tty service logs only supported with --raw');
  const frames = cli.api.cluster.logs(kind, target, {
    follow: f.bool('follow'),
    timestamps: f.bool('timestamps'),
    tail: f.str('tail'),
    since: f.str('since'),
    details: f.bool('details') || !raw,
    tty,
  });
  const resolver = new Resolver(cli, f.bool('no-resolve'));
  const prefixes = new Map<string, string>();
  const prefix = async (d: Record<string, string>): Promise<string> => {
    const key = `${d['com.docker.swarm.node.id']}/${d['com.docker.swarm.service.id']}/${d['com.docker.swarm.task.id']}`;
    const hit = prefixes.get(key);
    if (hit) return hit;
    const node = await resolver.node(d['com.docker.swarm.node.id'] ?? '');
    const svc = await resolver.service(d['com.docker.swarm.service.id'] ?? '');
    const task = (await cli.api.cluster.get('tasks', d['com.docker.swarm.task.id'] ?? '')) as Obj;
    let name = `${svc}.${task.Slot ?? 0}`;
    if (!f.bool('no-task-ids')) name += `.${f.bool('no-trunc') ? task.ID : shortId(task.ID)}`;
    const pad = ' '.repeat(Math.max(0, width - String(task.Slot ?? 0).length));
    const p = `${name}@${node}${pad}`;
    prefixes.set(key, p);
    return p;
  };
  for await (const fr of frames) {
    const w = fr.stream === 'stderr' ? realStderr() : realStdout();
    if (tty || raw) {
      w.write(fr.data);
      continue;
    }
    const text = fr.data.toString();
    const parts = text.split(' ');
    const di = f.bool('timestamps') ? 1 : 0;
    if (parts.length < di + 2) throw new Error(`invalid context in log message: ${text}`);
    const details = parseDetails(parts[di]!);
    const shown = Object.entries(details)
      .filter(([k]) => !['com.docker.swarm.node.id', 'com.docker.swarm.service.id', 'com.docker.swarm.task.id'].includes(k))
      .map(([k, v]) => `${k}=${v}`)
      .sort();
    let out = f.bool('timestamps') ? `${parts[0]} ` : '';
    out += `${await prefix(details)}    | `;
    if (f.bool('details')) out += `${shown.join(',')} `;
    out += parts.slice(di + 1).join(' ');
    w.write(out);
  }
  return 0;
}

async function inspect(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service inspect', T.inspect, argv, { min: 1 });
  const found: Obj[] = [];
  const errors: string[] = [];
  const ordered: (Obj | Refusal)[] = [];
  for (const name of f.args) {
    try {
      found.push((await cli.api.cluster.get('services', name, { insertDefaults: true })) as Obj);
      ordered.push(found[found.length - 1]!);
    } catch (e) {
      if (e instanceof EngineError && e.status === 404) errors.push(`Error: no such service: ${name}`);
      else throw e;
      ordered.push(new Refusal(errors[errors.length - 1]!));
    }
  }
  const format = f.str('format');
  if (!f.bool('pretty') && format?.startsWith('pretty') && format !== 'pretty')
    throw new ExitError(1, 'Cannot supply extra formatting options to the pretty template');
  if (format && format !== 'pretty' && !f.bool('pretty')) {
    // Over swarm.Service, the errors in the order of the names; a template that does not parse exits 1 too.
    const all = printTyped(cli, ordered, format, 'swarm.Service', { parseStatus: 1 });
    if (all.length) cli.err(`${all.join('\n')}\n`);
    return all.length ? 1 : 0;
  }
  if (f.bool('pretty') || f.str('format') === 'pretty') {
    const names = new Map<string, string>();
    for (const s of found)
      for (const n of (s.Spec?.TaskTemplate?.Networks ?? []) as Obj[]) {
        const net = await cli.api.networks.inspect(String(n.Target), { scope: 'swarm' }).catch(() => undefined); // gone since: shown by ID, as docker does
        if (net?.Id) names.set(net.Id, String(net.Name));
      }
    cli.out(found.map((s) => prettyService(s, names)).join(''));
  } else if (found.length || !f.str('format')) printInspected(cli, found, f.str('format'), 'Service');
  if (errors.length) cli.err(`${errors.join('\n')}\n`);
  return errors.length ? 1 : 0;
}

async function rm(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('service rm', T.rm, argv, { min: 1 });
  return eachJoined(cli, f.args, async (name) => {
    await cli.api.cluster.remove('services', name);
    cli.out(`${name}\n`);
  });
}

export const SPECS: CommandSpec[] = [
  management('service', 'swarm', 'Manage Swarm services', [
    leaf('create', T.create, create),
    leaf('inspect', T.inspect, inspect),
    leaf('logs', T.logs, logs),
    leaf('ls', T.ls, ls),
    leaf('ps', T.ps, ps),
    leaf('rm', T.rm, rm),
    leaf('rollback', T.rollback, rollback),
    leaf('scale', T.scale, scale),
    leaf('update', T.update, update),
  ]),
];
