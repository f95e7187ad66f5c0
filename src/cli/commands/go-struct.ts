// The objects the docker CLI runs an inspect template over as Go structs (`volume`, `service`,
// `node` and `context inspect` hand the template the decoded struct and no raw JSON to fall back
// on): the daemon's JSON made into values that carry their Go types (wire/go-template.ts's GoValue
// and GoMap), so that the template reads them as Go's reflection does — every field there at its
// zero value, an unknown field "can't evaluate field X in type T", a nil pointer "nil pointer
// evaluating", a missing map key `<no value>`, times printed by time.Time.String(), durations by
// time.Duration.String(), structs as `{a b c}` — and `json` writes them as encoding/json does
// (field order, omitempty, embedded structs flattened). The swarm types come from
// cluster/go-layout.ts; the Go types of their fields that JSON does not tell (uint64, enums,
// durations, file modes, byte slices) and the embedded structs are listed here (facts of moby's
// api/types and the docker CLI's context store, v28).
import { formatGoDuration } from '../../wire/go-duration.ts';
import { ExitError } from '../args.ts';
import type { Cli } from '../cli.ts';
import { TemplateError, usageTemplate, type Compiled } from '../template.ts';
import { GoMap, GoValue, goPrint } from '../../wire/go-template.ts';
import { GO_LAYOUT } from './cluster/go-layout.ts';
import { INSPECT_NAMED, INSPECT_STRUCTS } from './go-container.ts';
import { formatGoTime } from './go-time.ts';

/** A struct field: its Go name, JSON name, Go type, omitempty; `embed` for an embedded struct. */
interface FieldDef {
  name: string;
  /** null: not encoded (`json:"-"`). */
  json: string | null;
  type: string;
  omitempty: boolean;
  embed?: boolean;
}
interface StructDef {
  fields: FieldDef[];
  /** fmt prints it with its String method. */
  stringer?: (s: GoStruct) => string;
  /** A MarshalJSON of its own. */
  json?: (s: GoStruct) => unknown;
}

// prettier-ignore
/** Swarm fields whose Go type is not the one their JSON suggests. */
const FIELD_TYPES: Record<string, string> = {
  'Version.Index': 'uint64', 'TLSInfo.CertIssuerSubject': '[]byte', 'TLSInfo.CertIssuerPublicKey': '[]byte',
  'ConfigSpec.Data': '[]byte', 'SecretSpec.Data': '[]byte', 'SeccompOpts.Profile': '[]byte',
  'ConfigReferenceFileTarget.Mode': 'os.FileMode', 'SecretReferenceFileTarget.Mode': 'os.FileMode', 'mount.TmpfsOptions.Mode': 'os.FileMode',
  'SeccompOpts.Mode': 'swarm.SeccompMode', 'AppArmorOpts.Mode': 'swarm.AppArmorMode',
  'ContainerSpec.StopGracePeriod': '*time.Duration', 'ContainerSpec.Isolation': 'container.Isolation', 'ContainerSpec.OomScoreAdj': 'int64',
  'EndpointSpec.Mode': 'swarm.ResolutionMode', 'PortConfig.Protocol': 'swarm.PortConfigProtocol', 'PortConfig.TargetPort': 'uint32',
  'PortConfig.PublishedPort': 'uint32', 'PortConfig.PublishMode': 'swarm.PortConfigPublishMode',
  'NodeSpec.Role': 'swarm.NodeRole', 'NodeSpec.Availability': 'swarm.NodeAvailability', 'NodeCSIInfo.MaxVolumesPerNode': 'int64',
  'NodeStatus.State': 'swarm.NodeState', 'ManagerStatus.Reachability': 'swarm.Reachability', 'UpdateStatus.State': 'swarm.UpdateState',
  'ReplicatedService.Replicas': '*uint64', 'ReplicatedJob.MaxConcurrent': '*uint64', 'ReplicatedJob.TotalCompletions': '*uint64',
  'UpdateConfig.Parallelism': 'uint64', 'UpdateConfig.Delay': 'time.Duration', 'UpdateConfig.Monitor': 'time.Duration',
  'UpdateConfig.MaxFailureRatio': 'float32', 'ServiceStatus.RunningTasks': 'uint64', 'ServiceStatus.DesiredTasks': 'uint64',
  'ServiceStatus.CompletedTasks': 'uint64', 'OrchestrationConfig.TaskHistoryRetentionLimit': '*int64', 'RaftConfig.SnapshotInterval': 'uint64',
  'RaftConfig.KeepOldSnapshots': '*uint64', 'RaftConfig.LogEntriesForSlowFollowers': 'uint64', 'DispatcherConfig.HeartbeatPeriod': 'time.Duration',
  'CAConfig.NodeCertExpiry': 'time.Duration', 'CAConfig.ForceRotate': 'uint64', 'ExternalCA.Protocol': 'swarm.ExternalCAProtocol',
  'Task.DesiredState': 'swarm.TaskState', 'TaskSpec.ForceUpdate': 'uint64', 'TaskSpec.Runtime': 'swarm.RuntimeType',
  'Resources.NanoCPUs': 'int64', 'Resources.MemoryBytes': 'int64', 'Limit.NanoCPUs': 'int64', 'Limit.MemoryBytes': 'int64', 'Limit.Pids': 'int64',
  'DiscreteGenericResource.Value': 'int64', 'Placement.MaxReplicas': 'uint64', 'RestartPolicy.Condition': 'swarm.RestartPolicyCondition',
  'RestartPolicy.Delay': '*time.Duration', 'RestartPolicy.MaxAttempts': '*uint64', 'RestartPolicy.Window': '*time.Duration',
  'TaskStatus.State': 'swarm.TaskState', 'mount.Mount.Type': 'mount.Type', 'mount.Mount.Consistency': 'mount.Consistency',
  'mount.BindOptions.Propagation': 'mount.Propagation', 'mount.TmpfsOptions.SizeBytes': 'int64',
  'container.HealthConfig.Interval': 'time.Duration', 'container.HealthConfig.Timeout': 'time.Duration',
  'container.HealthConfig.StartPeriod': 'time.Duration', 'container.HealthConfig.StartInterval': 'time.Duration',
  'container.Ulimit.Hard': 'int64', 'container.Ulimit.Soft': 'int64', 'ClusterInfo.SubnetSize': 'uint32', 'Swarm.SubnetSize': 'uint32', 'Swarm.DataPathPort': 'uint32',
};

/** The embedded structs of the swarm types: their Go name and the fields they bring, in order. */
const META = ['swarm.Meta', 'Version', 'CreatedAt', 'UpdatedAt'];
const ANNOTATIONS = ['swarm.Annotations', 'Name', 'Labels'];
const EMBEDS: Record<string, string[][]> = {
  Service: [META],
  Node: [META],
  Secret: [META],
  Config: [META],
  Network: [META],
  Task: [META, ANNOTATIONS],
  ServiceSpec: [ANNOTATIONS],
  NodeSpec: [ANNOTATIONS],
  SecretSpec: [ANNOTATIONS],
  ConfigSpec: [ANNOTATIONS],
  NetworkSpec: [ANNOTATIONS],
  Spec: [ANNOTATIONS],
};

const qualify = (t: string) => (t.includes('.') ? t : `swarm.${t}`);
/** A go-layout type as a Go type. */
function goTypeOf(layout: string): string {
  if (layout.startsWith('*')) return `*${goTypeOf(layout.slice(1))}`;
  if (layout.startsWith('[]')) return `[]${goTypeOf(layout.slice(2))}`;
  if (layout.startsWith('map[string]')) return `map[string]${goTypeOf(layout.slice(11))}`;
  if (layout === 'time') return 'time.Time';
  if (layout === 'any') return 'interface {}';
  if (['string', 'int', 'bool'].includes(layout)) return layout;
  return qualify(layout);
}

const STRUCTS = new Map<string, StructDef>();
for (const [type, layout] of Object.entries(GO_LAYOUT)) {
  const field = ([json, t, omit]: readonly [string, string, 1?]): FieldDef => ({
    // runtime.PluginSpec's JSON names are lower case; its Go names are not.
    name: json[0]!.toUpperCase() + json.slice(1),
    json,
    type: FIELD_TYPES[`${type}.${json}`] ?? goTypeOf(t),
    omitempty: omit === 1,
  });
  const all = layout.map(field);
  const fields: FieldDef[] = [];
  for (const f of all) {
    const embed = EMBEDS[type]?.find((e) => e[1] === f.name);
    if (embed) {
      const [goName, ...names] = embed as [string, ...string[]];
      STRUCTS.set(goName, { fields: all.filter((x) => names.includes(x.name)) });
      fields.push({ name: goName.slice(goName.indexOf('.') + 1), json: '', type: goName, omitempty: false, embed: true });
    } else if (!EMBEDS[type]?.some((e) => e.includes(f.name))) fields.push(f);
  }
  STRUCTS.set(qualify(type), { fields });
}
STRUCTS.set('swarm.Version', { ...STRUCTS.get('swarm.Version')!, stringer: (s) => String(s.get('Index')) });

// container.InspectResponse, image.InspectResponse and what they reach (go-container.ts); `struct {}` (a set's values).
for (const [type, fields] of Object.entries(INSPECT_STRUCTS))
  STRUCTS.set(type, {
    fields: fields.map(([name, t, json, omit, embed]) => ({ name, type: t, json, omitempty: omit === 1, embed: embed === 1 })),
  });
STRUCTS.set('struct {}', { fields: [] });
/** Named types that are not structs: what they are made of. */
const NAMED: Record<string, string> = INSPECT_NAMED;

const def = (name: string, type: string, omitempty = false, json = name): FieldDef => ({ name, json, type, omitempty });
// volume.Volume (moby api/types/volume) and the context the docker CLI inspects (cli/command/context).
STRUCTS.set('volume.Volume', {
  fields: [
    def('ClusterVolume', '*volume.ClusterVolume', true),
    def('CreatedAt', 'string', true),
    def('Driver', 'string'),
    def('Labels', 'map[string]string'),
    def('Mountpoint', 'string'),
    def('Name', 'string'),
    def('Options', 'map[string]string'),
    def('Scope', 'string'),
    def('Status', 'map[string]interface {}', true),
    def('UsageData', '*volume.UsageData', true),
  ],
});
STRUCTS.set('volume.UsageData', { fields: [def('RefCount', 'int64'), def('Size', 'int64')] });
// Cluster volumes are not served; one that came would keep its JSON.
STRUCTS.set('volume.ClusterVolume', { fields: [], json: (s) => s.raw });
// network.Inspect (moby api/types/network).
STRUCTS.set('network.Inspect', {
  fields: [
    def('Name', 'string'),
    def('ID', 'string', false, 'Id'),
    def('Created', 'time.Time'),
    def('Scope', 'string'),
    def('Driver', 'string'),
    def('EnableIPv4', 'bool'),
    def('EnableIPv6', 'bool'),
    def('IPAM', 'network.IPAM'),
    def('Internal', 'bool'),
    def('Attachable', 'bool'),
    def('Ingress', 'bool'),
    def('ConfigFrom', 'network.ConfigReference'),
    def('ConfigOnly', 'bool'),
    def('Containers', 'map[string]network.EndpointResource'),
    def('Options', 'map[string]string'),
    def('Labels', 'map[string]string'),
    def('Peers', '[]network.PeerInfo', true),
    def('Services', 'map[string]network.ServiceInfo', true),
  ],
});
STRUCTS.set('network.IPAM', {
  fields: [def('Driver', 'string'), def('Options', 'map[string]string'), def('Config', '[]network.IPAMConfig')],
});
STRUCTS.set('network.IPAMConfig', {
  fields: [
    def('Subnet', 'string', true),
    def('IPRange', 'string', true),
    def('Gateway', 'string', true),
    def('AuxAddress', 'map[string]string', true, 'AuxiliaryAddresses'),
  ],
});
STRUCTS.set('network.ConfigReference', { fields: [def('Network', 'string')] });
STRUCTS.set('network.EndpointResource', {
  fields: ['Name', 'EndpointID', 'MacAddress', 'IPv4Address', 'IPv6Address'].map((n) => def(n, 'string')),
});
STRUCTS.set('network.PeerInfo', { fields: [def('Name', 'string'), def('IP', 'string')] });
STRUCTS.set('network.ServiceInfo', {
  fields: [def('VIP', 'string'), def('Ports', '[]string'), def('LocalLBIndex', 'int'), def('Tasks', '[]network.Task')],
});
STRUCTS.set('network.Task', {
  fields: [def('Name', 'string'), def('EndpointID', 'string'), def('EndpointIP', 'string'), def('Info', 'map[string]string')],
});
STRUCTS.set('context.contextWithTLSListing', {
  fields: [
    { ...def('Metadata', 'store.Metadata'), embed: true },
    def('TLSMaterial', 'map[string]store.EndpointFiles'),
    def('Storage', 'store.StorageInfo'),
  ],
});
STRUCTS.set('store.Metadata', {
  fields: [
    def('Name', 'string', true),
    def('Metadata', 'interface {}=command.DockerContext', true),
    def('Endpoints', 'map[string]interface {}=context.EndpointMetaBase', true),
  ],
});
STRUCTS.set('command.DockerContext', {
  fields: [def('Description', 'string'), def('AdditionalFields', 'map[string]interface {}')],
  // Its MarshalJSON: the description when set, beside the additional fields.
  json: (s) => {
    const extra = s.get('AdditionalFields') as GoMap;
    return { ...(s.get('Description') ? { Description: s.get('Description') } : {}), ...(extra.toJSON() as object) };
  },
});
STRUCTS.set('context.EndpointMetaBase', { fields: [def('Host', 'string', true), def('SkipTLSVerify', 'bool')] });
STRUCTS.set('store.StorageInfo', { fields: [def('MetadataPath', 'string'), def('TLSPath', 'string')] });

// fmt prints a pointer nested in a struct, slice or map as its address, which no two runs share.
const ADDRESS = '0xc000010000';
const nested = (v: unknown) => (v instanceof GoValue ? v.print(true) : goPrint(v));

/** A struct value (or a pointer to one, `*T`). */
export class GoStruct extends GoValue {
  constructor(
    readonly goType: string,
    private readonly def: StructDef,
    private readonly values: Map<string, unknown>,
    readonly raw: unknown,
  ) {
    super();
  }
  get(name: string): unknown {
    return this.values.get(name);
  }
  override field(name: string): { value: unknown } | undefined {
    if (name === 'String' && this.def.stringer) return { value: this.def.stringer(this) };
    if (this.values.has(name)) return { value: this.values.get(name) };
    for (const f of this.def.fields) {
      const promoted = f.embed ? (this.values.get(f.name) as GoStruct).field(name) : undefined;
      if (promoted) return promoted;
    }
    return undefined;
  }
  override fieldType(name: string): string | undefined {
    return fieldDef(this.def, name)?.type.replace(/=.*/, '');
  }
  override print(nested_: boolean): string {
    if (nested_ && this.goType.startsWith('*')) return ADDRESS;
    if (this.def.stringer) return this.def.stringer(this);
    return `{${[...this.values.values()].map(nested).join(' ')}}`;
  }
  toJSON(): unknown {
    if (this.def.json) return this.def.json(this);
    const out: Record<string, unknown> = {};
    for (const f of this.def.fields) {
      const v = this.values.get(f.name);
      if (f.embed) Object.assign(out, (v as GoStruct).toJSON());
      else if (f.json !== null && !(f.omitempty && emptyValue(v))) out[f.json] = v;
    }
    return out;
  }
}

function fieldDef(d: StructDef, name: string): FieldDef | undefined {
  for (const f of d.fields) {
    if (f.name === name) return f;
    const inner = f.embed ? STRUCTS.get(f.type.replace(/^\*/, '')) : undefined;
    const found = inner && fieldDef(inner, name);
    if (found) return found;
  }
  return undefined;
}

/** Whether encoding/json's omitempty leaves the (typed) value out. */
function emptyValue(v: unknown): boolean {
  if (v instanceof GoNil) return true;
  if (v instanceof GoMap) return v.size === 0;
  if (v instanceof GoDuration || v instanceof GoFileMode) return v.n === 0;
  if (v instanceof GoBytes) return v.bytes.length === 0;
  if (v instanceof GoValue) return false;
  return v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);
}

/** A nil pointer or interface. */
class GoNil extends GoValue {
  constructor(
    readonly goType: string,
    private readonly target: StructDef | undefined,
  ) {
    super();
  }
  override field(name: string): 'nil' | undefined {
    // Through an interface every name is a nil dereference; through a pointer, only the struct's fields.
    return this.goType === 'interface {}' || (this.target && fieldDef(this.target, name)) ? 'nil' : undefined;
  }
  override print(): string {
    return '<nil>';
  }
  override truth(): boolean {
    return false;
  }
  toJSON(): null {
    return null;
  }
}

/** A pointer to a value that is not a struct (`*uint64`, `*time.Duration`, `*time.Time`). */
class GoPointer extends GoValue {
  constructor(
    readonly goType: string,
    private readonly target: unknown,
  ) {
    super();
  }
  override print(nested_: boolean): string {
    return nested_ ? ADDRESS : this.target instanceof GoValue ? this.target.print(false) : goPrint(this.target);
  }
  toJSON(): unknown {
    // JSON.stringify does not call toJSON on what a toJSON returns.
    const target = this.target as { toJSON?: () => unknown } | null;
    return typeof target?.toJSON === 'function' ? target.toJSON() : target;
  }
}

const RFC3339 = /^(-?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/;

/** A time.Time, kept as the RFC 3339 text the daemon sent. */
class GoTime extends GoValue {
  readonly goType = 'time.Time';
  private readonly m: RegExpExecArray | null;
  constructor(private readonly text: string) {
    super();
    this.m = RFC3339.exec(text);
  }
  /** time.Time.String(): `2006-01-02 15:04:05.999999999 -0700 MST`. */
  override print(): string {
    const m = this.m;
    if (!m) return this.text;
    const fraction = (m[7] ?? '').replace(/0+$/, '');
    const zone = m[8] === 'Z' ? '+0000 UTC' : `${m[8]!.replace(':', '')} ${m[8]!.replace(':', '')}`;
    return `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${m[6]}${fraction ? `.${fraction}` : ''} ${zone}`;
  }
  override field(name: string): { value: unknown } | undefined {
    const seconds = () => Math.floor(Date.parse(this.text) / 1000);
    switch (name) {
      case 'String':
        return { value: this.print() };
      case 'IsZero':
        return { value: this.m !== null && this.m[1] === '0001' && seconds() === Math.floor(Date.parse('0001-01-01T00:00:00Z') / 1000) };
      case 'Unix':
        return { value: seconds() };
      case 'Year':
        return { value: Number(this.m?.[1] ?? 0) };
    }
    return undefined;
  }
  override method(name: string): ((...args: unknown[]) => unknown) | undefined {
    const m = this.m;
    if (name !== 'Format' || !m) return undefined;
    const offset = m[8] === 'Z' ? 0 : (m[8]![0] === '-' ? -1 : 1) * (Number(m[8]!.slice(1, 3)) * 60 + Number(m[8]!.slice(4, 6)));
    const parts = {
      year: Number(m[1]),
      month: Number(m[2]),
      day: Number(m[3]),
      hour: Number(m[4]),
      minute: Number(m[5]),
      second: Number(m[6]),
      nanos: Number((m[7] ?? '').padEnd(9, '0').slice(0, 9)),
      offset,
      utc: m[8] === 'Z',
    };
    return (...args) => {
      if (args.length !== 1) throw new Error(`wrong number of args for Format: want 1 got ${args.length}`);
      if (typeof args[0] !== 'string') throw new Error(`wrong type for value; expected string; got ${typeof args[0]}`);
      return formatGoTime(parts, args[0]);
    };
  }
  /** MarshalJSON: RFC 3339 with the fraction's trailing zeros dropped. */
  toJSON(): string {
    return this.text.replace(/\.(\d*?)0+(?=Z|[+-]\d\d:\d\d$)/, (_m, d: string) => (d ? `.${d}` : ''));
  }
}

/** A time.Duration. */
class GoDuration extends GoValue {
  readonly goType = 'time.Duration';
  constructor(readonly n: number) {
    super();
  }
  override print(): string {
    return formatGoDuration(this.n);
  }
  override truth(): boolean {
    return this.n !== 0;
  }
  toJSON(): number {
    return this.n;
  }
}

/** An os.FileMode, printed as `-rw-r--r--`. */
class GoFileMode extends GoValue {
  readonly goType = 'fs.FileMode';
  constructor(readonly n: number) {
    super();
  }
  override print(): string {
    const kinds = 'dalTLDpSugct?';
    let s = '';
    for (let i = 0; i < kinds.length; i++) if (Math.floor(this.n / 2 ** (31 - i)) % 2 === 1) s += kinds[i];
    if (!s) s = '-';
    for (let i = 0; i < 9; i++) s += (this.n >> (8 - i)) & 1 ? 'rwxrwxrwx'[i] : '-';
    return s;
  }
  override truth(): boolean {
    return this.n !== 0;
  }
  toJSON(): number {
    return this.n;
  }
}

/** A []byte: JSON carries it in base64; fmt prints its bytes. */
class GoBytes extends GoValue {
  readonly goType = '[]uint8';
  constructor(
    readonly bytes: Buffer,
    private readonly nil: boolean,
  ) {
    super();
  }
  override print(): string {
    return `[${[...this.bytes].join(' ')}]`;
  }
  override length(): number {
    return this.bytes.length;
  }
  override truth(): boolean {
    return this.bytes.length > 0;
  }
  toJSON(): string | null {
    return this.nil ? null : this.bytes.toString('base64');
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const NUMBERS = new Set(['int', 'int8', 'int16', 'int32', 'int64', 'uint', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'float64']);

/** A nil slice: prints `[]` as an empty one does, but encodes as null. */
function nilSlice(): unknown[] {
  const a: unknown[] = [];
  Object.defineProperty(a, 'toJSON', { value: () => null });
  return a;
}

/** A field's value as Go's decoder finds it: the exact name first, then one equal when case is folded. */
function member(o: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(o, name)) return o[name];
  const folded = name.toLowerCase();
  const key = Object.keys(o).find((k) => k.toLowerCase() === folded);
  return key === undefined ? undefined : o[key];
}

/** The zero value of a Go type, as `index` gives it for a missing map key. */
function zeroOf(type: string): unknown {
  if (type === 'string') return '';
  if (NUMBERS.has(type)) return 0;
  if (type === 'bool') return false;
  if (type.startsWith('interface {}')) return undefined;
  return typed(undefined, type);
}

/** An `interface {}` value decoded from JSON: maps, slices, float64s, strings, booleans. */
function fromAny(v: unknown): unknown {
  if (v === null || v === undefined) return new GoNil('interface {}', undefined);
  if (Array.isArray(v)) return v.map(fromAny);
  if (isObject(v))
    return new GoMap(
      Object.entries(v).map(([k, x]) => [k, fromAny(x)]),
      'map[string]interface {}',
      undefined,
    );
  return v;
}

/**
 * `raw` (the daemon's JSON) as the Go type `type`: a qualified Go type (`swarm.Service`, `*T`,
 * `[]T`, `map[string]T`, a scalar), or `interface {}=T` for an interface holding a T. The depth is
 * bounded by the types.
 */
export function typed(raw: unknown, type: string): unknown {
  if (type.startsWith('interface {}=')) {
    // Go names the interface in errors, and prints what it holds.
    const held = type.slice('interface {}='.length);
    const d = STRUCTS.get(held);
    if (raw === undefined || raw === null) return new GoNil('interface {}', undefined);
    return d ? struct(raw, 'interface {}', d) : typed(raw, held);
  }
  if (type.startsWith('*')) {
    const named = NAMED[type.slice(1)];
    const target = named !== undefined && STRUCTS.has(named) ? named : type.slice(1);
    const d = STRUCTS.get(target);
    if (raw === undefined || raw === null) return new GoNil(type, d);
    return d ? struct(raw, type, d) : new GoPointer(type, typed(raw, target));
  }
  if (Object.hasOwn(NAMED, type)) return typed(raw, NAMED[type]!);
  const array = /^\[(\d+)\](.+)$/.exec(type);
  if (array) {
    const n = Number(array[1]);
    return Array.from({ length: n }, (_, i) => typed(Array.isArray(raw) ? raw[i] : undefined, array[2]!));
  }
  if (type === '[]byte' || type === '[]uint8')
    return new GoBytes(Buffer.from(typeof raw === 'string' ? raw : '', 'base64'), typeof raw !== 'string');
  if (type.startsWith('[]')) return Array.isArray(raw) ? raw.map((x) => typed(x, type.slice(2))) : nilSlice();
  if (type.startsWith('map[')) {
    // map[K]V with K a string kind (string, nat.Port…): the value type after K's closing bracket.
    const item = type.slice(type.indexOf(']') + 1);
    const goType = type.replace(/=.*/, '');
    if (!isObject(raw)) return new GoMap([], goType, zeroOf(item), true);
    return new GoMap(
      Object.entries(raw).map(([k, x]) => [k, typed(x, item)]),
      goType,
      zeroOf(item),
    );
  }
  switch (type) {
    case 'time.Time':
      return new GoTime(typeof raw === 'string' ? raw : '0001-01-01T00:00:00Z');
    case 'time.Duration':
      return new GoDuration(typeof raw === 'number' ? raw : 0);
    case 'os.FileMode':
      return new GoFileMode(typeof raw === 'number' ? raw : 0);
    case 'interface {}':
      return fromAny(raw);
    case 'bool':
      return raw === true;
    case 'store.EndpointFiles':
      return Array.isArray(raw) ? raw.map(String) : nilSlice();
  }
  if (NUMBERS.has(type)) return typeof raw === 'number' ? raw : 0;
  const d = STRUCTS.get(type);
  if (d) return struct(raw, type, d);
  // A string, or a named string type (swarm.NodeRole…).
  return typeof raw === 'string' ? raw : '';
}

function struct(raw: unknown, goType: string, d: StructDef): GoStruct {
  const o = isObject(raw) ? raw : {};
  const values = new Map<string, unknown>();
  for (const f of d.fields)
    values.set(
      f.name,
      f.embed
        ? struct(o, f.type, STRUCTS.get(f.type.replace(/^\*/, ''))!)
        : f.json === null
          ? zeroOf(f.type)
          : typed(member(o, f.json), f.type),
    );
  return new GoStruct(goType, d, values, raw);
}

/** An object the command could not find: its error, in its place among the others. */
export class Refusal {
  constructor(readonly message: string) {}
}

/**
 * An inspect template as the docker CLI's inspect.Inspect runs it: over each object's Go type
 * (`goType`, by object when a function; undefined where none is known here); when that fails and
 * the command has the raw JSON (`fallback`: every inspect but volume, service, node and context's),
 * over the JSON as maps under missingkey=error. An object's rendering is kept only when it
 * succeeds; stdout gets the renderings (a bare newline when there are none); the failures come back
 * in order with the refusals among `items`, worded "template parsing error: …". A template that
 * does not parse exits with `parseStatus`.
 */
export function printTyped(
  cli: Cli,
  items: unknown[],
  format: string,
  goType: string | ((item: unknown) => string | undefined),
  options: { parseStatus?: number; fallback?: boolean } = {},
): string[] {
  const { parseStatus = 64, fallback = false } = options;
  if (format === 'json') return printCompact(cli, items, goType, fallback);
  let t: Compiled;
  let maps: Compiled | undefined;
  let untyped: Compiled | undefined;
  try {
    t = usageTemplate(format, { errors: 'formatter' });
    if (fallback) maps = usageTemplate(format, { errors: 'formatter', jsonMaps: 'raw' });
    // An object whose Go type is not described here: its JSON as maps, `ID` read as `Id` as its Go type would.
    if (fallback) untyped = usageTemplate(format, { errors: 'formatter', jsonMaps: true });
  } catch (e) {
    if (e instanceof ExitError) throw new ExitError(parseStatus, e.message);
    throw e;
  }
  let out = '';
  const errors: string[] = [];
  for (const it of items) {
    if (it instanceof Refusal) {
      errors.push(it.message);
      continue;
    }
    const type = typeof goType === 'function' ? goType(it) : goType;
    try {
      out += `${type === undefined ? untyped!.render(it) : t.render(typed(it, type))}\n`;
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      if (!maps || type === undefined) errors.push(e.message);
      else
        try {
          out += `${maps.render(it)}\n`;
        } catch (raw) {
          if (!(raw instanceof TemplateError)) throw raw;
          errors.push(raw.message);
        }
    }
  }
  cli.out(out || '\n');
  return errors;
}

/** Go's json.MarshalIndent with four spaces, as the docker CLI's indented inspector writes Go values. */
export const goJsonIndented = (v: unknown) =>
  JSON.stringify(v, null, 4).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** JSON as Go's encoding/json writes it: <, >, & and the JavaScript line separators escaped. */
const goJsonText = (v: unknown) =>
  JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * `--format json`: one compact JSON array, as the docker CLI's JSON inspector writes it — the raw
 * answers where the command has them (`fallback`), else the Go values marshalled; `[]` when none.
 */
function printCompact(cli: Cli, items: unknown[], goType: string | ((item: unknown) => string | undefined), fallback: boolean): string[] {
  const errors = items.flatMap((it) => (it instanceof Refusal ? [it.message] : []));
  const found = items.filter((it) => !(it instanceof Refusal));
  const values = fallback ? found : found.map((it) => typed(it, (typeof goType === 'function' ? goType(it) : goType) ?? 'interface {}'));
  cli.out(`${goJsonText(values)}\n`);
  return errors;
}
