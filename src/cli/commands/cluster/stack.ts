// engine stack: deploy (compose files converted by stack-compose.ts; networks, secrets, configs and
// services created or updated by their scoped names), ls, ps, services, rm and config, with the
// docker CLI's messages ("Creating network app_back", "Updating service app_web (id: …)",
// "Removing service …", "Nothing found in stack: …").
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { filtersOf } from '../../args.ts';
import type { Cli } from '../../cli.ts';
import type { CommandSpec } from '../../command-spec.ts';
import { EngineError } from '../../../client/errors.ts';
import { STACK_TEXT as T } from '../family-text.ts';
import { printRows, readSource } from '../family-output.ts';
import { SERVICE_TABLE, SERVICE_TITLES, serviceRow, sortServices } from './service.ts';
import { withLatest } from './service-spec.ts';
import { waitOnService } from './service-wait.ts';
import { leaf, management, parseFor } from '../spec-text.ts';
import {
  convertFileObjects,
  convertNetworks,
  convertServices,
  ForbiddenProperties,
  ignoredWarnings,
  IMAGE_LABEL,
  loadCompose,
  Namespace,
  normalizedCompose,
  NAMESPACE_LABEL,
  propertyWarnings,
  type FileObjectIds,
} from './stack-compose.ts';
import { naturalLess, printTasks } from './tasks.ts';
import { ROW } from '../../go-types.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

function validateName(name: string): void {
  if (!name || name.trim().replace(/^["']+|["']+$/g, '') !== name) throw new Error(`invalid stack name: ${JSON.stringify(name)}`);
}

const stackFilter = (ns: string, extra?: Record<string, string[]>) => ({
  ...(extra ?? {}),
  label: [...(extra?.label ?? []), `${NAMESPACE_LABEL}=${ns}`],
});

async function ensureManager(cli: Cli): Promise<void> {
  const info = await cli.api.info();
  if (!info.Swarm?.ControlAvailable)
    throw new Error(
      'this node is not a swarm manager. Use "engine swarm init" or "engine swarm join" to connect this node to swarm and try again',
    );
}

async function composeFrom(cli: Cli, files: string[]): Promise<{ compose: Obj; dir: string }> {
  if (!files.length) throw new Error('specify a Compose file (with --compose-file)');
  const texts = await Promise.all(files.map(async (p) => ({ path: p, text: (await readSource(p)).toString() })));
  const dir = files[0] === '-' ? process.cwd() : dirname(resolve(files[0]!));
  let compose: Obj;
  try {
    compose = await loadCompose(texts, cli.env);
  } catch (e) {
    if (e instanceof ForbiddenProperties)
      throw new Error(`Compose file contains unsupported options:\n\n${propertyWarnings(e.properties)}\n`);
    throw e;
  }
  const ignored = ignoredWarnings(compose);
  if (ignored) cli.err(ignored);
  return { compose, dir };
}

/** Creates or updates the stack's secrets or configs; returns name → ID of every one the file names. */
async function syncFileObjects(
  cli: Cli,
  ns: Namespace,
  compose: Obj,
  dir: string,
  kind: 'secrets' | 'configs',
): Promise<Map<string, { id: string; name: string }>> {
  const ids = new Map<string, { id: string; name: string }>();
  const one = kind.slice(0, -1);
  for (const o of convertFileObjects(ns, compose, kind, dir)) {
    let existing: Obj | undefined;
    try {
      existing = (await cli.api.cluster.get(kind, o.name)) as Obj;
    } catch (e) {
      if (!(e instanceof EngineError && e.status === 404)) throw e;
    }
    if (o.external) {
      if (!existing) throw new Error(`${one} not found: ${o.name}`);
      ids.set(o.key, { id: String(existing.ID), name: o.name });
      continue;
    }
    if (existing) {
      await cli.api.cluster.update(kind, String(existing.ID), Number(existing.Version?.Index ?? 0), o.spec!).catch((e: Error) => {
        throw new Error(
          `failed to update ${one} ${o.name}: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : e.message}`,
        );
      });
      ids.set(o.key, { id: String(existing.ID), name: o.name });
    } else {
      cli.out(`Creating ${one} ${o.name}\n`);
      const r = await cli.api.cluster.create(kind, o.spec!).catch((e: Error) => {
        throw new Error(
          `failed to create ${one} ${o.name}: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : e.message}`,
        );
      });
      ids.set(o.key, { id: r.ID, name: o.name });
    }
  }
  return ids;
}

async function deploy(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('stack deploy', T.deploy, argv, { min: 1, max: 1 });
  const name = f.args[0]!;
  validateName(name);
  const resolveMode = f.str('resolve-image') ?? 'always';
  if (!['always', 'changed', 'never'].includes(resolveMode)) throw new Error(`invalid option ${resolveMode} for flag --resolve-image`);
  const { compose, dir } = await composeFrom(cli, f.list('compose-file'));
  await ensureManager(cli);
  const ns = new Namespace(name);
  const existing = (await cli.api.cluster.list('services', { filters: stackFilter(name) })) as Obj[];
  if (f.bool('prune')) {
    const keep = new Set(Object.keys(compose.services).map((k) => ns.scope(k)));
    for (const s of sortServices(existing.filter((s) => !keep.has(s.Spec?.Name)))) {
      cli.out(`Removing service ${s.Spec?.Name}\n`);
      await cli.api.cluster
        .remove('services', String(s.ID))
        .catch((e: Error) => cli.err(`Failed to remove service ${s.ID}: ${e.message}\n`));
    }
  }
  const { create, external } = convertNetworks(ns, compose);
  for (const n of external) {
    const net = await cli.api.networks.inspect(n).catch((e: unknown) => {
      if (e instanceof EngineError && e.status === 404)
        throw new Error(
          `network "${n}" is declared as external, but could not be found. You need to create a swarm-scoped network before the stack is deployed`,
        );
      throw e;
    });
    if (!['bridge', 'host', 'none'].includes(n) && net.Scope !== 'swarm')
      throw new Error(`network "${n}" is declared as external, but it is not in the right scope: "${net.Scope}" instead of "swarm"`);
  }
  const have = new Set(((await cli.api.networks.list({ filters: stackFilter(name) })) as Obj[]).map((n) => String(n.Name)));
  const networkIds = new Map<string, string>();
  for (const n of create) {
    if (have.has(n.name)) continue;
    cli.out(`Creating network ${n.name}\n`);
    const r = await cli.api.networks.create(n.spec as never).catch((e: Error) => {
      throw new Error(
        `failed to create network ${n.name}: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : e.message}`,
      );
    });
    networkIds.set(n.name, r.Id);
  }
  const ids: FileObjectIds = {
    secrets: await syncFileObjects(cli, ns, compose, dir, 'secrets'),
    configs: await syncFileObjects(cli, ns, compose, dir, 'configs'),
  };
  const specs = convertServices(ns, compose, dir, networkIds, ids);
  const byName = new Map(existing.map((s) => [String(s.Spec?.Name), s]));
  const serviceIds: string[] = [];
  for (const [key, spec] of specs) {
    const svcName = ns.scope(key);
    const image = String(spec.TaskTemplate.ContainerSpec.Image);
    const old = byName.get(svcName);
    if (old) {
      cli.out(`Updating service ${svcName} (id: ${old.ID})\n`);
      // An unchanged image keeps the digest the previous deploy pinned.
      if (resolveMode !== 'always' && image === old.Spec?.Labels?.[IMAGE_LABEL])
        spec.TaskTemplate.ContainerSpec.Image = old.Spec.TaskTemplate.ContainerSpec.Image;
      else spec.TaskTemplate.ContainerSpec.Image = resolveMode !== 'never' ? await pinned(cli, image) : withLatest(image);
      spec.TaskTemplate.ForceUpdate = old.Spec?.TaskTemplate?.ForceUpdate ?? 0;
      const r = await cli.api.cluster.updateService(String(old.ID), Number(old.Version?.Index ?? 0), spec).catch((e: Error) => {
        throw new Error(
          `failed to update service ${svcName}: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : e.message}`,
        );
      });
      for (const w of r.Warnings ?? []) cli.err(`${w}\n`);
      serviceIds.push(String(old.ID));
    } else {
      cli.out(`Creating service ${svcName}\n`);
      spec.TaskTemplate.ContainerSpec.Image = resolveMode !== 'never' ? await pinned(cli, image) : withLatest(image);
      const r = await cli.api.cluster.createService(spec).catch((e: Error) => {
        throw new Error(
          `failed to create service ${svcName}: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : e.message}`,
        );
      });
      serviceIds.push(r.ID);
    }
  }
  if (!f.has('detach'))
    cli.err(
      'Since --detach=false was not specified, tasks will be created in the background.\nIn a future release, --detach=false will become the default.\n',
    );
  if (f.has('detach') && !f.bool('detach')) {
    const errors: string[] = [];
    for (const id of serviceIds)
      await waitOnService(cli, id, { quiet: f.bool('quiet') }).catch((e: Error) => errors.push(`${id}: ${e.message}`));
    if (errors.length) throw new Error(errors.join('\n'));
  }
  return 0;
}

/** The image pinned to its registry digest when the registry answers (else as written). */
async function pinned(cli: Cli, image: string): Promise<string> {
  image = withLatest(image);
  try {
    const d = (await cli.api.images.distributionInspect(image)) as Obj;
    const digest = d.Descriptor?.digest as string | undefined;
    if (!digest || image.includes('@')) return image;
    return `${image}@${digest}`;
  } catch {
    // Not on a registry (a local image): the image as written, as the docker CLI leaves it.
    return image;
  }
}

async function ls(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('stack ls', T.ls, argv, { max: 0 });
  const services = (await cli.api.cluster.list('services', { filters: { label: [NAMESPACE_LABEL] } })) as Obj[];
  const counts = new Map<string, number>();
  for (const s of services) {
    const ns = s.Spec?.Labels?.[NAMESPACE_LABEL];
    if (ns !== undefined) counts.set(ns, (counts.get(ns) ?? 0) + 1);
  }
  const rows = [...counts]
    .sort(([a], [b]) => (naturalLess(a, b) ? -1 : naturalLess(b, a) ? 1 : 0))
    .map(([Name, n]) => ({ Name, Services: String(n) }));
  printRows(cli, rows, f.str('format'), 'table {{.Name}}\t{{.Services}}', { Name: 'NAME', Services: 'SERVICES' }, false, ROW.stack);
  return 0;
}

async function ps(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('stack ps', T.ps, argv, { min: 1, max: 1 });
  const name = f.args[0]!;
  validateName(name);
  const tasks = (await cli.api.cluster.list('tasks', { filters: stackFilter(name, filtersOf(f.list('filter'))) })) as Obj[];
  if (!tasks.length) throw new Error(`nothing found in stack: ${name}`);
  await printTasks(cli, tasks, {
    format: f.str('format'),
    quiet: f.bool('quiet'),
    noTrunc: f.bool('no-trunc'),
    noResolve: f.bool('no-resolve'),
  });
  return 0;
}

async function services(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('stack services', T.services, argv, { min: 1, max: 1 });
  const name = f.args[0]!;
  validateName(name);
  const quiet = f.bool('quiet') && (!f.str('format') || f.str('format') === 'table');
  const list = sortServices(
    (await cli.api.cluster.list('services', { filters: stackFilter(name, filtersOf(f.list('filter'))), status: !quiet })) as Obj[],
  );
  if (!list.length) {
    cli.err(`Nothing found in stack: ${name}\n`);
    return 0;
  }
  if (quiet) cli.out(list.map((s) => `${s.ID}\n`).join(''));
  else printRows(cli, list.map(serviceRow), f.str('format'), SERVICE_TABLE, SERVICE_TITLES, true, ROW.service);
  return 0;
}

async function rm(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('stack rm', T.rm, argv, { min: 1 });
  for (const n of f.args) validateName(n);
  const errors: string[] = [];
  for (const name of f.args) {
    const filters = stackFilter(name);
    const svcs = sortServices((await cli.api.cluster.list('services', { filters })) as Obj[]);
    const nets = (await cli.api.networks.list({ filters })) as Obj[];
    const secrets = (await cli.api.cluster.list('secrets', { filters })) as Obj[];
    const configs = (await cli.api.cluster.list('configs', { filters })) as Obj[];
    if (svcs.length + nets.length + secrets.length + configs.length === 0) {
      cli.err(`Nothing found in stack: ${name}\n`);
      continue;
    }
    let failed = false;
    const remove = async (what: string, shown: string, id: string, fn: () => Promise<void>) => {
      cli.out(`Removing ${what} ${shown}\n`);
      await fn().catch((e: Error) => {
        failed = true;
        cli.err(`Failed to remove ${what} ${id}: ${e instanceof EngineError ? `Error response from daemon: ${e.message}` : e.message}`);
      });
    };
    for (const s of svcs) await remove('service', s.Spec?.Name, s.ID, () => cli.api.cluster.remove('services', String(s.ID)));
    for (const s of secrets) await remove('secret', s.Spec?.Name, s.ID, () => cli.api.cluster.remove('secrets', String(s.ID)));
    for (const c of configs) await remove('config', c.Spec?.Name, c.ID, () => cli.api.cluster.remove('configs', String(c.ID)));
    for (const n of nets) await remove('network', n.Name, n.Id, () => cli.api.networks.remove(String(n.Id)));
    if (failed) {
      errors.push(`failed to remove some resources from stack: ${name}`);
      continue;
    }
    if (f.has('detach') && !f.bool('detach'))
      for (;;) {
        const left = (await cli.api.cluster.list('tasks', { filters })) as Obj[];
        if (!left.some((t) => !['complete', 'shutdown', 'failed', 'rejected', 'orphaned', 'remove'].includes(String(t.Status?.State))))
          break;
        await new Promise((r) => setTimeout(r, 500));
      }
  }
  if (errors.length) throw new Error(errors.join('\n'));
  return 0;
}

async function config(cli: Cli, argv: string[]): Promise<number> {
  const f = parseFor('stack config', T.config, argv, { max: 0 });
  const files = f.list('compose-file');
  if (!files.length) throw new Error('specify a Compose file (with --compose-file)');
  const texts = await Promise.all(
    files.map(async (p) => ({ path: p, text: (p === '-' ? await readSource('-') : await readFile(p)).toString() })),
  );
  const compose = await loadCompose(texts, f.bool('skip-interpolation') ? null : cli.env);
  const dir = files[0] === '-' ? process.cwd() : dirname(resolve(files[0]!));
  const { stringify: toYaml } = await import('yaml');
  cli.out(toYaml(normalizedCompose(compose, dir), { defaultStringType: 'PLAIN', defaultKeyType: 'PLAIN', lineWidth: 0, nullStr: 'null' }));
  return 0;
}

export const SPECS: CommandSpec[] = [
  management('stack', 'swarm', 'Manage Swarm stacks', [
    leaf('config', T.config, config),
    leaf('deploy', T.deploy, deploy),
    leaf('ls', T.ls, ls),
    leaf('ps', T.ps, ps),
    leaf('rm', T.rm, rm),
    leaf('services', T.services, services),
  ]),
];
