// EngineClient, the SDK's entry: one connection setting (explicit or from ENGINE_*), the API
// version (ENGINE_API_VERSION or negotiated through /_ping), and the endpoint families as members;
// system endpoints (ping, info, version, events, df, auth, build-cache prune) directly on it.
import type { AuthConfig } from '../types/distribution.ts';
import type { EventMessage, SystemDataUsageResponse, SystemInfo, SystemVersion } from '../types/api/index.ts';
import type { GoJson } from '../types/go-nil.ts';
import { ContainersApi, ExecApi, type Filters } from './containers.ts';
import { settingsFromEnv, type ConnectionSettings, type SettingsInput } from './host.ts';
import { HttpTransport } from './http.ts';
import { ImagesApi } from './images.ts';
import { ClusterApi, NetworksApi, PluginsApi, VolumesApi } from './resources.ts';
import { collect, jsonLines } from './streams.ts';

type Sig = { signal?: AbortSignal };

export interface ClientOptions extends SettingsInput {
  /** Ready-made settings (overrides host/tls*). */
  settings?: ConnectionSettings;
  /** A fixed API version; default ENGINE_API_VERSION, else negotiated. */
  version?: string;
  env?: NodeJS.ProcessEnv;
}

export interface PingResult {
  apiVersion: string;
  osType: string;
  experimental: boolean;
  builderVersion?: string;
  swarm?: string;
}

/** GET /system/df: the API's SystemDataUsageResponse as Go writes it (nil lists and maps as null). */
export type DiskUsage = GoJson<SystemDataUsageResponse>;

export class EngineClient {
  readonly transport: HttpTransport;
  readonly containers: ContainersApi;
  readonly exec: ExecApi;
  readonly images: ImagesApi;
  readonly networks: NetworksApi;
  readonly volumes: VolumesApi;
  readonly plugins: PluginsApi;
  readonly cluster: ClusterApi;

  constructor(opts: ClientOptions = {}) {
    const env = opts.env ?? process.env;
    const settings = opts.settings ?? settingsFromEnv(opts, env);
    this.transport = new HttpTransport(settings, opts.version ?? (env.ENGINE_API_VERSION || undefined));
    this.containers = new ContainersApi(this.transport);
    this.exec = new ExecApi(this.transport);
    this.images = new ImagesApi(this.transport);
    this.networks = new NetworksApi(this.transport);
    this.volumes = new VolumesApi(this.transport);
    this.plugins = new PluginsApi(this.transport);
    this.cluster = new ClusterApi(this.transport);
  }

  /** The API version in use (negotiated on first use unless fixed). */
  apiVersion(opts: Sig = {}): Promise<string> {
    return this.transport.version(opts.signal);
  }

  async ping(opts: Sig = {}): Promise<PingResult> {
    const res = await this.transport.request('GET', '/_ping', { unversioned: true, signal: opts.signal });
    await collect(res);
    const h = res.headers;
    return {
      apiVersion: String(h['api-version'] ?? ''),
      osType: String(h['ostype'] ?? ''),
      experimental: h['docker-experimental'] === 'true',
      ...(h['builder-version'] ? { builderVersion: String(h['builder-version']) } : {}),
      ...(h['swarm'] ? { swarm: String(h['swarm']) } : {}),
    };
  }
  info(opts: Sig = {}): Promise<GoJson<SystemInfo>> {
    return this.transport.json('GET', '/info', opts);
  }
  version(opts: Sig = {}): Promise<GoJson<SystemVersion>> {
    return this.transport.json('GET', '/version', opts);
  }
  df(opts: Sig & { type?: string[] } = {}): Promise<DiskUsage> {
    return this.transport.json('GET', '/system/df', { query: { type: opts.type }, signal: opts.signal });
  }
  /** Checks credentials against a registry (POST /auth). */
  auth(auth: AuthConfig, opts: Sig = {}): Promise<{ Status: string; IdentityToken?: string }> {
    return this.transport.json('POST', '/auth', { body: auth, signal: opts.signal });
  }
  /** The event stream; ends at `until`, or when the signal aborts. */
  async *events(opts: Sig & { since?: string; until?: string; filters?: Filters } = {}): AsyncGenerator<EventMessage> {
    const res = await this.transport.request('GET', '/events', {
      query: { since: opts.since, until: opts.until, filters: opts.filters },
      signal: opts.signal,
    });
    yield* jsonLines<EventMessage>(res);
  }
  /** POST /build/prune; `keepStorage` bytes of cache are kept (sent as keep-storage and reserved-space). */
  buildPrune(
    opts: Sig & { all?: boolean; filters?: Filters; keepStorage?: number } = {},
  ): Promise<{ CachesDeleted: string[] | null; SpaceReclaimed: number }> {
    const query = { all: opts.all, filters: opts.filters, 'keep-storage': opts.keepStorage, 'reserved-space': opts.keepStorage };
    return this.transport.json('POST', '/build/prune', { query, signal: opts.signal });
  }
  /** Closes pooled connections. */
  close(): void {
    this.transport.close();
  }
}
