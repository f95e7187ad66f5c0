// Type checking of the container-create JSON body the way Go's encoding/json decodes it into
// dockerd's structs: wrong JSON types are refused with a Go-style message naming the field, nulls
// mean "not set" (dropped here), a string where a StrSlice is expected becomes a one-element list,
// and field names match case-insensitively when there is no exact match.

import { invalidParameter } from '../errors.ts';

type Scalar = 'string' | 'bool' | 'int' | 'int64' | 'uint16' | 'uint32' | 'uint64' | 'float32' | 'float64' | 'any';

export type Kind =
  | Scalar
  | { strslice: true }
  | { array: Kind; goType: string }
  | { map: Kind; goType: string }
  | { struct: Record<string, Kind>; goType: string };

const str: Kind = 'string';
const bool: Kind = 'bool';
const int: Kind = 'int';
const int64: Kind = 'int64';
const uint16: Kind = 'uint16';
const uint32: Kind = 'uint32';
const uint64: Kind = 'uint64';
const strslice: Kind = { strslice: true };
const strings: Kind = { array: 'string', goType: '[]string' };
const stringMap: Kind = { map: 'string', goType: 'map[string]string' };
const emptySet: Kind = { map: 'any', goType: 'map[string]struct {}' };
const struct = (goType: string, fields: Record<string, Kind>): Kind => ({ struct: fields, goType });
const arrayOf = (item: Kind, goType: string): Kind => ({ array: item, goType });

export const HEALTH_CONFIG: Kind = struct('container.HealthConfig', {
  Test: strings,
  Interval: int64,
  Timeout: int64,
  Retries: int,
  StartPeriod: int64,
  StartInterval: int64,
});

const throttleDevices = arrayOf(struct('blkiodev.ThrottleDevice', { Path: str, Rate: uint64 }), '[]*blkiodev.ThrottleDevice');

export const MOUNT_KIND: Kind = struct('mount.Mount', {
  Type: str,
  Source: str,
  Target: str,
  ReadOnly: bool,
  Consistency: str,
  BindOptions: struct('mount.BindOptions', {
    Propagation: str,
    NonRecursive: bool,
    CreateMountpoint: bool,
    ReadOnlyNonRecursive: bool,
    ReadOnlyForceRecursive: bool,
  }),
  VolumeOptions: struct('mount.VolumeOptions', {
    NoCopy: bool,
    Labels: stringMap,
    Subpath: str,
    DriverConfig: struct('mount.Driver', { Name: str, Options: stringMap }),
  }),
  ImageOptions: struct('mount.ImageOptions', { Subpath: str }),
  TmpfsOptions: struct('mount.TmpfsOptions', {
    SizeBytes: int64,
    Mode: uint32,
    Options: arrayOf(strings, '[][]string'),
  }),
});

const hostConfigFields: Record<string, Kind> = {
  // Resources
  CpuShares: int64,
  Memory: int64,
  CgroupParent: str,
  BlkioWeight: uint16,
  BlkioWeightDevice: arrayOf(struct('blkiodev.WeightDevice', { Path: str, Weight: uint16 }), '[]*blkiodev.WeightDevice'),
  BlkioDeviceReadBps: throttleDevices,
  BlkioDeviceWriteBps: throttleDevices,
  BlkioDeviceReadIOps: throttleDevices,
  BlkioDeviceWriteIOps: throttleDevices,
  CpuPeriod: int64,
  CpuQuota: int64,
  CpuRealtimePeriod: int64,
  CpuRealtimeRuntime: int64,
  CpusetCpus: str,
  CpusetMems: str,
  Devices: arrayOf(
    struct('container.DeviceMapping', { PathOnHost: str, PathInContainer: str, CgroupPermissions: str }),
    '[]container.DeviceMapping',
  ),
  DeviceCgroupRules: strings,
  DeviceRequests: arrayOf(
    struct('container.DeviceRequest', {
      Driver: str,
      Count: int,
      DeviceIDs: strings,
      Capabilities: arrayOf(strings, '[][]string'),
      Options: stringMap,
    }),
    '[]container.DeviceRequest',
  ),
  KernelMemory: int64,
  KernelMemoryTCP: int64,
  MemoryReservation: int64,
  MemorySwap: int64,
  MemorySwappiness: int64,
  NanoCpus: int64,
  OomKillDisable: bool,
  Init: bool,
  PidsLimit: int64,
  Ulimits: arrayOf(struct('units.Ulimit', { Name: str, Hard: int64, Soft: int64 }), '[]*units.Ulimit'),
  CpuCount: int64,
  CpuPercent: int64,
  IOMaximumIOps: uint64,
  IOMaximumBandwidth: uint64,
  // HostConfig proper
  Binds: strings,
  ContainerIDFile: str,
  LogConfig: struct('container.LogConfig', { Type: str, Config: stringMap }),
  NetworkMode: str,
  PortBindings: { map: arrayOf(struct('nat.PortBinding', { HostIp: str, HostPort: str }), '[]nat.PortBinding'), goType: 'nat.PortMap' },
  RestartPolicy: struct('container.RestartPolicy', { Name: str, MaximumRetryCount: int }),
  AutoRemove: bool,
  VolumeDriver: str,
  VolumesFrom: strings,
  Mounts: arrayOf(MOUNT_KIND, '[]mount.Mount'),
  ConsoleSize: arrayOf('uint32', '[2]uint'),
  Annotations: stringMap,
  CapAdd: strslice,
  CapDrop: strslice,
  CgroupnsMode: str,
  Dns: strings,
  DnsOptions: strings,
  DnsSearch: strings,
  ExtraHosts: strings,
  GroupAdd: strings,
  IpcMode: str,
  Cgroup: str,
  Links: strings,
  OomScoreAdj: int,
  PidMode: str,
  Privileged: bool,
  PublishAllPorts: bool,
  ReadonlyRootfs: bool,
  SecurityOpt: strings,
  StorageOpt: stringMap,
  Tmpfs: stringMap,
  UTSMode: str,
  UsernsMode: str,
  ShmSize: int64,
  Sysctls: stringMap,
  Runtime: str,
  Isolation: str,
  MaskedPaths: strings,
  ReadonlyPaths: strings,
};

const endpointSettings = struct('network.EndpointSettings', {
  IPAMConfig: struct('network.EndpointIPAMConfig', { IPv4Address: str, IPv6Address: str, LinkLocalIPs: strings }),
  Links: strings,
  MacAddress: str,
  Aliases: strings,
  DriverOpts: stringMap,
  GwPriority: int,
  NetworkID: str,
  EndpointID: str,
  Gateway: str,
  IPAddress: str,
  IPPrefixLen: int,
  IPv6Gateway: str,
  GlobalIPv6Address: str,
  GlobalIPv6PrefixLen: int,
  DNSNames: strings,
});

export const HOST_CONFIG: Record<string, Kind> = hostConfigFields;

/** POST /containers/{id}/update: container.UpdateConfig = the Resources fields and RestartPolicy. */
export const UPDATE_CONFIG: Record<string, Kind> = Object.fromEntries(
  Object.entries(hostConfigFields).filter(
    ([k]) => k === 'RestartPolicy' || Object.keys(hostConfigFields).indexOf(k) < Object.keys(hostConfigFields).indexOf('Binds'),
  ),
);
export const NETWORKING_CONFIG: Record<string, Kind> = {
  EndpointsConfig: { map: endpointSettings, goType: 'map[string]*network.EndpointSettings' },
};

/** ContainerConfig's fields (the create body minus HostConfig and NetworkingConfig). */
export const CONTAINER_CONFIG: Record<string, Kind> = {
  Hostname: str,
  Domainname: str,
  User: str,
  AttachStdin: bool,
  AttachStdout: bool,
  AttachStderr: bool,
  ExposedPorts: emptySet,
  Tty: bool,
  OpenStdin: bool,
  StdinOnce: bool,
  Env: strings,
  Cmd: strslice,
  Healthcheck: HEALTH_CONFIG,
  ArgsEscaped: bool,
  Image: str,
  Volumes: emptySet,
  WorkingDir: str,
  Entrypoint: strslice,
  NetworkDisabled: bool,
  MacAddress: str,
  OnBuild: strings,
  Labels: stringMap,
  StopSignal: str,
  StopTimeout: int,
  Shell: strslice,
};

const RANGES: Partial<Record<Scalar, [number, number]>> = {
  int: [-(2 ** 63), 2 ** 63 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
  uint16: [0, 65535],
  uint32: [0, 4294967295],
  uint64: [0, 2 ** 64 - 1],
};

function jsonTypeOf(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return 'object';
}

function goTypeOf(kind: Kind): string {
  if (typeof kind === 'string') return kind === 'any' ? 'interface {}' : kind;
  if ('strslice' in kind) return 'strslice.StrSlice';
  return kind.goType;
}

function fail(value: unknown, field: string, kind: Kind): never {
  const jt = jsonTypeOf(value);
  const shown = jt === 'number' ? `number ${String(value)}` : jt;
  // dockerd wraps the decoder's error: "invalid JSON: json: cannot unmarshal …".
  throw invalidParameter(`invalid JSON: json: cannot unmarshal ${shown} into Go struct field ${field} of type ${goTypeOf(kind)}`);
}

/**
 * Checks `value` against `kind` and returns the normalized value (undefined for null). `field` is the
 * dotted Go path used in messages, e.g. "ContainerConfig.Cmd" or "HostConfig.RestartPolicy.Name".
 */
export function decode(value: unknown, kind: Kind, field: string): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof kind === 'string') {
    switch (kind) {
      case 'any':
        return value;
      case 'string':
        if (typeof value !== 'string') fail(value, field, kind);
        return value;
      case 'bool':
        if (typeof value !== 'boolean') fail(value, field, kind);
        return value;
      case 'float32':
      case 'float64':
        if (typeof value !== 'number') fail(value, field, kind);
        return value;
      default: {
        if (typeof value !== 'number' || !Number.isInteger(value)) fail(value, field, kind);
        const [lo, hi] = RANGES[kind]!;
        if (value < lo || value > hi) fail(value, field, kind);
        return value;
      }
    }
  }
  if ('strslice' in kind) {
    if (typeof value === 'string') return [value];
    if (!Array.isArray(value)) fail(value, field, kind);
    checkEntries(value.length, MAX_ARRAY_ENTRIES, field);
    return value.map((v) => {
      if (typeof v !== 'string') fail(v, field, 'string');
      return v;
    });
  }
  if ('array' in kind) {
    if (!Array.isArray(value)) fail(value, field, kind);
    checkEntries(value.length, MAX_ARRAY_ENTRIES, field);
    // The common large case (Env, Binds: strings only) is checked in place, without a copy.
    if (kind.array === 'string' && value.every((v) => typeof v === 'string')) return value;
    // A null element of a struct array decodes to the zero struct, as in Go.
    const isStruct = typeof kind.array === 'object' && 'struct' in kind.array;
    return value.map((v) => (v === null && isStruct ? {} : decode(v, kind.array, field)));
  }
  if ('map' in kind) {
    if (typeof value !== 'object' || Array.isArray(value)) fail(value, field, kind);
    if (kind.map === 'string' && isStringMap(value as Record<string, unknown>, field)) return value;
    const entries = Object.entries(value as Record<string, unknown>);
    checkEntries(entries.length, MAX_MAP_ENTRIES, field);
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries) {
      // Map values keep nulls where they mean something (PortBindings "80/tcp": null).
      const decoded = v === null ? null : decode(v, kind.map, field);
      // A "__proto__" key stays a key (as JSON.parse made it), never the object's prototype.
      if (k === '__proto__') Object.defineProperty(out, k, { value: decoded, enumerable: true, writable: true, configurable: true });
      else out[k] = decoded;
    }
    return out;
  }
  return decodeStruct(value, kind.struct, field, kind);
}

/**
 * Bounds on one collection of a request body (the body itself is bounded by MAX_JSON_BODY). Every
 * entry of a map is copied, serialised and stored several times (the record, each event's
 * attributes), and a map of 200 000 labels held the event loop ~100 ms per copy: with these bounds
 * no single pass over a collection stalls other requests for long. dockerd has no such bound, but
 * no real client comes near it: an Env or Cmd this long cannot even be exec'd (ARG_MAX).
 */
export const MAX_MAP_ENTRIES = 50_000;
export const MAX_ARRAY_ENTRIES = 131_072;

function checkEntries(count: number, limit: number, field: string): void {
  if (count > limit) throw invalidParameter(`${field}: too many entries (${count}, limit ${limit})`);
}

/** Whether every value of a parsed JSON object is a string or null (Labels, Options: checked in place). */
function isStringMap(obj: Record<string, unknown>, field: string): boolean {
  // JSON.parse makes own, enumerable properties only, so for-in sees exactly the keys.
  let count = 0;
  for (const k in obj) {
    const v = obj[k];
    if (typeof v !== 'string' && v !== null) return false;
    count++;
  }
  checkEntries(count, MAX_MAP_ENTRIES, field);
  return true;
}

/**
 * A field name folded as Go's encoding/json folds it to match keys case-insensitively: ASCII
 * letters to upper case, and the two non-ASCII letters whose fold set holds an ASCII one (KELVIN
 * SIGN → K, LONG S → S); every other character stays itself (it cannot match an ASCII name).
 */
export function goFold(name: string): string {
  return name.replace(/[a-z\u212a\u017f]/g, (c) => (c === '\u212a' ? 'K' : c === '\u017f' ? 'S' : c.toUpperCase()));
}

const folded = new WeakMap<Record<string, Kind>, Map<string, string>>();

/** The fields of a struct by their folded name (the first field wins a tie, as Go's first match). */
function foldedNames(fields: Record<string, Kind>): Map<string, string> {
  let m = folded.get(fields);
  if (!m) {
    m = new Map();
    for (const n of Object.keys(fields)) if (!m.has(goFold(n))) m.set(goFold(n), n);
    folded.set(fields, m);
  }
  return m;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Decodes a JSON object into a Go struct's fields and returns it with the fields' own names: a key
 * names the field spelled exactly so, else the field equal to it but for case (Go's fold). Keys are
 * taken in order, so of two keys naming one field the later wins, and objects (structs, maps) are
 * merged into the earlier one as Go decodes into the existing value. Unknown keys are dropped.
 * `prefix` starts the fields' paths in messages (empty: the fields are named alone).
 */
export function decodeStruct(value: unknown, fields: Record<string, Kind>, prefix: string, kind?: Kind): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(value, prefix, kind ?? { struct: fields, goType: 'struct' });
  }
  const byFold = foldedNames(fields);
  const out: Record<string, unknown> = {};
  const src = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(src)) {
    // Own properties only: "constructor" or "__proto__" in a body must not find Object's.
    const name = Object.hasOwn(fields, key) ? key : byFold.get(goFold(key));
    if (!name) continue; // unknown fields are ignored, as by dockerd
    const decoded = decode(v, fields[name]!, prefix ? `${prefix}.${name}` : name);
    if (decoded === undefined) continue;
    const earlier = out[name];
    out[name] = isPlainObject(earlier) && isPlainObject(decoded) ? mergeDecoded(earlier, decoded) : decoded;
  }
  return out;
}

/** A later decoded object over an earlier one: its keys win, nested objects merge. */
function mergeDecoded(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const e = out[k];
    const merged = isPlainObject(e) && isPlainObject(v) ? mergeDecoded(e, v) : v;
    if (k === '__proto__') Object.defineProperty(out, k, { value: merged, enumerable: true, writable: true, configurable: true });
    else out[k] = merged;
  }
  return out;
}
