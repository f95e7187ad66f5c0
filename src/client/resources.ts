// Networks, volumes, plugins and the cluster family (swarm, nodes, services, tasks, secrets,
// configs) in the SDK. The cluster family is thinner: generic list/inspect/create/update/remove
// over the object kinds, as the daemon's answers for a node outside any cluster are mostly 503s.
import type { VolumeCreateRequest, VolumeView } from '../types/volumes.ts';
import type { ClusterObject, ClusterObjectKind } from '../types/cluster.ts';
import type { Network, NetworkCreateResponse, Plugin, Swarm } from '../types/api/index.ts';
import type { EndpointSettings } from '../types/container-api.ts';
import type { Filters } from './containers.ts';
import type { HttpTransport } from './http.ts';
import type { Readable } from 'node:stream';
import type { JsonMessage } from '../types/distribution.ts';
import { progress } from './images.ts';
import { demux, rawFrames, type Frame } from './streams.ts';

export interface PluginPrivilege {
  Name: string;
  Description: string;
  Value: string[];
}

type Sig = { signal?: AbortSignal };
const enc = encodeURIComponent;

export interface NetworkCreateOptions {
  Name: string;
  Driver?: string;
  Scope?: string;
  Internal?: boolean;
  Attachable?: boolean;
  Ingress?: boolean;
  EnableIPv4?: boolean;
  EnableIPv6?: boolean;
  IPAM?: {
    Driver?: string;
    Config?: { Subnet?: string; IPRange?: string; Gateway?: string; AuxiliaryAddresses?: Record<string, string> }[];
    Options?: Record<string, string>;
  };
  Options?: Record<string, string>;
  Labels?: Record<string, string>;
}

export class NetworksApi {
  constructor(private readonly t: HttpTransport) {}
  list(opts: Sig & { filters?: Filters } = {}): Promise<Network[]> {
    return this.t.json('GET', '/networks', { query: { filters: opts.filters }, signal: opts.signal });
  }
  inspect(id: string, opts: Sig & { verbose?: boolean; scope?: string } = {}): Promise<Network> {
    return this.t.json('GET', `/networks/${enc(id)}`, { query: { verbose: opts.verbose, scope: opts.scope }, signal: opts.signal });
  }
  create(body: NetworkCreateOptions, opts: Sig = {}): Promise<NetworkCreateResponse> {
    return this.t.json('POST', '/networks/create', { body, signal: opts.signal });
  }
  remove(id: string, opts: Sig = {}): Promise<void> {
    return this.t.call('DELETE', `/networks/${enc(id)}`, opts);
  }
  connect(id: string, container: string, endpoint: EndpointSettings = {}, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/networks/${enc(id)}/connect`, {
      body: { Container: container, EndpointConfig: endpoint },
      signal: opts.signal,
    });
  }
  disconnect(id: string, container: string, opts: Sig & { force?: boolean } = {}): Promise<void> {
    return this.t.call('POST', `/networks/${enc(id)}/disconnect`, {
      body: { Container: container, Force: !!opts.force },
      signal: opts.signal,
    });
  }
  prune(opts: Sig & { filters?: Filters } = {}): Promise<{ NetworksDeleted: string[] | null }> {
    return this.t.json('POST', '/networks/prune', { query: { filters: opts.filters }, signal: opts.signal });
  }
}

export class VolumesApi {
  constructor(private readonly t: HttpTransport) {}
  list(opts: Sig & { filters?: Filters } = {}): Promise<{ Volumes: VolumeView[] | null; Warnings: string[] | null }> {
    return this.t.json('GET', '/volumes', { query: { filters: opts.filters }, signal: opts.signal });
  }
  inspect(name: string, opts: Sig = {}): Promise<VolumeView> {
    return this.t.json('GET', `/volumes/${enc(name)}`, opts);
  }
  create(body: VolumeCreateRequest = {}, opts: Sig = {}): Promise<VolumeView> {
    return this.t.json('POST', '/volumes/create', { body, signal: opts.signal });
  }
  remove(name: string, opts: Sig & { force?: boolean } = {}): Promise<void> {
    return this.t.call('DELETE', `/volumes/${enc(name)}`, { query: { force: opts.force }, signal: opts.signal });
  }
  prune(opts: Sig & { filters?: Filters } = {}): Promise<{ VolumesDeleted: string[] | null; SpaceReclaimed: number }> {
    return this.t.json('POST', '/volumes/prune', { query: { filters: opts.filters }, signal: opts.signal });
  }
}

export class PluginsApi {
  constructor(private readonly t: HttpTransport) {}
  list(opts: Sig & { filters?: Filters } = {}): Promise<Plugin[]> {
    return this.t.json('GET', '/plugins', { query: { filters: opts.filters }, signal: opts.signal });
  }
  inspect(name: string, opts: Sig = {}): Promise<Plugin> {
    return this.t.json('GET', `/plugins/${name}/json`, opts);
  }
  privileges(remote: string, opts: Sig = {}): Promise<{ Name: string; Description: string; Value: string[] }[]> {
    return this.t.json('GET', '/plugins/privileges', { query: { remote }, signal: opts.signal });
  }
  enable(name: string, opts: Sig & { timeout?: number } = {}): Promise<void> {
    return this.t.call('POST', `/plugins/${name}/enable`, { query: { timeout: opts.timeout }, signal: opts.signal });
  }
  disable(name: string, opts: Sig & { force?: boolean } = {}): Promise<void> {
    return this.t.call('POST', `/plugins/${name}/disable`, { query: { force: opts.force }, signal: opts.signal });
  }
  remove(name: string, opts: Sig & { force?: boolean } = {}): Promise<void> {
    return this.t.call('DELETE', `/plugins/${name}`, { query: { force: opts.force }, signal: opts.signal });
  }
  set(name: string, settings: string[], opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/plugins/${name}/set`, { body: settings, signal: opts.signal });
  }
  /** POST /plugins/create: a tar of config.json and rootfs/. */
  create(name: string, tar: Readable, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', '/plugins/create', {
      query: { name },
      body: tar,
      headers: { 'Content-Type': 'application/x-tar' },
      signal: opts.signal,
    });
  }
  /** POST /plugins/pull: installs `remote` (as `name`) with the privileges granted; the name it got and the progress. */
  async install(
    remote: string,
    opts: Sig & { name?: string; privileges?: PluginPrivilege[]; registryAuth?: string } = {},
  ): Promise<{ name: string; progress: AsyncGenerator<JsonMessage> }> {
    const res = await this.t.request('POST', '/plugins/pull', {
      query: { remote, name: opts.name },
      body: opts.privileges ?? [],
      headers: { 'X-Registry-Auth': opts.registryAuth ?? 'e30=' },
      signal: opts.signal,
    });
    return { name: String(res.headers['docker-plugin-name'] ?? opts.name ?? remote), progress: progress(res) };
  }
  /** POST /plugins/{name}/upgrade to `remote`. */
  async *upgrade(
    name: string,
    remote: string,
    opts: Sig & { privileges?: PluginPrivilege[]; registryAuth?: string } = {},
  ): AsyncGenerator<JsonMessage> {
    const res = await this.t.request('POST', `/plugins/${name}/upgrade`, {
      query: { remote },
      body: opts.privileges ?? [],
      headers: { 'X-Registry-Auth': opts.registryAuth ?? 'e30=' },
      signal: opts.signal,
    });
    yield* progress(res);
  }
  async *push(name: string, opts: Sig & { registryAuth?: string } = {}): AsyncGenerator<JsonMessage> {
    const res = await this.t.request('POST', `/plugins/${name}/push`, {
      headers: { 'X-Registry-Auth': opts.registryAuth ?? 'e30=' },
      signal: opts.signal,
    });
    yield* progress(res);
  }
}

export class ClusterApi {
  constructor(private readonly t: HttpTransport) {}
  inspect(opts: Sig = {}): Promise<Swarm> {
    return this.t.json('GET', '/swarm', opts);
  }
  init(body: Record<string, unknown>, opts: Sig = {}): Promise<string> {
    return this.t.json('POST', '/swarm/init', { body, signal: opts.signal });
  }
  join(body: Record<string, unknown>, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', '/swarm/join', { body, signal: opts.signal });
  }
  leave(opts: Sig & { force?: boolean } = {}): Promise<void> {
    return this.t.call('POST', '/swarm/leave', { query: { force: opts.force }, signal: opts.signal });
  }
  unlockKey(opts: Sig = {}): Promise<{ UnlockKey: string }> {
    return this.t.json('GET', '/swarm/unlockkey', opts);
  }
  /** POST /swarm/update: a new spec at `version`, optionally rotating the join tokens or the unlock key. */
  updateSwarm(
    version: number,
    spec: Record<string, unknown>,
    opts: Sig & { rotateWorkerToken?: boolean; rotateManagerToken?: boolean; rotateManagerUnlockKey?: boolean } = {},
  ): Promise<void> {
    const query = {
      version,
      rotateWorkerToken: opts.rotateWorkerToken,
      rotateManagerToken: opts.rotateManagerToken,
      rotateManagerUnlockKey: opts.rotateManagerUnlockKey,
    };
    return this.t.call('POST', '/swarm/update', { query, body: spec, signal: opts.signal });
  }
  unlock(key: string, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', '/swarm/unlock', { body: { UnlockKey: key }, signal: opts.signal });
  }
  /** POST /services/create with the registry credentials (base64url JSON) for the image. */
  createService(
    spec: Record<string, unknown>,
    opts: Sig & { registryAuth?: string } = {},
  ): Promise<{ ID: string; Warnings?: string[] | null }> {
    const headers = opts.registryAuth ? { 'X-Registry-Auth': opts.registryAuth } : {};
    return this.t.json('POST', '/services/create', { body: spec, headers, signal: opts.signal });
  }
  /** POST /services/{id}/update: a new spec, or `rollback: 'previous'` to the previous one. */
  updateService(
    id: string,
    version: number,
    spec: Record<string, unknown>,
    opts: Sig & { rollback?: 'previous'; registryAuthFrom?: 'spec' | 'previous-spec'; registryAuth?: string } = {},
  ): Promise<{ Warnings?: string[] | null }> {
    const headers = opts.registryAuth ? { 'X-Registry-Auth': opts.registryAuth } : {};
    const query = { version, rollback: opts.rollback, registryAuthFrom: opts.registryAuthFrom };
    return this.t.json('POST', `/services/${enc(id)}/update`, { query, body: spec, headers, signal: opts.signal });
  }
  /** The logs of a service or a task (GET /services|tasks/{id}/logs), as frames. */
  async *logs(
    kind: 'services' | 'tasks',
    id: string,
    opts: Sig & { follow?: boolean; timestamps?: boolean; tail?: string; since?: string; details?: boolean; tty?: boolean } = {},
  ): AsyncGenerator<Frame> {
    const query = {
      stdout: true,
      stderr: true,
      follow: opts.follow,
      timestamps: opts.timestamps,
      tail: opts.tail,
      since: opts.since,
      details: opts.details,
    };
    const res = await this.t.request('GET', `/${kind}/${enc(id)}/logs`, { query, signal: opts.signal });
    yield* opts.tty ? rawFrames(res) : demux(res);
  }
  /** Lists one kind; `status` adds services' ServiceStatus (running and desired task counts). */
  list(kind: ClusterObjectKind, opts: Sig & { filters?: Filters; status?: boolean } = {}): Promise<ClusterObject[]> {
    return this.t.json('GET', `/${kind}`, { query: { filters: opts.filters, status: opts.status }, signal: opts.signal });
  }
  /** One object; `insertDefaults` fills a service spec's unset fields with the defaults (as inspect shows them). */
  get(kind: ClusterObjectKind, id: string, opts: Sig & { insertDefaults?: boolean } = {}): Promise<ClusterObject> {
    return this.t.json('GET', `/${kind}/${enc(id)}`, { query: { insertDefaults: opts.insertDefaults }, signal: opts.signal });
  }
  create(kind: 'services' | 'secrets' | 'configs', spec: Record<string, unknown>, opts: Sig = {}): Promise<{ ID: string }> {
    return this.t.json('POST', `/${kind}/create`, { body: spec, signal: opts.signal });
  }
  update(
    kind: 'nodes' | 'services' | 'secrets' | 'configs',
    id: string,
    version: number,
    spec: Record<string, unknown>,
    opts: Sig = {},
  ): Promise<unknown> {
    return this.t.json('POST', `/${kind}/${enc(id)}/update`, { query: { version }, body: spec, signal: opts.signal });
  }
  remove(kind: 'nodes' | 'services' | 'secrets' | 'configs', id: string, opts: Sig & { force?: boolean } = {}): Promise<void> {
    return this.t.call('DELETE', `/${kind}/${enc(id)}`, { query: { force: opts.force }, signal: opts.signal });
  }
}
