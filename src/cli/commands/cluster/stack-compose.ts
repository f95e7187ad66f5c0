// A compose file as the objects `stack deploy` makes, converted as the docker CLI's stack
// converter does: every name scoped `<stack>_<name>` and labelled com.docker.stack.namespace;
// networks (overlay by default; `default` when a service names none), secrets and configs read
// from their files, and each service's spec (image, command, environment, ports, mounts,
// networks with the service's name as alias, secrets/configs by ID, deploy settings).
import { readFileSync } from 'node:fs';
import type { ScalarTag, Tags } from 'yaml';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../../args.ts';
import { parseBytes, parseDuration } from '../../run-options.ts';
import { capName, omitEmpty, parsePublish } from './service-spec.ts';
import { composeSchemaError, composeVersion } from './stack-schema.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

export const NAMESPACE_LABEL = 'com.docker.stack.namespace';
export const IMAGE_LABEL = 'com.docker.stack.image';

/** ${VAR}, ${VAR:-default}, ${VAR-default}, $VAR and $$ in every string of the file. */
export function interpolate(v: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof v === 'string')
    return v.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, name, op, def, bare) => {
      if (m === '$$') return '$';
      const key = (name ?? bare) as string;
      const val = env[key];
      if (op === ':-') return val ? val : def;
      if (op === '-') return val !== undefined ? val : def;
      return val ?? '';
    });
  if (Array.isArray(v)) return v.map((x) => interpolate(x, env));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, interpolate(x, env)]));
  return v;
}

// The service keys the docker CLI's compose loader refuses (before the schema check), and those
// `stack deploy` ignores with a warning.
const FORBIDDEN: Record<string, string> = {
  extends: 'Support for `extends` is not implemented yet.',
  volume_driver:
    'Instead of setting the volume driver on the service, define a volume using the top-level `volumes` option and specify the driver there.',
  volumes_from:
    'To share a volume between services, define it using the top-level `volumes` option and reference it from each service that shares it using the service-level `volumes` option.',
  cpu_quota: 'Set resource limits using deploy.resources',
  cpu_shares: 'Set resource limits using deploy.resources',
  cpuset: 'Set resource limits using deploy.resources',
  mem_limit: 'Set resource limits using deploy.resources',
  memswap_limit: 'Set resource limits using deploy.resources',
};
const UNSUPPORTED = [
  'build',
  'cgroupns_mode',
  'cgroup_parent',
  'devices',
  'domainname',
  'external_links',
  'ipc',
  'links',
  'mac_address',
  'network_mode',
  'pid',
  'privileged',
  'restart',
  'security_opt',
  'shm_size',
  'userns_mode',
];
const DEPRECATED: Record<string, string> = {
  container_name: 'Setting the container name is not supported.',
  expose: "Exposing ports is unnecessary - services on the same network can access each other's containers on any port.",
};

/** The services' mappings of a compose file (none when `services` is not a mapping). */
const serviceDicts = (doc: Obj): Obj[] =>
  doc.services && typeof doc.services === 'object' && !Array.isArray(doc.services)
    ? Object.values(doc.services as Obj).filter((x): x is Obj => !!x && typeof x === 'object' && !Array.isArray(x))
    : [];

/** Properties named with their explanation, as the docker CLI lists them: sorted, a blank line between. */
export const propertyWarnings = (props: Record<string, string>): string =>
  Object.entries(props)
    .map(([k, v]) => `${k}: ${v}`)
    .sort()
    .join('\n\n');

/** A compose file with service keys the loader refuses (`stack deploy` words it with their list). */
export class ForbiddenProperties extends Error {
  constructor(readonly properties: Record<string, string>) {
    super('Configuration contains forbidden properties');
  }
}

/** `stack deploy`'s warnings for the service keys it ignores, as the docker CLI prints them. */
export function ignoredWarnings(compose: Obj): string {
  const services = serviceDicts(compose);
  const unsupported = UNSUPPORTED.filter((k) => services.some((s) => Object.hasOwn(s, k)));
  const deprecated = Object.fromEntries(Object.entries(DEPRECATED).filter(([k]) => services.some((s) => Object.hasOwn(s, k))));
  return (
    (unsupported.length ? `Ignoring unsupported options: ${unsupported.join(', ')}\n\n` : '') +
    (Object.keys(deprecated).length ? `Ignoring deprecated options:\n\n${propertyWarnings(deprecated)}\n\n` : '')
  );
}

/**
 * YAML 1.1's float without a digit read as a string, as the docker CLI's YAML decoder reads it: the
 * 1.1 pattern lets `.` (a build context) through as NaN.
 */
const digitFloats = (tags: Tags): Tags =>
  tags.map((t) =>
    typeof t === 'object' && 'test' in t && t.tag === 'tag:yaml.org,2002:float' && t.test?.source === '^[-+]?(?:[0-9][0-9_]*)?\\.[0-9_]*$'
      ? ({ ...t, test: /^[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9][0-9_]*)$/ } as ScalarTag)
      : t,
  );

/** Reads and merges compose files (later files override earlier keys), YAML 1.1 as compose reads it (0440 is octal). */
export async function loadCompose(files: { path: string; text: string }[], env: NodeJS.ProcessEnv | null): Promise<Obj> {
  // Loaded on use: the YAML parser is most of the weight of these commands, and `engine ps` need not start it.
  const { parse: parseYaml } = await import('yaml');
  let merged: Obj = {};
  let version: string | undefined;
  for (const f of files) {
    const doc = parseYaml(f.text, { version: '1.1', customTags: digitFloats }) as Obj | null;
    if (!doc || typeof doc !== 'object') throw new Error(`Top-level object must be a mapping`);
    // The first file's version is the one every file must declare, read before interpolation.
    const declared = composeVersion(doc);
    version ??= declared;
    if (declared !== version) throw new Error(`version mismatched between two composefiles : ${version} and ${declared}`);
    const forbidden = Object.fromEntries(Object.entries(FORBIDDEN).filter(([k]) => serviceDicts(doc).some((s) => Object.hasOwn(s, k))));
    if (Object.keys(forbidden).length) throw new ForbiddenProperties(forbidden);
    const file = env ? (interpolate(doc, env) as Obj) : doc;
    // Each file is checked against its version's compose schema once interpolated, as the docker CLI does.
    const refused = composeSchemaError(file, version);
    if (refused) throw new Error(refused);
    merged = mergeDeep(merged, file);
  }
  if (!merged.services || typeof merged.services !== 'object') throw new Error('no services defined in the compose file');
  return merged;
}

function mergeDeep(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && out[k] && typeof out[k] === 'object' && !Array.isArray(out[k])
        ? mergeDeep(out[k], v)
        : v;
  return out;
}

export class Namespace {
  constructor(readonly name: string) {}
  scope(n: string): string {
    return `${this.name}_${n}`;
  }
  labels(extra: Record<string, string> = {}): Record<string, string> {
    return { ...extra, [NAMESPACE_LABEL]: this.name };
  }
}

/** Labels as a map whether written as a map or a `k=v` list. */
function labelMap(l: unknown): Record<string, string> {
  if (!l) return {};
  if (Array.isArray(l))
    return Object.fromEntries(
      l.map((kv: string) => {
        const eq = String(kv).indexOf('=');
        return eq < 0 ? [kv, ''] : [kv.slice(0, eq), kv.slice(eq + 1)];
      }),
    );
  return Object.fromEntries(Object.entries(l as Obj).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

const durationNs = (v: unknown) => (v === undefined || v === null ? undefined : typeof v === 'number' ? v * 1e9 : parseDuration(String(v)));

export interface StackNetwork {
  name: string;
  spec: Obj;
}

/** The networks to create and the external ones to check (by name). */
export function convertNetworks(ns: Namespace, compose: Obj): { create: StackNetwork[]; external: string[] } {
  const used = new Set<string>();
  for (const svc of Object.values((compose.services ?? {}) as Obj)) {
    const nets = (svc as Obj).networks;
    const names = Array.isArray(nets) ? nets : nets ? Object.keys(nets) : [];
    if (!names.length) used.add('default');
    for (const n of names) used.add(String(n));
  }
  const create: StackNetwork[] = [];
  const external: string[] = [];
  for (const key of [...used].sort()) {
    const n = ((compose.networks ?? {}) as Obj)[key] ?? {};
    if (n.external) {
      external.push(String(n.name || (typeof n.external === 'object' && n.external.name) || key));
      continue;
    }
    if (!(key in ((compose.networks ?? {}) as Obj)) && key !== 'default')
      throw new Error(`service refers to undefined network ${key}: invalid compose project`);
    const name = n.name ? String(n.name) : ns.scope(key);
    create.push({
      name,
      spec: {
        Name: name,
        Driver: n.driver ?? 'overlay',
        Options: n.driver_opts ? labelMap(n.driver_opts) : {},
        Labels: ns.labels(labelMap(n.labels)),
        Attachable: !!n.attachable,
        Internal: !!n.internal,
        Scope: 'swarm',
        ...(n.ipam
          ? { IPAM: { Driver: n.ipam.driver ?? 'default', Config: ((n.ipam.config ?? []) as Obj[]).map((c) => ({ Subnet: c.subnet })) } }
          : {}),
      },
    });
  }
  return { create, external };
}

export interface StackFileObject {
  key: string;
  name: string;
  external: boolean;
  spec?: Obj;
}

/** Top-level secrets or configs: specs read from their files, or external names to look up. */
export function convertFileObjects(ns: Namespace, compose: Obj, kind: 'secrets' | 'configs', dir: string): StackFileObject[] {
  return Object.entries((compose[kind] ?? {}) as Obj).map(([key, o]: [string, Obj]) => {
    o ??= {};
    if (o.external) return { key, name: String(o.name || (typeof o.external === 'object' && o.external.name) || key), external: true };
    const name = o.name ? String(o.name) : ns.scope(key);
    let data: Buffer;
    if (o.file) data = readFileSync(isAbsolute(o.file) ? o.file : resolve(dir, o.file));
    else if (o.environment !== undefined) data = Buffer.from(process.env[o.environment] ?? '');
    else if (o.content !== undefined) data = Buffer.from(String(o.content));
    else throw new Error(`${kind.slice(0, -1)} ${key}: file, environment or content is required`);
    const spec: Obj = { Name: name, Labels: ns.labels(labelMap(o.labels)), Data: data.toString('base64') };
    if (o.template_driver) spec.Templating = { Name: o.template_driver };
    if (o.driver) spec.Driver = { Name: o.driver, Options: labelMap(o.driver_opts) };
    return { key, name, external: false, spec };
  });
}

function envList(env: unknown): string[] {
  if (!env) return [];
  const list = Array.isArray(env)
    ? env.map(String)
    : Object.entries(env as Obj).map(([k, v]) => (v === null || v === undefined ? k : `${k}=${v}`));
  return list.sort();
}

function cmdList(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map(String);
  return (
    String(v)
      .match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g)
      ?.map((s) => s.replace(/^["']|["']$/g, '')) ?? []
  );
}

function ports(list: unknown): Obj[] {
  return ((list ?? []) as unknown[]).flatMap((p) => {
    if (typeof p === 'object' && p) {
      const o = p as Obj;
      return [
        {
          Protocol: o.protocol ?? 'tcp',
          TargetPort: Number(o.target),
          PublishedPort: o.published ? Number(o.published) : undefined,
          PublishMode: o.mode ?? 'ingress',
        },
      ];
    }
    return parsePublish(String(p).replace(/^[\d.]+:(?=\d+:)/, ''));
  });
}

function mounts(ns: Namespace, compose: Obj, list: unknown, dir: string): Obj[] {
  return ((list ?? []) as unknown[]).map((v) => {
    if (typeof v === 'object' && v) {
      const o = v as Obj;
      const named = (o.type ?? 'volume') === 'volume' && o.source && o.source in (compose.volumes ?? {});
      return {
        Type: o.type ?? 'volume',
        ...(o.source !== undefined
          ? { Source: named ? volumeName(ns, compose, o.source) : o.type === 'bind' ? resolve(dir, o.source) : o.source }
          : {}),
        Target: o.target,
        ...(o.read_only ? { ReadOnly: true } : {}),
        ...(named ? volumeOptions(ns, compose, o.source) : {}),
      };
    }
    const [src, dst, mode] = String(v).split(':') as [string, string?, string?];
    if (dst === undefined) return { Type: 'volume', Target: src };
    const bind = src.startsWith('/') || src.startsWith('.') || src.startsWith('~');
    return {
      Type: bind ? 'bind' : 'volume',
      Source: bind ? resolve(dir, src) : volumeName(ns, compose, src),
      Target: dst,
      ...(mode?.split(',').includes('ro') ? { ReadOnly: true } : {}),
      ...(bind ? {} : volumeOptions(ns, compose, src)),
    };
  });
}

/** A stack volume's options on its mounts: its labels (with the namespace) and driver, unless external. */
function volumeOptions(ns: Namespace, compose: Obj, key: string): Obj {
  const v = ((compose.volumes ?? {}) as Obj)[key];
  if (!v && !(key in ((compose.volumes ?? {}) as Obj))) return {};
  if (v?.external) return {};
  return {
    VolumeOptions: {
      Labels: ns.labels(labelMap(v?.labels)),
      ...(v?.driver || v?.driver_opts ? { DriverConfig: { Name: v.driver ?? '', Options: labelMap(v.driver_opts) } } : {}),
    },
  };
}

function ulimits(u: Obj | undefined): Obj[] | undefined {
  if (!u) return undefined;
  return Object.entries(u)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([Name, v]) =>
      typeof v === 'object' && v ? { Name, Soft: Number(v.soft), Hard: Number(v.hard) } : { Name, Soft: Number(v), Hard: Number(v) },
    );
}

function volumeName(ns: Namespace, compose: Obj, key: string): string {
  const v = ((compose.volumes ?? {}) as Obj)[key];
  if (v?.external) return String(v.name ?? key);
  return v?.name ? String(v.name) : ns.scope(key);
}

function restartPolicy(svc: Obj): Obj | undefined {
  const rp = svc.deploy?.restart_policy;
  if (rp)
    return {
      ...(rp.condition ? { Condition: rp.condition } : {}),
      ...(rp.delay !== undefined ? { Delay: durationNs(rp.delay) } : {}),
      ...(rp.max_attempts !== undefined ? { MaxAttempts: Number(rp.max_attempts) } : {}),
      ...(rp.window !== undefined ? { Window: durationNs(rp.window) } : {}),
    };
  const r = svc.restart as string | undefined;
  if (!r) return undefined;
  if (r === 'no') return { Condition: 'none' };
  if (r === 'always' || r === 'unless-stopped') return { Condition: 'any' };
  const m = /^on-failure(?::(\d+))?$/.exec(r);
  if (m) return { Condition: 'on-failure', ...(m[1] ? { MaxAttempts: Number(m[1]) } : {}) };
  throw new UsageError(`unknown restart policy: ${r}`);
}

function updateConfig(u: Obj | undefined): Obj | undefined {
  if (!u) return undefined;
  return {
    Parallelism: u.parallelism ?? 1,
    ...(u.delay !== undefined ? { Delay: durationNs(u.delay) } : {}),
    FailureAction: u.failure_action ?? '',
    ...(u.monitor !== undefined ? { Monitor: durationNs(u.monitor) } : {}),
    MaxFailureRatio: u.max_failure_ratio ?? 0,
    Order: u.order ?? '',
  };
}

function resources(r: Obj | undefined): Obj {
  const out: Obj = {};
  const cpu = (v: unknown) => Math.round(Number(v) * 1e9);
  const mem = (v: unknown) => (typeof v === 'number' ? v : parseBytes(String(v)));
  if (r?.limits)
    out.Limits = {
      ...(r.limits.cpus !== undefined ? { NanoCPUs: cpu(r.limits.cpus) } : {}),
      ...(r.limits.memory !== undefined ? { MemoryBytes: mem(r.limits.memory) } : {}),
      ...(r.limits.pids !== undefined ? { Pids: Number(r.limits.pids) } : {}),
    };
  if (r?.reservations)
    out.Reservations = {
      ...(r.reservations.cpus !== undefined ? { NanoCPUs: cpu(r.reservations.cpus) } : {}),
      ...(r.reservations.memory !== undefined ? { MemoryBytes: mem(r.reservations.memory) } : {}),
    };
  return out;
}

function healthcheck(h: Obj | undefined): Obj | undefined {
  if (!h) return undefined;
  if (h.disable) return { Test: ['NONE'] };
  const test = typeof h.test === 'string' ? ['CMD-SHELL', h.test] : h.test;
  return {
    ...(test ? { Test: test } : {}),
    ...(h.interval !== undefined ? { Interval: durationNs(h.interval) } : {}),
    ...(h.timeout !== undefined ? { Timeout: durationNs(h.timeout) } : {}),
    ...(h.retries !== undefined ? { Retries: Number(h.retries) } : {}),
    ...(h.start_period !== undefined ? { StartPeriod: durationNs(h.start_period) } : {}),
    ...(h.start_interval !== undefined ? { StartInterval: durationNs(h.start_interval) } : {}),
  };
}

/** name → ID of the stack's secrets and configs (and external ones), for the services' references. */
export interface FileObjectIds {
  secrets: Map<string, { id: string; name: string }>;
  configs: Map<string, { id: string; name: string }>;
}

function fileRefs(svcRefs: unknown, kind: 'secrets' | 'configs', ids: FileObjectIds): Obj[] {
  return ((svcRefs ?? []) as unknown[]).map((r) => {
    const o: Obj = typeof r === 'string' ? { source: r } : (r as Obj);
    const hit = ids[kind].get(String(o.source));
    if (!hit) throw new Error(`undefined ${kind.slice(0, -1)} "${o.source}"`);
    const defaultTarget = kind === 'configs' ? `/${o.source}` : String(o.source);
    const key = kind === 'secrets' ? 'Secret' : 'Config';
    return {
      File: { Name: o.target ?? defaultTarget, UID: String(o.uid ?? '0'), GID: String(o.gid ?? '0'), Mode: o.mode ?? 0o444 },
      [`${key}ID`]: hit.id,
      [`${key}Name`]: hit.name,
    };
  });
}

/** The ServiceSpec of each compose service, by its name in the file. */
export function convertServices(
  ns: Namespace,
  compose: Obj,
  dir: string,
  networkIds: Map<string, string>,
  ids: FileObjectIds,
): Map<string, Obj> {
  const out = new Map<string, Obj>();
  for (const [key, svc] of Object.entries((compose.services ?? {}) as Obj) as [string, Obj][]) {
    if (!svc.image) throw new Error(`service ${key}: image is required for a stack service`);
    const d = (svc.deploy ?? {}) as Obj;
    const nets = Array.isArray(svc.networks)
      ? Object.fromEntries(svc.networks.map((n: string) => [n, null]))
      : (svc.networks ?? { default: null });
    const networks = Object.entries(nets as Obj)
      .map(([n, cfg]) => {
        const netDef = ((compose.networks ?? {}) as Obj)[n] ?? {};
        const netName = netDef.external ? String(netDef.name ?? n) : netDef.name ? String(netDef.name) : ns.scope(n);
        return { Target: networkIds.get(netName) ?? netName, Aliases: [key, ...((cfg as Obj | null)?.aliases ?? [])] };
      })
      .sort((a, b) => (a.Target < b.Target ? -1 : 1));
    const mode = d.mode ?? 'replicated';
    const health = healthcheck(svc.healthcheck);
    const grace = durationNs(svc.stop_grace_period);
    const p = ports(svc.ports);
    const spec: Obj = {
      Name: ns.scope(key),
      Labels: ns.labels({ ...labelMap(d.labels), [IMAGE_LABEL]: String(svc.image) }),
      TaskTemplate: {
        ContainerSpec: {
          Image: String(svc.image),
          ...(cmdList(svc.entrypoint) ? { Command: cmdList(svc.entrypoint) } : {}),
          ...(cmdList(svc.command) ? { Args: cmdList(svc.command) } : {}),
          ...(svc.hostname ? { Hostname: svc.hostname } : {}),
          Env: envList(svc.environment),
          Labels: ns.labels(labelMap(svc.labels)),
          ...(svc.working_dir ? { Dir: svc.working_dir } : {}),
          ...(svc.user ? { User: String(svc.user) } : {}),
          Mounts: mounts(ns, compose, svc.volumes, dir),
          ...(grace !== undefined ? { StopGracePeriod: grace } : {}),
          ...(svc.stop_signal ? { StopSignal: svc.stop_signal } : {}),
          TTY: !!svc.tty,
          OpenStdin: !!svc.stdin_open,
          ReadOnly: !!svc.read_only,
          ...(svc.init !== undefined ? { Init: !!svc.init } : {}),
          ...(health ? { Healthcheck: health } : {}),
          ...(svc.dns || svc.dns_search
            ? { DNSConfig: { Nameservers: [svc.dns ?? []].flat(), Search: [svc.dns_search ?? []].flat() } }
            : {}),
          ...(svc.extra_hosts ? { Hosts: ([svc.extra_hosts].flat() as string[]).map((h) => h.replace(/^([^:]+):(.*)$/, '$2 $1')) } : {}),
          ...(svc.cap_add ? { CapabilityAdd: (svc.cap_add as string[]).map(capName) } : {}),
          ...(svc.cap_drop ? { CapabilityDrop: (svc.cap_drop as string[]).map(capName) } : {}),
          ...(svc.ulimits ? { Ulimits: ulimits(svc.ulimits) } : {}),
          ...(svc.sysctls ? { Sysctls: labelMap(svc.sysctls) } : {}),
          Privileges: { NoNewPrivileges: !!svc.security_opt?.includes?.('no-new-privileges:true') },
          Secrets: fileRefs(svc.secrets, 'secrets', ids),
          Configs: fileRefs(svc.configs, 'configs', ids),
        },
        Networks: networks,
        Resources: resources(d.resources),
        ...(restartPolicy(svc) ? { RestartPolicy: restartPolicy(svc) } : {}),
        Placement: {
          ...(d.placement?.constraints ? { Constraints: d.placement.constraints } : {}),
          ...(d.placement?.preferences
            ? { Preferences: (d.placement.preferences as Obj[]).map((x) => ({ Spread: { SpreadDescriptor: x.spread } })) }
            : {}),
          ...(d.placement?.max_replicas_per_node ? { MaxReplicas: Number(d.placement.max_replicas_per_node) } : {}),
        },
        ...(svc.logging ? { LogDriver: { Name: svc.logging.driver, Options: labelMap(svc.logging.options) } } : {}),
      },
      Mode:
        mode === 'global'
          ? { Global: {} }
          : mode === 'replicated-job'
            ? { ReplicatedJob: { MaxConcurrent: d.replicas ?? 1, TotalCompletions: d.replicas ?? 1 } }
            : mode === 'global-job'
              ? { GlobalJob: {} }
              : { Replicated: { Replicas: d.replicas ?? 1 } },
      ...(updateConfig(d.update_config) ? { UpdateConfig: updateConfig(d.update_config) } : {}),
      ...(updateConfig(d.rollback_config) ? { RollbackConfig: updateConfig(d.rollback_config) } : {}),
      EndpointSpec: { Mode: d.endpoint_mode ?? 'vip', ...(p.length ? { Ports: p } : {}) },
    };
    omitEmpty(spec.TaskTemplate.ContainerSpec, ['Env', 'Mounts', 'TTY', 'OpenStdin', 'ReadOnly', 'Secrets', 'Configs']);
    omitEmpty(spec.TaskTemplate, ['Networks']);
    out.set(key, spec);
  }
  return out;
}

const sortKeys = (o: Obj): Obj => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** The merged file as `stack config` prints it (docker's loader's shape): services by name with sorted keys, commands as lists, short forms spelled out, file paths absolute. */
export function normalizedCompose(compose: Obj, dir: string): Obj {
  const services: Obj = {};
  for (const name of Object.keys((compose.services ?? {}) as Obj).sort()) {
    const svc: Obj = { ...(compose.services[name] as Obj) };
    for (const k of ['command', 'entrypoint']) if (typeof svc[k] === 'string') svc[k] = cmdList(svc[k]);
    if (Array.isArray(svc.networks)) svc.networks = Object.fromEntries(svc.networks.map((n: string) => [n, null]));
    for (const k of ['secrets', 'configs'])
      if (Array.isArray(svc[k])) svc[k] = svc[k].map((r: unknown) => (typeof r === 'string' ? { source: r } : r));
    if (Array.isArray(svc.environment)) {
      svc.environment = Object.fromEntries(
        (svc.environment as string[]).map((kv) => {
          const eq = kv.indexOf('=');
          return eq < 0 ? [kv, null] : [kv.slice(0, eq), kv.slice(eq + 1)];
        }),
      );
    }
    if (svc.environment && typeof svc.environment === 'object') svc.environment = sortKeys(svc.environment);
    if (Array.isArray(svc.labels)) svc.labels = sortKeys(labelMap(svc.labels));
    services[name] = sortKeys(svc);
  }
  const files = (kind: 'secrets' | 'configs') =>
    compose[kind]
      ? Object.fromEntries(
          Object.entries(compose[kind] as Obj).map(([k, o]: [string, Obj]) => [
            k,
            o?.file ? { ...o, file: isAbsolute(o.file) ? o.file : resolve(dir, o.file) } : o,
          ]),
        )
      : undefined;
  const out: Obj = { version: composeVersion(compose), services };
  for (const [k, v] of [
    ['networks', compose.networks],
    ['volumes', compose.volumes],
    ['secrets', files('secrets')],
    ['configs', files('configs')],
  ] as const)
    if (v) out[k] = v;
  return out;
}
