// The hostile-input generator: from a seed, raw HTTP requests a careless or malicious client could
// send to the API socket — bad JSON and wrong types in every body field, huge strings and arrays,
// deep nesting, bad query values and encodings, traversal in names and archive paths, wrong
// methods, truncated bodies, broken framing, pipelining and abrupt disconnects; and, when a run aims
// at it too, the web console's listener (hostile-console.ts). The same seed gives the same requests,
// so a failure found once can be replayed.
import { consoleCase, type ConsoleTarget } from './hostile-console.ts';

/** One request as bytes on the wire, and how the client behaves around it. */
export interface HostileCase {
  /** A short description for reports ("create: Env huge array"). */
  name: string;
  bytes: Buffer;
  /** Half-close the connection after writing (a truncated body). */
  halfClose?: boolean;
  /** Close the connection this many ms after writing, without reading (an abrupt disconnect). */
  abortAfterMs?: number;
  /** The server may close without an answer (e.g. after a protocol error it already answered). */
  mayCloseSilently?: boolean;
  /** With abortAfterMs: end with a reset (RST on TCP), not a close. */
  reset?: boolean;
  /** Sent to the web console's listener rather than the API socket (hostile-console.ts). */
  console?: boolean;
}

/** A small, fast, seeded PRNG (mulberry32). */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

/** Body fields of the endpoints that take JSON, with the type the API gives them. */
type FieldType = 'string' | 'int' | 'bool' | 'strings' | 'map' | 'object' | 'objects';

interface Endpoint {
  method: string;
  path: string;
  fields?: Record<string, FieldType>;
  /** Query parameters and their kind. */
  query?: Record<string, 'int' | 'bool' | 'string' | 'filters'>;
}

const HOST_CONFIG: Record<string, FieldType> = {
  Memory: 'int',
  MemorySwap: 'int',
  CpuShares: 'int',
  NanoCpus: 'int',
  CpuQuota: 'int',
  CpusetCpus: 'string',
  PidsLimit: 'int',
  Binds: 'strings',
  Links: 'strings',
  PortBindings: 'object',
  RestartPolicy: 'object',
  AutoRemove: 'bool',
  NetworkMode: 'string',
  Mounts: 'objects',
  Ulimits: 'objects',
  Devices: 'objects',
  CapAdd: 'strings',
  CapDrop: 'strings',
  Dns: 'strings',
  ExtraHosts: 'strings',
  LogConfig: 'object',
  Privileged: 'bool',
  ReadonlyRootfs: 'bool',
  SecurityOpt: 'strings',
  Tmpfs: 'map',
  ShmSize: 'int',
  Sysctls: 'map',
  BlkioWeight: 'int',
  OomScoreAdj: 'int',
  Init: 'bool',
  Runtime: 'string',
  GroupAdd: 'strings',
  VolumesFrom: 'strings',
};

const CREATE: Record<string, FieldType> = {
  Image: 'string',
  Cmd: 'strings',
  Entrypoint: 'strings',
  Env: 'strings',
  Labels: 'map',
  WorkingDir: 'string',
  User: 'string',
  Hostname: 'string',
  Domainname: 'string',
  ExposedPorts: 'object',
  Volumes: 'object',
  Tty: 'bool',
  OpenStdin: 'bool',
  StopSignal: 'string',
  StopTimeout: 'int',
  Healthcheck: 'object',
  HostConfig: 'object',
  NetworkingConfig: 'object',
  AttachStdin: 'bool',
  Shell: 'strings',
};

const ENDPOINTS: Endpoint[] = [
  { method: 'POST', path: '/containers/create', fields: CREATE, query: { name: 'string', platform: 'string' } },
  { method: 'POST', path: '/containers/{c}/update', fields: HOST_CONFIG },
  {
    method: 'POST',
    path: '/containers/{c}/exec',
    fields: {
      Cmd: 'strings',
      Env: 'strings',
      User: 'string',
      WorkingDir: 'string',
      Tty: 'bool',
      AttachStdout: 'bool',
      Privileged: 'bool',
      DetachKeys: 'string',
      ConsoleSize: 'strings',
    },
  },
  {
    method: 'POST',
    path: '/networks/create',
    fields: {
      Name: 'string',
      Driver: 'string',
      Internal: 'bool',
      Attachable: 'bool',
      EnableIPv6: 'bool',
      IPAM: 'object',
      Options: 'map',
      Labels: 'map',
      Scope: 'string',
    },
  },
  { method: 'POST', path: '/networks/{n}/connect', fields: { Container: 'string', EndpointConfig: 'object' } },
  { method: 'POST', path: '/networks/{n}/disconnect', fields: { Container: 'string', Force: 'bool' } },
  { method: 'POST', path: '/volumes/create', fields: { Name: 'string', Driver: 'string', DriverOpts: 'map', Labels: 'map' } },
  { method: 'POST', path: '/auth', fields: { username: 'string', password: 'string', serveraddress: 'string' } },
  {
    method: 'POST',
    path: '/commit',
    fields: CREATE,
    query: { container: 'string', repo: 'string', tag: 'string', pause: 'bool', changes: 'string' },
  },
  { method: 'POST', path: '/exec/{e}/start', fields: { Detach: 'bool', Tty: 'bool', ConsoleSize: 'strings' } },
  {
    method: 'POST',
    path: '/swarm/init',
    fields: { ListenAddr: 'string', AdvertiseAddr: 'string', DataPathPort: 'int', DefaultAddrPool: 'strings', Spec: 'object' },
  },
  { method: 'GET', path: '/containers/json', query: { all: 'bool', limit: 'int', size: 'bool', filters: 'filters' } },
  { method: 'GET', path: '/containers/{c}/json', query: { size: 'bool' } },
  {
    method: 'GET',
    path: '/containers/{c}/logs',
    query: { stdout: 'bool', stderr: 'bool', since: 'string', until: 'string', tail: 'string', timestamps: 'bool' },
  },
  { method: 'GET', path: '/containers/{c}/top', query: { ps_args: 'string' } },
  { method: 'GET', path: '/containers/{c}/stats', query: { stream: 'bool', 'one-shot': 'bool' } },
  { method: 'GET', path: '/containers/{c}/archive', query: { path: 'string' } },
  { method: 'HEAD', path: '/containers/{c}/archive', query: { path: 'string' } },
  { method: 'PUT', path: '/containers/{c}/archive', query: { path: 'string', noOverwriteDirNonDir: 'bool' } },
  { method: 'POST', path: '/containers/{c}/start', query: { detachKeys: 'string' } },
  { method: 'POST', path: '/containers/{c}/stop', query: { t: 'int', signal: 'string' } },
  { method: 'POST', path: '/containers/{c}/kill', query: { signal: 'string' } },
  { method: 'POST', path: '/containers/{c}/restart', query: { t: 'int' } },
  { method: 'POST', path: '/containers/{c}/rename', query: { name: 'string' } },
  { method: 'POST', path: '/containers/{c}/resize', query: { h: 'int', w: 'int' } },
  { method: 'POST', path: '/containers/{c}/wait', query: { condition: 'string' } },
  { method: 'DELETE', path: '/containers/{c}', query: { force: 'bool', v: 'bool', link: 'bool' } },
  { method: 'POST', path: '/containers/prune', query: { filters: 'filters' } },
  { method: 'GET', path: '/images/json', query: { all: 'bool', filters: 'filters', digests: 'bool' } },
  { method: 'GET', path: '/images/{i}/json' },
  { method: 'GET', path: '/images/{i}/history' },
  { method: 'POST', path: '/images/{i}/tag', query: { repo: 'string', tag: 'string' } },
  { method: 'DELETE', path: '/images/{i}', query: { force: 'bool', noprune: 'bool' } },
  { method: 'POST', path: '/images/create', query: { fromImage: 'string', tag: 'string', fromSrc: 'string', platform: 'string' } },
  { method: 'POST', path: '/images/load', query: { quiet: 'bool' } },
  { method: 'GET', path: '/images/get', query: { names: 'string' } },
  { method: 'POST', path: '/images/prune', query: { filters: 'filters' } },
  { method: 'GET', path: '/images/search', query: { term: 'string', limit: 'int', filters: 'filters' } },
  { method: 'GET', path: '/networks', query: { filters: 'filters' } },
  { method: 'GET', path: '/networks/{n}', query: { verbose: 'bool', scope: 'string' } },
  { method: 'DELETE', path: '/networks/{n}' },
  { method: 'POST', path: '/networks/prune', query: { filters: 'filters' } },
  { method: 'GET', path: '/volumes', query: { filters: 'filters' } },
  { method: 'GET', path: '/volumes/{v}' },
  { method: 'DELETE', path: '/volumes/{v}', query: { force: 'bool' } },
  { method: 'POST', path: '/volumes/prune', query: { filters: 'filters' } },
  { method: 'GET', path: '/events', query: { since: 'string', until: 'string', filters: 'filters' } },
  { method: 'GET', path: '/system/df', query: { type: 'string' } },
  { method: 'GET', path: '/exec/{e}/json' },
  { method: 'POST', path: '/exec/{e}/resize', query: { h: 'int', w: 'int' } },
  { method: 'GET', path: '/info' },
  { method: 'GET', path: '/version' },
  { method: 'GET', path: '/plugins', query: { filters: 'filters' } },
  { method: 'GET', path: '/nodes', query: { filters: 'filters' } },
  { method: 'POST', path: '/swarm/leave', query: { force: 'bool' } },
  // Cluster mode: answered by dockerd's 503 outside a cluster, by the cluster's own checks inside
  // one (`npm run hostile -- --cluster`).
  ...clusterEndpoints(),
];

function clusterEndpoints(): Endpoint[] {
  const SERVICE = {
    Name: 'string',
    Labels: 'map',
    TaskTemplate: 'object',
    Mode: 'object',
    UpdateConfig: 'object',
    RollbackConfig: 'object',
    EndpointSpec: 'object',
    Networks: 'objects',
  } as const;
  const FILE = { Name: 'string', Labels: 'map', Data: 'string', Driver: 'object', Templating: 'object' } as const;
  return [
    { method: 'POST', path: '/services/create', fields: SERVICE },
    {
      method: 'POST',
      path: '/services/{s}/update',
      fields: SERVICE,
      query: { version: 'int', rollback: 'string', registryAuthFrom: 'string' },
    },
    { method: 'GET', path: '/services', query: { filters: 'filters', status: 'bool' } },
    { method: 'GET', path: '/services/{s}', query: { insertDefaults: 'bool' } },
    { method: 'DELETE', path: '/services/{s}' },
    {
      method: 'GET',
      path: '/services/{s}/logs',
      query: { stdout: 'bool', stderr: 'bool', tail: 'string', since: 'string', timestamps: 'bool' },
    },
    { method: 'GET', path: '/tasks', query: { filters: 'filters' } },
    { method: 'GET', path: '/tasks/{t}' },
    { method: 'POST', path: '/secrets/create', fields: FILE },
    { method: 'POST', path: '/secrets/{x}/update', fields: FILE, query: { version: 'int' } },
    { method: 'DELETE', path: '/secrets/{x}' },
    { method: 'POST', path: '/configs/create', fields: FILE },
    { method: 'GET', path: '/configs', query: { filters: 'filters' } },
    // Cluster volumes: the update takes a version and a ClusterVolumeSpec.
    { method: 'PUT', path: '/volumes/{v}', fields: { Spec: 'object' }, query: { version: 'int' } },
    {
      method: 'POST',
      path: '/nodes/{x}/update',
      fields: { Name: 'string', Labels: 'map', Role: 'string', Availability: 'string' },
      query: { version: 'int' },
    },
    {
      method: 'POST',
      path: '/swarm/update',
      fields: {
        Name: 'string',
        Labels: 'map',
        Orchestration: 'object',
        Raft: 'object',
        Dispatcher: 'object',
        CAConfig: 'object',
        TaskDefaults: 'object',
      },
      query: { version: 'int', rotateWorkerToken: 'bool', rotateManagerToken: 'bool' },
    },
    {
      method: 'POST',
      path: '/swarm/join',
      fields: { ListenAddr: 'string', AdvertiseAddr: 'string', RemoteAddrs: 'strings', JoinToken: 'string' },
    },
    { method: 'POST', path: '/swarm/unlock', fields: { UnlockKey: 'string' } },
  ];
}

const NAMES = [
  'hostile',
  'web',
  '../../etc/passwd',
  '..',
  '.',
  '%2e%2e%2f%2e%2e',
  'a/b/../../c',
  ' spaced name',
  'UPPER',
  'x'.repeat(300),
  '\u00e9t\u00e9',
  'busybox',
  'busybox:latest',
  'sha256:' + '0'.repeat(64),
  '',
  '-rf',
  'nul%00byte',
];
const STRINGS = [
  '',
  ' ',
  '0',
  '-1',
  'true',
  'null',
  '{}',
  '[]',
  '../../../../etc/shadow',
  '/',
  '\u0000',
  '\ud800',
  '%',
  '%zz',
  'a'.repeat(70_000),
  '${PATH}',
  '$(reboot)',
  '\n\r\n',
  'busybox',
  '1e309',
  '9'.repeat(40),
];
const NUMBERS = [0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, 0.5, -0.0];

function deepArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function deepObject(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A JSON text of the wrong type, or of the right type but hostile size or shape. */
function hostileValue(rng: Rng, type: FieldType): string {
  const r = rng.int(14);
  switch (r) {
    case 0:
      return JSON.stringify(rng.pick(STRINGS));
    case 1:
      return String(rng.pick(NUMBERS));
    case 2:
      return rng.pick(['true', 'false', 'null']);
    case 3:
      return deepArray(rng.pick([10, 1000, 20_000]));
    case 4:
      return deepObject(rng.pick([10, 1000, 20_000]));
    case 5:
      return JSON.stringify(Array.from({ length: rng.pick([1000, 30_000, 100_000]) }, (_v, i) => (type === 'strings' ? `K${i}=v` : i)));
    case 6:
      return JSON.stringify(
        Object.fromEntries(Array.from({ length: rng.pick([100, 20_000]) }, (_v, i) => [`k${i}`, rng.pick(STRINGS.slice(0, 14))])),
      );
    case 7:
      return JSON.stringify({ [rng.pick(['__proto__', 'constructor', 'prototype'])]: { polluted: true } });
    case 8:
      return JSON.stringify([rng.pick(STRINGS), 1, null, {}, []]);
    case 9:
      return JSON.stringify({ Name: 1, Type: [], Source: { x: 1 }, Target: '/../..', Hard: 'x', Soft: -5 });
    case 10:
      return JSON.stringify('x'.repeat(rng.pick([1000, 1_000_000])));
    case 11:
      return type === 'map' ? JSON.stringify({ a: 1, b: null, c: [] }) : JSON.stringify([{ a: [[[]]] }]);
    case 12:
      return '"\\ud800\\udc00\\u0000"';
    default:
      return JSON.stringify(rng.pick(NAMES));
  }
}

function body(rng: Rng, fields: Record<string, FieldType>): string {
  const mode = rng.int(10);
  if (mode === 0)
    return rng.pick([
      '{',
      '{"a":',
      '[',
      'nul',
      '{"Image":"busybox",}',
      '{"Image":"busybox"}{"x":1}',
      '\u0000',
      '{"a":1e999999}',
      '"just a string"',
      '[1,2,3]',
      '42',
      'null',
    ]);
  const names = Object.keys(fields);
  const parts: string[] = [];
  const count = 1 + rng.int(3);
  for (let i = 0; i < count; i++) {
    const name = rng.pick(names);
    const type = fields[name]!;
    if (name === 'HostConfig' && rng.int(2) === 0) {
      const hc = Object.keys(HOST_CONFIG);
      const inner = rng.pick(hc);
      parts.push(`"HostConfig":{"${inner}":${hostileValue(rng, HOST_CONFIG[inner]!)}}`);
    } else {
      parts.push(`${JSON.stringify(name)}:${hostileValue(rng, type)}`);
    }
  }
  if (fields.Image && rng.int(2) === 0) parts.push('"Image":"busybox"');
  return `{${parts.join(',')}}`;
}

function queryValue(rng: Rng, kind: 'int' | 'bool' | 'string' | 'filters'): string {
  const bad = [
    '',
    '-1',
    'abc',
    '1e3',
    '99999999999999999999',
    '0x10',
    '%ff',
    '%',
    '%00',
    'true',
    'NaN',
    encodeURIComponent('../..'),
    'a'.repeat(5000),
  ];
  if (kind === 'filters') {
    return encodeURIComponent(
      rng.pick([
        '{',
        '[]',
        '{"label":"x"}',
        '{"label":[1]}',
        '{"label":{"a":true}}',
        '{"until":["yesterday"]}',
        '{"name":["(("]}',
        '{"status":["bogus"]}',
        '{"dangling":["maybe"]}',
        '{"__proto__":["x"]}',
        '{"reference":["' + '*'.repeat(3000) + '"]}',
        JSON.stringify({ label: Array.from({ length: 5000 }, (_v, i) => `k${i}`) }),
      ]),
    );
  }
  return rng.pick(bad);
}

function target(rng: Rng, ep: Endpoint): string {
  let path = ep.path.replace(/\{(\w)\}/g, () => encodeURIComponent(rng.pick(NAMES)).replace(/%2F/g, rng.int(2) ? '/' : '%2F'));
  if (rng.int(4) === 0) path = `/v${rng.pick(['1.12', '1.24', '1.41', '1.44', '1.51', '1.99', '9', 'x', '1.5.1'])}${path}`;
  if (ep.query) {
    const qs = Object.entries(ep.query)
      .filter(() => rng.int(2) === 0)
      .map(([k, kind]) => `${k}=${queryValue(rng, kind)}`);
    if (qs.length) path += `?${qs.join('&')}`;
  }
  return path;
}

function request(method: string, path: string, payload?: string, extraHeaders: string[] = []): Buffer {
  const head = [`${method} ${path} HTTP/1.1`, 'Host: engine', 'Connection: close', ...extraHeaders];
  if (payload !== undefined) head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(payload)}`);
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${payload ?? ''}`);
}

/** Protocol-level abuse: framing, versions, methods, sizes, truncation, pipelining, disconnects. */
function protocolCase(rng: Rng): HostileCase {
  switch (rng.int(13)) {
    case 0:
      return {
        name: 'http: bad chunk framing',
        bytes: Buffer.from(
          'POST /containers/create HTTP/1.1\r\nHost: e\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
        ),
      };
    case 1:
      return {
        name: 'http: Content-Length with Transfer-Encoding',
        bytes: Buffer.from(
          'POST /containers/create HTTP/1.1\r\nHost: e\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
        ),
      };
    case 2:
      return { name: 'http: unknown version', bytes: Buffer.from('GET /_ping HTTP/7.3\r\nHost: e\r\n\r\n') };
    case 3:
      return { name: 'http: bad method token', bytes: Buffer.from('G(T /_ping HTTP/1.1\r\nHost: e\r\n\r\n') };
    case 4:
      return {
        name: 'http: oversized headers',
        bytes: Buffer.from(`GET /_ping HTTP/1.1\r\nHost: e\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      };
    case 5:
      return {
        name: 'http: truncated body, half-closed',
        bytes: Buffer.from(
          'POST /containers/create HTTP/1.1\r\nHost: e\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"Image":',
        ),
        halfClose: true,
      };
    case 6:
      return { name: 'http: CONNECT', bytes: Buffer.from('CONNECT engine:443 HTTP/1.1\r\nHost: engine:443\r\n\r\n') };
    case 7:
      return {
        name: 'http: pipelined requests',
        bytes: Buffer.concat([
          Buffer.from('GET /_ping HTTP/1.1\r\nHost: e\r\n\r\n'),
          Buffer.from('GET /version HTTP/1.1\r\nHost: e\r\n\r\n'),
          request('GET', '/info'),
        ]),
        mayCloseSilently: false,
      };
    case 8:
      return {
        name: 'http: disconnect mid-body',
        bytes: Buffer.from(
          'POST /containers/create HTTP/1.1\r\nHost: e\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"Image":"bus',
        ),
        abortAfterMs: 5,
      };
    case 9:
      return { name: 'http: disconnect before the answer', bytes: request('GET', '/containers/json?all=1'), abortAfterMs: 0 };
    case 11:
      return {
        name: 'http: an Upgrade header on a streaming route, then a reset',
        bytes: Buffer.from(
          `GET ${rng.pick(['/containers/hostile/stats', '/events', '/containers/hostile/logs?follow=1&stdout=1', '/containers/hostile/attach?stream=1&stdout=1'])} HTTP/1.1\r\nHost: e\r\nConnection: Upgrade\r\nUpgrade: ${rng.pick(['tcp', 'websocket', 'x'])}\r\n\r\n`,
        ),
        abortAfterMs: 1200,
        reset: true,
      };
    case 10:
      return { name: 'http: garbage', bytes: Buffer.from(Array.from({ length: 200 }, () => rng.int(256))) };
    default:
      return {
        name: 'http: bad content length',
        bytes: Buffer.from('POST /volumes/create HTTP/1.1\r\nHost: e\r\nContent-Length: -5\r\n\r\n{}'),
      };
  }
}

/** Endpoints of a run that keeps the daemon in its cluster: no `swarm leave`. */
const IN_CLUSTER = ENDPOINTS.filter((e) => e.path !== '/swarm/leave');

/**
 * The i-th case of a run with this seed (`keepCluster`: never a `swarm leave`). With `console`, about
 * one case in four goes to the web console's listener instead (drawn from a second generator, so the
 * API cases of a seed stay what they were).
 */
export function hostileCase(seed: number, i: number, keepCluster = false, console?: ConsoleTarget): HostileCase {
  if (console) {
    const crng = new Rng((seed * 7_919 + i * 31 + 17) >>> 0);
    if (crng.int(4) === 0) return consoleCase(crng, console, () => hostileCase(seed, i, keepCluster));
  }
  const rng = new Rng((seed * 1_000_003 + i) >>> 0);
  const kind = rng.int(20);
  if (kind < 3) return protocolCase(rng);
  if (kind === 19 && rng.int(2) === 0) return answerCase(rng);
  const ep = rng.pick(keepCluster ? IN_CLUSTER : ENDPOINTS);
  if (kind === 3) {
    const method = rng.pick(['PATCH', 'OPTIONS', 'TRACE', 'PUT', 'DELETE', 'GET']);
    return { name: `wrong method: ${method} ${ep.path}`, bytes: request(method, target(rng, ep)) };
  }
  if (ep.path === '/volumes/{v}' && ep.method === 'PUT' && rng.int(2) === 0) return volumeUpdateCase(rng);
  if (ep.fields && (ep.method === 'POST' || kind === 4)) {
    return { name: `${ep.method} ${ep.path}: hostile body`, bytes: request(ep.method, target(rng, ep), body(rng, ep.fields)) };
  }
  if (ep.path.endsWith('/archive') && ep.method === 'PUT') {
    return {
      name: 'PUT archive: hostile tar',
      bytes: request('PUT', target(rng, ep), hostileTar(rng), ['Content-Type: application/x-tar']),
    };
  }
  if (ep.path === '/images/load') {
    return {
      name: 'images/load: hostile tar',
      bytes: request('POST', target(rng, ep), hostileTar(rng), ['Content-Type: application/x-tar']),
    };
  }
  return { name: `${ep.method} ${ep.path}: hostile query`, bytes: request(ep.method, target(rng, ep)) };
}

/** PUT /volumes/{name}: versions and ClusterVolumeSpecs nearly right, or not at all. */
function volumeUpdateCase(rng: Rng): HostileCase {
  const version = rng.pick(['', '1', '-1', '0', '18446744073709551616', '1.5', 'x', '0x10', ' 1', '%00']);
  const spec = rng.pick([
    '{"Spec":{"Availability":"drain"}}',
    '{"Spec":{"Availability":"bogus"}}',
    '{"Spec":{"Availability":7}}',
    '{"Spec":{"Group":"g","AccessMode":{"Scope":"multi","Sharing":"all"}}}',
    '{"Spec":{"AccessMode":{"Scope":"sideways","MountVolume":{"FsType":"' + 'f'.repeat(5000) + '"}}}}',
    '{"Spec":{"CapacityRange":{"RequiredBytes":-1,"LimitBytes":1e308}}}',
    '{"Spec":{"Secrets":[{"Key":"k","Secret":"nope"},null]}}',
    '{"Spec":{"AccessibilityRequirements":{"Requisite":[{"Segments":{"a":1}}]}}}',
    '{"Spec":null}',
    '{"Spec":[]}',
    '{}',
    'null',
    '[]',
    '{"Spec":' + deepObject(200) + '}',
  ]);
  const name = encodeURIComponent(rng.pick(NAMES));
  return {
    name: 'PUT /volumes/{name}: cluster volume update',
    bytes: request('PUT', `/${rng.pick(['v1.51/', 'v1.41/', ''])}volumes/${name}${version ? `?version=${version}` : ''}`, spec),
  };
}

/** A tar (as a latin1 string, so it survives request()) with traversal, links out, or garbage. */
function hostileTar(rng: Rng): string {
  const names = ['../../../tmp/evil', '/etc/evil', 'a/../../b', 'ok.txt', 'dir/', 'link-out', 'manifest.json'];
  const blocks: Buffer[] = [];
  for (let i = 0; i < 1 + rng.int(3); i++) {
    const h = Buffer.alloc(512);
    h.write(rng.pick(names), 0, 'latin1');
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    const data = rng.int(3) === 0 ? Buffer.alloc(0) : Buffer.from('hostile');
    h.write(data.length.toString(8).padStart(11, '0') + '\0', 124);
    h.write('00000000000\0', 136);
    h.write(rng.pick(['0', '2', '1', '5', 'x']), 156);
    if (h[156] === 0x32 || h[156] === 0x31) h.write(rng.pick(['/etc/passwd', '../../../../root', 'ok.txt']), 157);
    h.write('ustar\x0000', 257, 'latin1');
    h.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
    blocks.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  if (rng.int(2) === 0) blocks.push(Buffer.alloc(1024));
  const tar = Buffer.concat(blocks);
  return (rng.int(4) === 0 ? tar.subarray(0, rng.int(tar.length)) : tar).toString('latin1');
}

/** A raw tar header block (ustar, checksum filled in) for an entry of type `type`. */
function tarHeader(name: string, type: string, size = 0, dev: [number, number] = [0, 0]): Buffer {
  const h = Buffer.alloc(512);
  h.write(name.slice(0, 100), 0, 'latin1');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(size.toString(8).padStart(11, '0') + '\0', 124);
  h.write('00000000000\0', 136);
  h.write(type, 156);
  h.write('ustar\x0000', 257, 'latin1');
  h.write(dev[0].toString(8).padStart(7, '0') + '\0', 329);
  h.write(dev[1].toString(8).padStart(7, '0') + '\0', 337);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return h;
}

function binaryRequest(method: string, path: string, body: Buffer, type: string): Buffer {
  const head = `${method} ${path} HTTP/1.1\r\nHost: engine\r\nConnection: close\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), body]);
}

/**
 * Inputs that once got a 5xx, JavaScript's words or a stall where dockerd answers a 4xx in its
 * own words: huge references, user patterns that a backtracking or size-limited regular
 * expression engine chokes on, archive paths over NAME_MAX or with NUL, device nodes in a PUT
 * archive, invalid platforms, an empty build context padded with zeros, JSON that is not JSON.
 */
function answerCase(rng: Rng): HostileCase {
  const filters = (f: Record<string, string[]>) => encodeURIComponent(JSON.stringify(f));
  const long = 'x'.repeat(100_000);
  switch (rng.int(14)) {
    case 0:
      return {
        name: 'answers: container reference of 100 000 characters',
        bytes: request(rng.pick(['GET', 'DELETE', 'POST']), `/containers/${long}/${rng.pick(['json', 'start', 'top', 'logs?stdout=1'])}`),
      };
    case 1:
      return {
        name: 'answers: name filter with regex metacharacters or huge',
        bytes: request(
          'GET',
          `/${rng.pick(['containers/json?all=1&', 'volumes?'])}filters=${filters({ name: [rng.pick(['((', '(a+)+$', '[z-a]', '\\', 'a**', long, '(x+x+)+y'])] })}`,
        ),
      };
    case 2:
      return {
        name: 'answers: reference filter of many stars',
        bytes: request(
          'GET',
          `/images/json?filters=${filters({ reference: [rng.pick(['*a'.repeat(3000) + 'x', '*'.repeat(5000), 'busy[box'])] })}`,
        ),
      };
    case 3:
      return {
        name: 'answers: archive path over NAME_MAX, PATH_MAX or with NUL',
        bytes: request(
          rng.pick(['GET', 'HEAD']),
          `/containers/hostile/archive?path=${rng.pick(['/' + 'b'.repeat(300), '/etc/' + 'c'.repeat(5000) + '/x', '/etc%00x', '%00', '/a'.repeat(3000)])}`,
        ),
      };
    case 4: {
      const type = rng.pick(['3', '4', '6']);
      const tar = Buffer.concat([tarHeader(`dev${type}`, type, 0, [1, 3]), Buffer.alloc(1024)]);
      return {
        name: 'answers: device node in a PUT archive',
        bytes: binaryRequest('PUT', '/containers/hostile/archive?path=/tmp', tar, 'application/x-tar'),
      };
    }
    case 5: {
      const tar = Buffer.concat([tarHeader('ok.txt', '0', 0), Buffer.alloc(1024)]);
      const name = 'n'.repeat(300);
      const pax = Buffer.from(`${(`path=${name}\n`.length + 4).toString()} path=${name}\n`);
      const long = Buffer.concat([tarHeader('PaxHeaders/x', 'x', pax.length), pax, Buffer.alloc((512 - (pax.length % 512)) % 512), tar]);
      return {
        name: 'answers: archive entry name over NAME_MAX',
        bytes: binaryRequest('PUT', '/containers/hostile/archive?path=/tmp', long, 'application/x-tar'),
      };
    }
    case 6:
      return {
        name: 'answers: create with an invalid platform',
        bytes: request(
          'POST',
          `/containers/create?platform=${rng.pick(['bogus', 'linux/*', 'a/b/c/d', 'lin%20ux', 'x'.repeat(5000)])}`,
          '{"Image":"busybox"}',
        ),
      };
    case 7:
      return {
        name: 'answers: create asking for another platform than the image is',
        bytes: request(
          'POST',
          `/containers/create?platform=${rng.pick(['linux/arm64', 'windows/amd64', 'linux/s390x'])}`,
          '{"Image":"busybox","Cmd":["true"]}',
        ),
      };
    case 8:
      return {
        name: 'answers: pull with an invalid platform',
        bytes: request('POST', `/images/create?fromImage=busybox&tag=latest&platform=${rng.pick(['bogus', 'linux/*', '1/2/3/4'])}`),
      };
    case 9:
      return {
        name: 'answers: build context of zeros (an empty tar, padded)',
        bytes: binaryRequest('POST', '/build', Buffer.alloc(rng.pick([1024, 1 << 20, 8 << 20])), 'application/x-tar'),
      };
    case 10: {
      const tar = Buffer.concat([tarHeader('README', '0', 0), Buffer.alloc(1024), Buffer.alloc(4 << 20)]);
      return {
        name: 'answers: build context without a Dockerfile, padded',
        bytes: binaryRequest('POST', '/build', tar, 'application/x-tar'),
      };
    }
    case 11:
      return {
        name: 'answers: body that is not JSON',
        bytes: request(
          'POST',
          rng.pick(['/containers/create', '/networks/create', '/volumes/create', '/containers/hostile/update', '/containers/hostile/exec']),
          rng.pick([
            '{i}',
            '{"Name":"x",}',
            '{"a" 1}',
            '[1 2]',
            '{"a":tru}',
            '{"a":"\\x"}',
            '{',
            ' ',
            '{}{}',
            '-',
            '"\u0001"',
            '{"Image":"busybox"} x',
          ]),
        ),
      };
    case 12:
      return { name: 'answers: remove a running container without force', bytes: request('DELETE', '/containers/hostile') };
    default:
      return {
        name: 'answers: log option regex invalid or hostile',
        bytes: request(
          'POST',
          '/containers/create',
          JSON.stringify({
            Image: 'busybox',
            HostConfig: { LogConfig: { Type: 'json-file', Config: { 'env-regex': rng.pick(['((', '(a+)+$', long]) } } },
          }),
        ),
      };
  }
}
