// containerd's API protos, parsed once into a single protobufjs Root. That Root both builds the gRPC
// method definitions (see client.ts) and decodes google.protobuf.Any payloads (events, metrics).
// We skip @grpc/proto-loader on purpose: it adds ~30 ms of module load and ~45 ms of descriptor
// generation for every message type (including the whole descriptor.proto pulled in by gogo.proto),
// none of which grpc-js needs; the serializers below are what proto-loader would build anyway.

import { ZERO_TIME } from '../util/time.ts';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { findUpwards } from '../util/find-upwards.ts';

export const SERVICES = {
  version: 'containerd.services.version.v1.Version',
  namespaces: 'containerd.services.namespaces.v1.Namespaces',
  content: 'containerd.services.content.v1.Content',
  snapshots: 'containerd.services.snapshots.v1.Snapshots',
  diff: 'containerd.services.diff.v1.Diff',
  leases: 'containerd.services.leases.v1.Leases',
  containers: 'containerd.services.containers.v1.Containers',
  tasks: 'containerd.services.tasks.v1.Tasks',
  events: 'containerd.services.events.v1.Events',
  introspection: 'containerd.services.introspection.v1.Introspection',
  images: 'containerd.services.images.v1.Images',
} as const;
export type ServiceName = keyof typeof SERVICES;

const API = 'github.com/containerd/containerd/api';
const SERVICE_FILES = [
  'version/v1/version',
  'namespaces/v1/namespace',
  'content/v1/content',
  'snapshots/v1/snapshots',
  'diff/v1/diff',
  'leases/v1/leases',
  'containers/v1/containers',
  'tasks/v1/tasks',
  'events/v1/events',
  'introspection/v1/introspection',
  'images/v1/images',
].map((f) => `${API}/services/${f}.proto`);
const EVENT_FILES = ['task', 'container', 'snapshot', 'content', 'namespace', 'image'].map((f) => `${API}/events/${f}.proto`);
const RUNC_OPTIONS_FILE = 'github.com/containerd/containerd/runtime/v2/runc/options/oci.proto';
// Not part of containerd's own API tree; present only if setup extracted containerd/cgroups' protos.
const OPTIONAL_FILES = [
  'github.com/containerd/cgroups/stats/v1/metrics.proto', // io.containerd.cgroups.v1.Metrics
  'github.com/containerd/cgroups/v2/stats/metrics.proto', // io.containerd.cgroups.v2.Metrics
];

const WEAK_OPTION_FILES = new Set(['gogoproto/gogo.proto', 'github.com/containerd/containerd/protobuf/plugin/fieldpath.proto']);

/** Decode options shared by every message we hand out: snake_case keys, int64 as decimal strings. */
export const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

export interface AnyMessage {
  type_url: string;
  value: Buffer | Uint8Array;
}

export interface MethodInfo {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  serialize: (value: object) => Buffer;
  deserialize: (bytes: Buffer) => any;
}

export interface RuncOptions {
  root?: string;
  binary_name?: string;
  systemd_cgroup?: boolean;
  shim_cgroup?: string;
  io_uid?: number;
  io_gid?: number;
  no_pivot_root?: boolean;
  no_new_keyring?: boolean;
  criu_path?: string;
}

export class Protos {
  readonly root: protobuf.Root;
  /** Milliseconds the parse took (reported by the daemon at debug level). */
  readonly loadMs: number;
  /** Which of OPTIONAL_FILES were found, e.g. whether cgroup Metrics can be decoded. */
  readonly optionalLoaded: readonly string[];
  private readonly methods = new Map<string, MethodInfo>();

  constructor(root: protobuf.Root, loadMs: number, optionalLoaded: string[]) {
    this.root = root;
    this.loadMs = loadMs;
    this.optionalLoaded = optionalLoaded;
  }

  get hasCgroupMetrics(): boolean {
    return this.optionalLoaded.length > 0;
  }

  method(service: ServiceName, name: string): MethodInfo {
    const key = `${service}.${name}`;
    let info = this.methods.get(key);
    if (!info) {
      const svc = this.root.lookupService(SERVICES[service]);
      const m = svc.methods[name];
      if (!m) throw new Error(`unknown method ${SERVICES[service]}.${name}`);
      m.resolve(); // its request and response types
      const req = m.resolvedRequestType!;
      const res = m.resolvedResponseType!;
      info = {
        path: `/${SERVICES[service]}/${name}`,
        requestStream: !!m.requestStream,
        responseStream: !!m.responseStream,
        serialize: (value) => Buffer.from(req.encode(req.fromObject(value)).finish()),
        deserialize: (bytes) => res.toObject(res.decode(bytes), TO_OBJECT),
      };
      this.methods.set(key, info);
    }
    return info;
  }

  /** The protobuf type for an Any's type_url (bare like containerd's, or with a URL prefix); null if unknown. */
  typeFor(typeUrl: string): protobuf.Type | null {
    const name = typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
    try {
      return this.root.lookupType(name);
    } catch {
      // no such type in the loaded protos
      return null;
    }
  }

  /**
   * Decodes an Any: protobuf payloads through the Root, containerd's JSON-typed payloads
   * (types.containerd.io/opencontainers/runtime-spec/…) through JSON.parse. Unknown types → null.
   */
  decodeAny(any: AnyMessage | null | undefined): Record<string, any> | null {
    if (!any || !any.type_url) return null;
    const value = Buffer.from(any.value ?? []);
    if (any.type_url.startsWith('types.containerd.io/')) return JSON.parse(value.toString('utf8'));
    const type = this.typeFor(any.type_url);
    return type ? type.toObject(type.decode(value), TO_OBJECT) : null;
  }

  /** Encodes `fields` as an Any of the protobuf message `typeName` (containerd uses bare type URLs). */
  encodeAny(typeName: string, fields: Record<string, unknown>): AnyMessage {
    const type = this.root.lookupType(typeName);
    const err = type.verify(fields);
    if (err) throw new Error(`${typeName}: ${err}`);
    return { type_url: typeName, value: Buffer.from(type.encode(type.fromObject(fields)).finish()) };
  }

  /** `containerd.runc.v1.Options` for Container.runtime.options (root, binary_name, systemd_cgroup …). */
  encodeRuncOptions(opts: RuncOptions): AnyMessage {
    return this.encodeAny('containerd.runc.v1.Options', { ...opts });
  }
}

/** build/proto of the repository this module runs from (works from src/, dist/src/ and dist/bundle/). */
function findProtoDir(): string {
  const api = findUpwards(import.meta.url, path.join('build', 'proto', API));
  if (!api) throw new Error('containerd protos not found (build/proto); run scripts/setup.sh');
  return api.slice(0, api.length - API.length - 1);
}

function parse(protoDir: string): Protos {
  const started = performance.now();
  const optional = OPTIONAL_FILES.filter((f) => fs.existsSync(path.join(protoDir, f)));
  const files = [...SERVICE_FILES, ...EVENT_FILES, RUNC_OPTIONS_FILE, ...optional];
  const key = cacheKey(protoDir, files);
  const cacheFile = key && path.join(protoDir, `.parsed-${key}.json`);
  // A cached Root was resolved whole before it was written: its types resolve lazily on first use.
  const root = (cacheFile && readCache(cacheFile)) || parseFiles(protoDir, files, cacheFile);
  return new Protos(root, performance.now() - started, optional);
}

/**
 * The parsed Root as protobufjs JSON, kept beside the .proto files: loading it takes a third of
 * the parse (start-up time). Keyed by the file list and the containerd version the files came
 * from (setup.sh writes .version and replaces the whole tree when that version changes); no key,
 * no cache.
 */
function cacheKey(protoDir: string, files: string[]): string | null {
  let version: string;
  try {
    version = fs.readFileSync(path.join(protoDir, '.version'), 'utf8').trim();
  } catch {
    // ENOENT: no version file, so no cache
    return null;
  }
  return createHash('sha256')
    .update(`${version}\n${files.join('\n')}`)
    .digest('hex')
    .slice(0, 16);
}

function readCache(file: string): protobuf.Root | null {
  try {
    return protobuf.Root.fromJSON(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return null; // absent or unreadable: parse instead
  }
}

function parseFiles(protoDir: string, files: string[], cacheFile: string | null): protobuf.Root {
  const includeDirs = [protoDir, path.join(protoDir, 'gogo'), path.join(protoDir, 'googleapis')];
  const root = new protobuf.Root();
  // Import-path-style names against our include dirs. null means "skip this import": fine for
  // the weak ones; a missing required file still fails below, in resolveAll(), naming the type.
  root.resolvePath = (_origin, target) => {
    if (path.isAbsolute(target)) return target;
    // Weak imports that only define custom options (gogoproto.*, containerd.plugin.fieldpath).
    // Options never change the wire format, and both files would drag in descriptor.proto.
    if (WEAK_OPTION_FILES.has(target)) return null;
    for (const dir of includeDirs) {
      const full = path.join(dir, target);
      if (fs.existsSync(full)) return full;
    }
    return null;
  };
  root.loadSync(files, { keepCase: true });
  root.resolveAll(); // a missing required file fails here, before anything is cached
  if (!cacheFile) return root;
  try {
    // Atomic: daemons starting together never read half a file.
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(root.toJSON()));
    fs.renameSync(tmp, cacheFile);
  } catch {
    // EROFS or EACCES (a read-only tree): parse every time
  }
  return root;
}

const cache = new Map<string, Protos>();

/** Loads the protos on first use (parsed JSON: ~20 ms; the .proto files: ~60 ms) and returns the same instance afterwards. */
export function loadProtos(protoDir: string = findProtoDir()): Protos {
  let p = cache.get(protoDir);
  if (!p) {
    p = parse(protoDir);
    cache.set(protoDir, p);
  }
  return p;
}

export interface Timestamp {
  seconds: string | number;
  nanos: number;
}

// containerd sends Go's zero time.Time (0001-01-01T00:00:00Z) for "never", e.g. exited_at of a live task.
const GO_ZERO_TIME_SECONDS = -62135596800;

function isUnset(ts: Timestamp | null | undefined): ts is null | undefined {
  if (!ts) return true;
  const s = Number(ts.seconds);
  return (s === 0 && ts.nanos === 0) || s <= GO_ZERO_TIME_SECONDS;
}

/** google.protobuf.Timestamp → Date (ms precision); null when unset, epoch zero or Go's zero time. */
export function timestampToDate(ts: Timestamp | null | undefined): Date | null {
  if (isUnset(ts)) return null;
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6));
}

/** google.protobuf.Timestamp → RFC 3339 with nanoseconds (what the Docker API prints). */
export function timestampToRfc3339(ts: Timestamp | null | undefined): string {
  if (isUnset(ts)) return ZERO_TIME;
  const iso = new Date(Number(ts.seconds) * 1000).toISOString().slice(0, 19);
  return ts.nanos ? `${iso}.${String(ts.nanos).padStart(9, '0')}Z` : `${iso}Z`;
}

export function dateToTimestamp(d: Date): Timestamp {
  const ms = d.getTime();
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
}
