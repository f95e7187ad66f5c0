// A managed plugin's config (`application/vnd.docker.plugin.v1+json`): read and checked from JSON
// (config.json of `docker plugin create`, or the registry's config blob), the privileges it asks
// for, the settings it starts with, `docker plugin set` against what the config allows, and the
// plugin-protocol interfaces its capabilities stand for.
import { invalidParameter } from '../../errors.ts';
import { canonicalPluginConfig } from './config-schema.ts';
import type { PluginConfig, PluginDeviceSpec, PluginMountSpec, PluginPrivilege, PluginSettings } from '../../types/plugins.ts';

/** The media types of a plugin in a registry. */
export const PLUGIN_CONFIG_MEDIA_TYPE = 'application/vnd.docker.plugin.v1+json';
export const LAYER_MEDIA_TYPE = 'application/vnd.docker.image.rootfs.diff.tar.gzip';
export const MANIFEST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.v2+json';

/** Where a managed plugin finds its socket directory (dockerd's path, which plugins are built for). */
export const PLUGIN_SOCKET_DIR_IN_CONTAINER = '/run/docker/plugins';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strList = (v: unknown, what: string): string[] | null => {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw invalidParameter(`invalid plugin config: ${what} must be a list of strings`);
  return v as string[];
};
const str = (v: unknown, what: string): string => {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw invalidParameter(`invalid plugin config: ${what} must be a string`);
  return v;
};

/** "docker.volumedriver/1.0" (or dockerd's object form) → the string form. */
function interfaceType(t: unknown): string {
  if (typeof t === 'string' && /^[^./]+\.[^/]+\/.+$/.test(t)) return t;
  if (isObj(t) && typeof t['Prefix'] === 'string' && typeof t['Capability'] === 'string' && typeof t['Version'] === 'string')
    return `${t['Prefix']}.${t['Capability']}/${t['Version']}`;
  throw invalidParameter(`invalid plugin config: interface type ${JSON.stringify(t)} is not of the form "prefix.capability/version"`);
}

export function parseInterfaceType(t: string): { prefix: string; capability: string; version: string } {
  const m = /^([^.]+)\.([^/]+)\/(.+)$/.exec(t)!;
  return { prefix: m[1]!, capability: m[2]!, version: m[3]! };
}

/** Parses and checks a plugin config; fills dockerd's defaults for absent fields. */
export function parsePluginConfig(input: unknown): PluginConfig {
  if (!isObj(input)) throw invalidParameter('invalid plugin config: not a JSON object');
  // As Go reads it: keys in any case, canonical names from here on.
  const raw = canonicalPluginConfig(input);
  const iface = isObj(raw['Interface']) ? raw['Interface'] : undefined;
  if (!iface) throw invalidParameter('invalid plugin config: Interface is missing');
  const types = Array.isArray(iface['Types']) ? iface['Types'].map(interfaceType) : [];
  if (!types.length) throw invalidParameter('invalid plugin config: Interface.Types is empty');
  const socket = str(iface['Socket'], 'Interface.Socket');
  if (!socket || socket.includes('/')) throw invalidParameter('invalid plugin config: Interface.Socket must be a file name');
  const linux = isObj(raw['Linux']) ? raw['Linux'] : {};
  const args = isObj(raw['Args']) ? raw['Args'] : {};
  const user = isObj(raw['User']) ? raw['User'] : {};
  const mounts = Array.isArray(raw['Mounts'])
    ? raw['Mounts'].map((m, i): PluginMountSpec => {
        if (!isObj(m) || typeof m['Destination'] !== 'string' || !m['Destination'].startsWith('/'))
          throw invalidParameter(`invalid plugin config: Mounts[${i}] needs an absolute Destination`);
        return {
          Name: str(m['Name'], 'Mounts.Name'),
          Description: str(m['Description'], 'Mounts.Description'),
          Settable: strList(m['Settable'], 'Mounts.Settable'),
          Source: typeof m['Source'] === 'string' ? m['Source'] : null,
          Destination: m['Destination'],
          Type: str(m['Type'], 'Mounts.Type') || 'bind',
          Options: strList(m['Options'], 'Mounts.Options'),
        };
      })
    : null;
  const devices = Array.isArray(linux['Devices'])
    ? linux['Devices'].map((d): PluginDeviceSpec => {
        if (!isObj(d)) throw invalidParameter('invalid plugin config: Linux.Devices entries must be objects');
        return {
          Name: str(d['Name'], 'Devices.Name'),
          Description: str(d['Description'], 'Devices.Description'),
          Settable: strList(d['Settable'], 'Devices.Settable'),
          Path: typeof d['Path'] === 'string' ? d['Path'] : null,
        };
      })
    : null;
  const env = Array.isArray(raw['Env'])
    ? raw['Env'].map((e) => {
        if (!isObj(e) || typeof e['Name'] !== 'string' || !e['Name'])
          throw invalidParameter('invalid plugin config: Env entries need a Name');
        return {
          Name: e['Name'],
          Description: str(e['Description'], 'Env.Description'),
          Settable: strList(e['Settable'], 'Env.Settable'),
          Value: typeof e['Value'] === 'string' ? e['Value'] : null,
        };
      })
    : null;
  const propagated = str(raw['PropagatedMount'], 'PropagatedMount');
  if (propagated && !propagated.startsWith('/')) throw invalidParameter('invalid plugin config: PropagatedMount must be an absolute path');
  const rootfs = isObj(raw['rootfs'])
    ? { type: str(raw['rootfs']['type'], 'rootfs.type') || 'layers', diff_ids: strList(raw['rootfs']['diff_ids'], 'rootfs.diff_ids') ?? [] }
    : undefined;
  return {
    Description: str(raw['Description'], 'Description'),
    Documentation: str(raw['Documentation'], 'Documentation'),
    ...(typeof raw['DockerVersion'] === 'string' ? { DockerVersion: raw['DockerVersion'] } : {}),
    Interface: {
      Types: types,
      Socket: socket,
      ...(typeof iface['ProtocolScheme'] === 'string' && iface['ProtocolScheme'] ? { ProtocolScheme: iface['ProtocolScheme'] } : {}),
    },
    Entrypoint: strList(raw['Entrypoint'], 'Entrypoint'),
    WorkDir: str(raw['WorkDir'], 'WorkDir'),
    User: {
      ...(typeof user['UID'] === 'number' ? { UID: user['UID'] } : {}),
      ...(typeof user['GID'] === 'number' ? { GID: user['GID'] } : {}),
    },
    Network: { Type: isObj(raw['Network']) ? str(raw['Network']['Type'], 'Network.Type') : '' },
    Linux: {
      Capabilities: strList(linux['Capabilities'], 'Linux.Capabilities'),
      AllowAllDevices: linux['AllowAllDevices'] === true,
      Devices: devices,
    },
    PropagatedMount: propagated,
    IpcHost: raw['IpcHost'] === true,
    PidHost: raw['PidHost'] === true,
    Mounts: mounts,
    Env: env,
    Args: {
      Name: str(args['Name'], 'Args.Name'),
      Description: str(args['Description'], 'Args.Description'),
      Settable: strList(args['Settable'], 'Args.Settable'),
      Value: strList(args['Value'], 'Args.Value'),
    },
    ...(rootfs ? { rootfs } : {}),
  };
}

/** What installing the plugin grants it, in dockerd's words and order. */
export function computePrivileges(c: PluginConfig): PluginPrivilege[] {
  const out: PluginPrivilege[] = [];
  if (c.Network.Type && c.Network.Type !== 'null' && c.Network.Type !== 'bridge')
    out.push({ Name: 'network', Description: 'permissions to access a network', Value: [c.Network.Type] });
  if (c.IpcHost) out.push({ Name: 'host ipc namespace', Description: 'allow access to host ipc namespace', Value: ['true'] });
  if (c.PidHost) out.push({ Name: 'host pid namespace', Description: 'allow access to host pid namespace', Value: ['true'] });
  for (const m of c.Mounts ?? []) if (m.Source) out.push({ Name: 'mount', Description: 'host path to mount', Value: [m.Source] });
  for (const d of c.Linux.Devices ?? []) if (d.Path) out.push({ Name: 'device', Description: 'host device to access', Value: [d.Path] });
  if (c.Linux.AllowAllDevices) out.push({ Name: 'allow-all-devices', Description: "allow 'rwm' access to all devices", Value: ['true'] });
  if (c.Linux.Capabilities?.length)
    out.push({ Name: 'capabilities', Description: 'list of additional capabilities required', Value: c.Linux.Capabilities });
  return out;
}

/** The privileges a pull request accepted must be exactly those the plugin needs (names and values). */
export function checkPrivileges(required: PluginPrivilege[], accepted: unknown): void {
  const list = Array.isArray(accepted) ? accepted : accepted === null || accepted === undefined ? [] : undefined;
  if (!list) throw invalidParameter('invalid privileges: expected a list of {"Name","Description","Value"}');
  const key = (p: { Name?: unknown; Value?: unknown }) =>
    `${String(p.Name)}=${JSON.stringify([...(Array.isArray(p.Value) ? p.Value : [])].map(String).sort())}`;
  const want = required.map(key).sort();
  const got = list.map((p) => key(isObj(p) ? p : {})).sort();
  if (want.length !== got.length || want.some((w, i) => w !== got[i])) {
    throw invalidParameter(
      'incorrect privileges: the plugin needs ' +
        (required.length ? required.map((p) => `${p.Name} [${p.Value.join(' ')}]`).join(', ') : 'none') +
        '; accept them (docker plugin install --grant-all-permissions) or ask for them with GET /plugins/privileges',
    );
  }
}

/** The settings a new plugin starts with: the config's defaults. */
export function initialSettings(c: PluginConfig): PluginSettings {
  return {
    Mounts: (c.Mounts ?? []).map((m) => ({ ...m })),
    Devices: (c.Linux.Devices ?? []).map((d) => ({ ...d })),
    Env: (c.Env ?? []).filter((e) => typeof e.Value === 'string').map((e) => `${e.Name}=${e.Value}`),
    Args: [...(c.Args.Value ?? [])],
  };
}

const ALLOWED = { env: ['value'], mount: ['source'], device: ['path'], args: ['value'] } as const;

/** `docker plugin set name=value|name.field=value …`: only what the config marks settable. */
export function applySettings(c: PluginConfig, current: PluginSettings, args: string[]): PluginSettings {
  const next: PluginSettings = {
    Mounts: current.Mounts.map((m) => ({ ...m })),
    Devices: current.Devices.map((d) => ({ ...d })),
    Env: [...current.Env],
    Args: [...current.Args],
  };
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw invalidParameter(`invalid setting ${JSON.stringify(arg)}: must be of the form name=value or name.field=value`);
    const key = arg.slice(0, eq);
    const value = arg.slice(eq + 1);
    const dot = key.indexOf('.');
    const name = dot < 0 ? key : key.slice(0, dot);
    const field = dot < 0 ? '' : key.slice(dot + 1);
    const pretty = field ? `${name}.${field}` : name;
    const settable = (kind: keyof typeof ALLOWED, list: string[] | null | undefined): void => {
      let f = field;
      const s = list ?? [];
      if (!f) {
        if (s.length > 1)
          throw invalidParameter(
            `${JSON.stringify(name)} has several settable fields (${s.join(', ')}): name one, as ${name}.<field>=value`,
          );
        f = s[0] ?? '';
      }
      if (!(ALLOWED[kind] as readonly string[]).includes(f) || !s.includes(f))
        throw invalidParameter(`${JSON.stringify(pretty)} is not settable`);
    };
    const env = (c.Env ?? []).find((e) => e.Name === name);
    if (env) {
      settable('env', env.Settable);
      const i = next.Env.findIndex((e) => e.startsWith(`${name}=`));
      if (i >= 0) next.Env[i] = `${name}=${value}`;
      else next.Env.push(`${name}=${value}`);
      continue;
    }
    const mi = (c.Mounts ?? []).findIndex((m) => m.Name === name);
    if (mi >= 0) {
      settable('mount', c.Mounts![mi]!.Settable);
      next.Mounts[mi] = { ...next.Mounts[mi]!, Source: value };
      continue;
    }
    const di = (c.Linux.Devices ?? []).findIndex((d) => d.Name === name);
    if (di >= 0) {
      settable('device', c.Linux.Devices![di]!.Settable);
      next.Devices[di] = { ...next.Devices[di]!, Path: value };
      continue;
    }
    if (c.Args.Name && c.Args.Name === name) {
      settable('args', c.Args.Settable);
      next.Args = value.split(' ');
      continue;
    }
    throw invalidParameter(`setting ${JSON.stringify(name)} not found in the plugin configuration`);
  }
  return next;
}

/** Plugin-protocol interface names (Plugin.Activate's `Implements`) of the config's capabilities. */
const IMPLEMENTS: Record<string, string> = {
  volumedriver: 'VolumeDriver',
  authz: 'authz',
  logdriver: 'LogDriver',
  networkdriver: 'NetworkDriver',
  ipamdriver: 'IpamDriver',
  metricscollector: 'MetricsCollector',
  csinode: 'csinode',
  csicontroller: 'csicontroller',
};

export function implementsOf(c: PluginConfig): string[] {
  return c.Interface.Types.map(parseInterfaceType)
    .filter((t) => t.prefix === 'docker')
    .map((t) => IMPLEMENTS[t.capability.toLowerCase()] ?? t.capability);
}

export function capabilitiesOf(c: PluginConfig): string[] {
  return c.Interface.Types.map((t) => parseInterfaceType(t).capability.toLowerCase());
}
