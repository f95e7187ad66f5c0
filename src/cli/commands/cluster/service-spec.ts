// The ServiceSpec the docker CLI builds from `service create` flags, and the changes `service
// update` flags make to a spec: ports (`8080:80`, `published=…,target=…`), networks, mounts,
// secrets and configs (names resolved to IDs), resources, restart/update/rollback policies,
// placement, health checks, DNS, hosts, ulimits and capabilities.
import { readFile } from 'node:fs/promises';
import { UsageError, type Flags } from '../../args.ts';
import type { Cli } from '../../cli.ts';
import { parseBytes, parseDuration, parseMount } from '../../run-options.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

/** Capabilities as the docker CLI normalises them: upper case with the CAP_ prefix (ALL as is). */
export function capName(c: string): string {
  const u = c.toUpperCase();
  return u === 'ALL' || u.startsWith('CAP_') ? u : `CAP_${u}`;
}

/** key=value pairs as a map (a key alone maps to ''). */
export function kvMap(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list) {
    const eq = kv.indexOf('=');
    out[eq < 0 ? kv : kv.slice(0, eq)] = eq < 0 ? '' : kv.slice(eq + 1);
  }
  return out;
}

function csvFields(spec: string): [string, string][] {
  return spec.split(',').map((field) => {
    const eq = field.indexOf('=');
    if (eq < 0) throw new UsageError(`invalid field '${field}' must be a key=value pair`);
    return [field.slice(0, eq).toLowerCase(), field.slice(eq + 1)];
  });
}

/** --publish: `[published:]target[/proto]` or `published=…,target=…,protocol=…,mode=…`. */
export function parsePublish(spec: string): Obj[] {
  if (spec.includes('=')) {
    const p: Obj = { Protocol: 'tcp', PublishMode: 'ingress' };
    for (const [k, v] of csvFields(spec)) {
      if (k === 'published') p.PublishedPort = Number(v);
      else if (k === 'target') p.TargetPort = Number(v);
      else if (k === 'protocol') p.Protocol = v;
      else if (k === 'mode') p.PublishMode = v;
      else throw new UsageError(`invalid field key ${k}`);
    }
    if (!p.TargetPort) throw new UsageError(`missing mandatory field "target"`);
    return [p];
  }
  const [addr, proto = 'tcp'] = spec.split('/') as [string, string?];
  const parts = addr.split(':');
  const target = parts.pop()!;
  const published = parts.pop();
  const range = (r: string) => r.split('-').map(Number) as [number, number?];
  const [t0, t1 = t0] = range(target);
  const [p0, p1 = p0] = published ? range(published) : [0, 0];
  if (!Number.isInteger(t0) || t0 <= 0) throw new UsageError(`invalid containerPort: ${target}`);
  const out: Obj[] = [];
  for (let i = 0; i <= t1 - t0; i++)
    out.push({
      Protocol: proto,
      TargetPort: t0 + i,
      ...(published ? { PublishedPort: p1 - p0 === t1 - t0 ? p0 + i : p0 } : {}),
      PublishMode: 'ingress',
    });
  return out;
}

/** --network: a name, or `name=…,alias=…,driver-opt=k=v`. */
export function parseNetwork(spec: string): Obj {
  if (!spec.includes('=')) return { Target: spec };
  const n: Obj = { Target: '', Aliases: [] as string[], DriverOpts: {} as Record<string, string> };
  for (const field of spec.split(',')) {
    const eq = field.indexOf('=');
    const [k, v] = [field.slice(0, eq).toLowerCase(), field.slice(eq + 1)];
    if (k === 'name' || k === 'target') n.Target = v;
    else if (k === 'alias') n.Aliases.push(v);
    else if (k === 'driver-opt') Object.assign(n.DriverOpts, kvMap([v]));
    else throw new UsageError(`invalid field key ${k}`);
  }
  if (!n.Aliases.length) delete n.Aliases;
  if (!Object.keys(n.DriverOpts).length) delete n.DriverOpts;
  return n;
}

/** --secret/--config: `name` or `source=…,target=…,uid=…,gid=…,mode=…`, resolved to IDs by name. */
async function fileRefs(cli: Cli, kind: 'secrets' | 'configs', specs: string[]): Promise<Obj[]> {
  if (!specs.length) return [];
  const refs = specs.map((spec) => {
    const r = { source: spec, target: '', uid: '0', gid: '0', mode: 0o444 };
    if (spec.includes('=')) {
      r.source = '';
      for (const [k, v] of csvFields(spec)) {
        if (k === 'source' || k === 'src') r.source = v;
        else if (k === 'target') r.target = v;
        else if (k === 'uid') r.uid = v;
        else if (k === 'gid') r.gid = v;
        else if (k === 'mode') r.mode = parseInt(v, 8);
        else throw new UsageError(`invalid field '${k}' in ${kind.slice(0, -1)} request`);
      }
    }
    if (!r.source) throw new UsageError(`source is required`);
    return r;
  });
  const all = (await cli.api.cluster.list(kind, { filters: { name: refs.map((r) => r.source) } })) as Obj[];
  const seen = new Set<string>();
  return refs.map((r) => {
    const target = r.target || r.source;
    if (seen.has(target)) throw new Error(`duplicate ${kind.slice(0, -1)} target for ${r.source} not allowed`);
    seen.add(target);
    const hit = all.find((o) => o.Spec?.Name === r.source) ?? all.find((o) => o.ID === r.source);
    if (!hit) throw new Error(`${kind.slice(0, -1)} not found: ${r.source}`);
    const key = kind === 'secrets' ? 'Secret' : 'Config';
    return { File: { Name: target, UID: r.uid, GID: r.gid, Mode: r.mode }, [`${key}ID`]: hit.ID, [`${key}Name`]: r.source };
  });
}
export const secretRefs = (cli: Cli, specs: string[]) => fileRefs(cli, 'secrets', specs);
export const configRefs = (cli: Cli, specs: string[]) => fileRefs(cli, 'configs', specs);

function ulimit(u: string): Obj {
  const [n, v = ''] = u.split('=') as [string, string?];
  const [soft, hard] = v.split(':').map(Number) as [number, number?];
  if (!Number.isFinite(soft)) throw new UsageError(`invalid ulimit argument: ${u}`);
  return { Name: n, Soft: soft, Hard: hard ?? soft };
}

function placementPref(p: string): Obj {
  const eq = p.indexOf('=');
  if (eq < 0 || p.slice(0, eq) !== 'spread') throw new UsageError(`invalid placement preference: ${p}`);
  return { Spread: { SpreadDescriptor: p.slice(eq + 1) } };
}

const dur = (f: Flags, n: string) => (f.has(n) ? parseDuration(f.str(n)!) : undefined);
const cpus = (v: string | undefined) => (v === undefined ? undefined : Math.round(Number(v) * 1e9));

/** --env and --env-file as the container's environment (files first, then flags). */
async function envOf(f: Flags): Promise<string[]> {
  const out: string[] = [];
  for (const file of f.list('env-file'))
    for (const line of (await readFile(file, 'utf8')).split('\n')) {
      const t = line.trim();
      if (!t || t.startsWith('#')) continue;
      out.push(t.includes('=') ? t : process.env[t] !== undefined ? `${t}=${process.env[t]}` : t);
    }
  return [...out, ...f.list('env')];
}

function healthOf(f: Flags): Obj | undefined {
  const set = ['health-cmd', 'health-interval', 'health-timeout', 'health-retries', 'health-start-period', 'health-start-interval'].filter(
    (n) => f.has(n),
  );
  if (f.bool('no-healthcheck')) {
    if (set.length) throw new UsageError('--no-healthcheck conflicts with --health-* options');
    return { Test: ['NONE'] };
  }
  if (!set.length) return undefined;
  return {
    ...(f.has('health-cmd') ? { Test: ['CMD-SHELL', f.str('health-cmd')!] } : {}),
    ...(f.has('health-interval') ? { Interval: dur(f, 'health-interval') } : {}),
    ...(f.has('health-timeout') ? { Timeout: dur(f, 'health-timeout') } : {}),
    ...(f.has('health-retries') ? { Retries: f.int('health-retries') } : {}),
    ...(f.has('health-start-period') ? { StartPeriod: dur(f, 'health-start-period') } : {}),
    ...(f.has('health-start-interval') ? { StartInterval: dur(f, 'health-start-interval') } : {}),
  };
}

/** UpdateConfig/RollbackConfig from `<prefix>-*` flags over swarmkit's defaults; undefined when none is set. */
function updatePolicy(f: Flags, prefix: 'update' | 'rollback', base?: Obj): Obj | undefined {
  const names = ['parallelism', 'delay', 'monitor', 'failure-action', 'max-failure-ratio', 'order'].map((n) => `${prefix}-${n}`);
  if (!names.some((n) => f.has(n))) return base;
  const c: Obj = base ?? { Parallelism: 1, FailureAction: 'pause', Monitor: 5e9, MaxFailureRatio: 0, Order: 'stop-first' };
  if (f.has(`${prefix}-parallelism`)) c.Parallelism = f.int(`${prefix}-parallelism`);
  if (f.has(`${prefix}-delay`)) c.Delay = dur(f, `${prefix}-delay`);
  if (f.has(`${prefix}-monitor`)) c.Monitor = dur(f, `${prefix}-monitor`);
  if (f.has(`${prefix}-failure-action`)) c.FailureAction = f.str(`${prefix}-failure-action`);
  if (f.has(`${prefix}-max-failure-ratio`)) c.MaxFailureRatio = Number(f.str(`${prefix}-max-failure-ratio`));
  if (f.has(`${prefix}-order`)) c.Order = f.str(`${prefix}-order`);
  return c;
}

function restartPolicy(f: Flags, base?: Obj): Obj | undefined {
  const names = ['restart-condition', 'restart-delay', 'restart-max-attempts', 'restart-window'];
  if (!names.some((n) => f.has(n))) return base;
  const r: Obj = { ...(base ?? {}) };
  if (f.has('restart-condition')) r.Condition = f.str('restart-condition');
  if (f.has('restart-delay')) r.Delay = dur(f, 'restart-delay');
  if (f.has('restart-max-attempts')) r.MaxAttempts = f.int('restart-max-attempts');
  if (f.has('restart-window')) r.Window = dur(f, 'restart-window');
  return r;
}

function resources(f: Flags, base: Obj = {}): Obj {
  const r: Obj = { Limits: { ...(base.Limits ?? {}) }, Reservations: { ...(base.Reservations ?? {}) } };
  if (f.has('limit-cpu')) r.Limits.NanoCPUs = cpus(f.str('limit-cpu'));
  if (f.has('limit-memory')) r.Limits.MemoryBytes = parseBytes(f.str('limit-memory')!);
  if (f.has('limit-pids')) r.Limits.Pids = f.int('limit-pids');
  if (f.has('reserve-cpu')) r.Reservations.NanoCPUs = cpus(f.str('reserve-cpu'));
  if (f.has('reserve-memory')) r.Reservations.MemoryBytes = parseBytes(f.str('reserve-memory')!);
  return r;
}

/** The service mode from --mode, --replicas and --max-concurrent, with the docker CLI's checks. */
function modeOf(f: Flags): Obj {
  const mode = f.str('mode') ?? 'replicated';
  const replicas = f.int('replicas');
  const conc = f.int('max-concurrent');
  const maxPer = f.int('replicas-max-per-node') ?? 0;
  const noReplicas = 'replicas can only be used with replicated or replicated-job mode';
  switch (mode) {
    case 'global':
    case 'global-job':
      if (replicas !== undefined) throw new Error(noReplicas);
      if (maxPer > 0) throw new Error('replicas-max-per-node can only be used with replicated or replicated-job mode');
      if (conc !== undefined) throw new Error('max-concurrent can only be used with replicated-job mode');
      return mode === 'global' ? { Global: {} } : { GlobalJob: {} };
    case 'replicated':
      if (conc !== undefined) throw new Error('max-concurrent can only be used with replicated-job mode');
      return { Replicated: { Replicas: replicas ?? 1 } };
    case 'replicated-job':
      return { ReplicatedJob: { MaxConcurrent: conc ?? replicas ?? 1, TotalCompletions: replicas ?? 1 } };
  }
  throw new Error(`unknown mode: ${mode}, only replicated and global supported`);
}

/** A network name or ID as the network's ID (the docker CLI resolves names before sending). */
async function networkId(cli: Cli, target: string): Promise<string> {
  return String((await cli.api.networks.inspect(target, { scope: 'swarm' })).Id ?? target);
}

/** Drops what Go's omitempty leaves out (empty maps, lists and strings, false), so the spec stored is the docker CLI's. */
export function omitEmpty(o: Obj, keys: string[]): Obj {
  for (const k of keys) {
    const v = o[k];
    if (
      v === false ||
      v === '' ||
      (Array.isArray(v) && !v.length) ||
      (v && typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).length)
    )
      delete o[k];
  }
  return o;
}

/** The spec `service create` sends. */
export async function createSpec(cli: Cli, f: Flags, image: string, args: string[]): Promise<Obj> {
  const spec = await buildSpec(cli, f, image, args);
  const c = spec.TaskTemplate.ContainerSpec as Obj;
  omitEmpty(c, ['Env', 'Labels', 'TTY', 'ReadOnly', 'Mounts']);
  omitEmpty(c.DNSConfig, ['Nameservers', 'Search', 'Options']);
  return omitEmpty(spec, ['Labels']);
}

async function buildSpec(cli: Cli, f: Flags, image: string, args: string[]): Promise<Obj> {
  const mode = modeOf(f);
  const update = updatePolicy(f, 'update');
  const rollback = updatePolicy(f, 'rollback');
  if ((mode.ReplicatedJob || mode.GlobalJob) && (update || rollback))
    throw new Error('update and rollback configuration is not supported for jobs');
  const networks = f.list('network').map(parseNetwork);
  for (const n of networks) n.Target = await networkId(cli, n.Target);
  networks.sort((a, b) => (a.Target < b.Target ? -1 : a.Target > b.Target ? 1 : 0));
  const entry = f.str('entrypoint');
  const stopGrace = dur(f, 'stop-grace-period');
  const health = healthOf(f);
  const ports = f.list('publish').flatMap(parsePublish);
  return {
    Name: f.str('name') ?? '',
    Labels: kvMap(f.list('label')),
    TaskTemplate: {
      ContainerSpec: {
        Image: image,
        ...(args.length ? { Args: args } : {}),
        ...(entry ? { Command: entry.split(/\s+/).filter(Boolean) } : {}),
        Env: await envOf(f),
        ...(f.str('hostname') ? { Hostname: f.str('hostname') } : {}),
        Labels: kvMap(f.list('container-label')),
        ...(f.str('workdir') ? { Dir: f.str('workdir') } : {}),
        ...(f.str('user') ? { User: f.str('user') } : {}),
        ...(f.list('group').length ? { Groups: f.list('group') } : {}),
        ...(f.str('stop-signal') ? { StopSignal: f.str('stop-signal') } : {}),
        TTY: f.bool('tty'),
        ReadOnly: f.bool('read-only'),
        Mounts: f.list('mount').map(parseMount),
        Init: f.bool('init'),
        DNSConfig: { Nameservers: f.list('dns'), Search: f.list('dns-search'), Options: f.list('dns-option') },
        ...(f.list('host').length ? { Hosts: f.list('host').map(hostEntry) } : {}),
        ...(stopGrace !== undefined ? { StopGracePeriod: stopGrace } : {}),
        ...(health ? { Healthcheck: health } : {}),
        ...(f.str('isolation') ? { Isolation: f.str('isolation') } : {}),
        ...(f.list('sysctl').length ? { Sysctls: kvMap(f.list('sysctl')) } : {}),
        ...(f.list('cap-add').length ? { CapabilityAdd: f.list('cap-add').map(capName) } : {}),
        ...(f.list('cap-drop').length ? { CapabilityDrop: f.list('cap-drop').map(capName) } : {}),
        ...(f.list('ulimit').length ? { Ulimits: f.list('ulimit').map(ulimit) } : {}),
        ...(f.has('oom-score-adj') ? { OomScoreAdj: f.int('oom-score-adj') } : {}),
        ...(f.list('secret').length ? { Secrets: await secretRefs(cli, f.list('secret')) } : {}),
        ...(f.list('config').length ? { Configs: await configRefs(cli, f.list('config')) } : {}),
      },
      ...(networks.length ? { Networks: networks } : {}),
      Resources: resources(f),
      ...(restartPolicy(f) ? { RestartPolicy: restartPolicy(f) } : {}),
      Placement: {
        ...(f.list('constraint').length ? { Constraints: f.list('constraint') } : {}),
        ...(f.list('placement-pref').length ? { Preferences: f.list('placement-pref').map(placementPref) } : {}),
        ...(f.int('replicas-max-per-node') ? { MaxReplicas: f.int('replicas-max-per-node') } : {}),
      },
      ...(f.str('log-driver') ? { LogDriver: { Name: f.str('log-driver'), Options: kvMap(f.list('log-opt')) } } : {}),
    },
    Mode: mode,
    ...(update ? { UpdateConfig: update } : {}),
    ...(rollback ? { RollbackConfig: rollback } : {}),
    EndpointSpec: { Mode: f.str('endpoint-mode') ?? 'vip', ...(ports.length ? { Ports: ports } : {}) },
  };
}

/** --host name:ip as the service's hosts entry ("ip name"). */
function hostEntry(h: string): string {
  const i = h.indexOf(':');
  if (i < 0) throw new UsageError(`bad format for add-host: "${h}"`);
  return `${h.slice(i + 1)} ${h.slice(0, i)}`;
}

/** Adds and removes in a list: `rm` keys (by keyOf) go, `add` items replace their key's entry. */
function edit<T>(list: T[] | undefined, add: T[], rm: string[], keyOf: (x: T) => string, rmKey: (s: string) => string = (s) => s): T[] {
  const gone = new Set(rm.map(rmKey));
  const added = new Set(add.map(keyOf));
  return [...(list ?? []).filter((x) => !gone.has(keyOf(x)) && !added.has(keyOf(x))), ...add];
}
const envKey = (e: string) => e.split('=')[0]!;

/** Applies `service update` flags to a spec in place. */
export async function updateSpec(cli: Cli, spec: Obj, f: Flags): Promise<void> {
  const task = (spec.TaskTemplate ??= {}) as Obj;
  const c = (task.ContainerSpec ??= {}) as Obj;
  if (f.has('image')) c.Image = f.str('image');
  if (f.has('args')) c.Args = f.str('args')!.split(/\s+/).filter(Boolean);
  if (f.has('entrypoint')) c.Command = f.str('entrypoint')!.split(/\s+/).filter(Boolean);
  if (f.has('hostname')) c.Hostname = f.str('hostname');
  if (f.has('workdir')) c.Dir = f.str('workdir');
  if (f.has('user')) c.User = f.str('user');
  if (f.has('stop-signal')) c.StopSignal = f.str('stop-signal');
  if (f.has('stop-grace-period')) c.StopGracePeriod = dur(f, 'stop-grace-period');
  if (f.has('tty')) c.TTY = f.bool('tty');
  if (f.has('read-only')) c.ReadOnly = f.bool('read-only');
  if (f.has('init')) c.Init = f.bool('init');
  if (f.has('isolation')) c.Isolation = f.str('isolation');
  if (f.has('oom-score-adj')) c.OomScoreAdj = f.int('oom-score-adj');
  const health = healthOf(f);
  if (health) c.Healthcheck = f.bool('no-healthcheck') ? health : { ...(c.Healthcheck ?? {}), ...health };
  c.Env = edit(c.Env as string[], f.list('env-add'), f.list('env-rm'), envKey);
  spec.Labels = { ...(spec.Labels ?? {}), ...kvMap(f.list('label-add')) };
  for (const k of f.list('label-rm')) delete spec.Labels[k];
  c.Labels = { ...(c.Labels ?? {}), ...kvMap(f.list('container-label-add')) };
  for (const k of f.list('container-label-rm')) delete c.Labels[k];
  if (f.list('sysctl-add').length || f.list('sysctl-rm').length) {
    c.Sysctls = { ...(c.Sysctls ?? {}), ...kvMap(f.list('sysctl-add')) };
    for (const k of f.list('sysctl-rm')) delete c.Sysctls[k];
  }
  c.Groups = edit(c.Groups as string[], f.list('group-add'), f.list('group-rm'), (g) => g);
  c.CapabilityAdd = edit(c.CapabilityAdd as string[], f.list('cap-add').map(capName), [], (x) => x);
  c.CapabilityDrop = edit(c.CapabilityDrop as string[], f.list('cap-drop').map(capName), [], (x) => x);
  c.Mounts = edit(c.Mounts as Obj[], f.list('mount-add').map(parseMount), f.list('mount-rm'), (m) => String(m.Target));
  c.Ulimits = edit(c.Ulimits as Obj[], f.list('ulimit-add').map(ulimit), f.list('ulimit-rm'), (u) => String(u.Name));
  const hostKey = (h: string) => h;
  c.Hosts = edit(c.Hosts as string[], f.list('host-add').map(hostEntry), f.list('host-rm').map(hostEntry), hostKey);
  const dns = (c.DNSConfig ??= {}) as Obj;
  dns.Nameservers = edit(dns.Nameservers as string[], f.list('dns-add'), f.list('dns-rm'), (x) => x);
  dns.Search = edit(dns.Search as string[], f.list('dns-search-add'), f.list('dns-search-rm'), (x) => x);
  dns.Options = edit(dns.Options as string[], f.list('dns-option-add'), f.list('dns-option-rm'), (x) => x);
  const sKey = (s: Obj) => String(s.SecretName);
  c.Secrets = edit(c.Secrets as Obj[], await secretRefs(cli, f.list('secret-add')), f.list('secret-rm'), sKey);
  const cKey = (s: Obj) => String(s.ConfigName);
  c.Configs = edit(c.Configs as Obj[], await configRefs(cli, f.list('config-add')), f.list('config-rm'), cKey);
  if (f.list('network-add').length || f.list('network-rm').length) {
    const add = f.list('network-add').map(parseNetwork);
    for (const n of add) n.Target = await networkId(cli, n.Target);
    const rm: string[] = [];
    for (const n of f.list('network-rm')) rm.push(await networkId(cli, n).catch(() => n));
    task.Networks = edit((task.Networks ?? spec.Networks) as Obj[], add, rm, (n) => String(n.Target));
    delete spec.Networks;
  }
  const place = (task.Placement ??= {}) as Obj;
  place.Constraints = edit(place.Constraints as string[], f.list('constraint-add'), f.list('constraint-rm'), (x) => x);
  place.Preferences = edit(
    place.Preferences as Obj[],
    f.list('placement-pref-add').map(placementPref),
    f.list('placement-pref-rm'),
    (p) => `spread=${p.Spread?.SpreadDescriptor}`,
  );
  if (f.has('replicas-max-per-node')) place.MaxReplicas = f.int('replicas-max-per-node');
  task.Resources = resources(f, task.Resources);
  task.RestartPolicy = restartPolicy(f, task.RestartPolicy);
  if (f.has('log-driver')) task.LogDriver = { Name: f.str('log-driver'), Options: kvMap(f.list('log-opt')) };
  if (f.bool('force')) task.ForceUpdate = Number(task.ForceUpdate ?? 0) + 1;
  if (f.has('replicas')) {
    if (!spec.Mode?.Replicated && !spec.Mode?.ReplicatedJob)
      throw new Error('replicas can only be used with replicated or replicated-job mode');
    if (spec.Mode.Replicated) spec.Mode.Replicated.Replicas = f.int('replicas');
    else spec.Mode.ReplicatedJob.TotalCompletions = f.int('replicas');
  }
  spec.UpdateConfig = updatePolicy(f, 'update', spec.UpdateConfig);
  spec.RollbackConfig = updatePolicy(f, 'rollback', spec.RollbackConfig);
  // What is empty after the edits is left out, as the docker CLI's omitempty fields are.
  omitEmpty(c, [
    'Env',
    'Labels',
    'Groups',
    'CapabilityAdd',
    'CapabilityDrop',
    'Mounts',
    'Ulimits',
    'Hosts',
    'Secrets',
    'Configs',
    'Sysctls',
  ]);
  omitEmpty(dns, ['Nameservers', 'Search', 'Options']);
  omitEmpty(place, ['Constraints', 'Preferences']);
  omitEmpty(spec, ['Labels']);
  const ep = (spec.EndpointSpec ??= {}) as Obj;
  if (f.has('endpoint-mode')) ep.Mode = f.str('endpoint-mode');
  if (f.list('publish-add').length || f.list('publish-rm').length) {
    const rmKeys = f
      .list('publish-rm')
      .flatMap((p) => parsePublish(p.includes('/') || p.includes('=') ? p : p).map((x) => `${x.TargetPort}/${x.Protocol}`));
    const portKey = (p: Obj) => `${p.TargetPort}/${p.Protocol ?? 'tcp'}`;
    ep.Ports = edit(ep.Ports as Obj[], f.list('publish-add').flatMap(parsePublish), [], portKey).filter(
      (p) => !rmKeys.includes(portKey(p)),
    );
  }
}

/** An image reference with `:latest` added when it has neither tag nor digest, as the docker client sends it. */
export function withLatest(image: string): string {
  if (image.includes('@')) return image;
  return image.slice(image.lastIndexOf('/') + 1).includes(':') ? image : `${image}:latest`;
}
