// The registry conversations that are not transfers: a session on the first endpoint of a registry
// that answers its /v2/ ping (for pull --all-tags, push and managed plugins), login (POST /auth),
// search (the v1 search API, or a v2 registry's catalog) and distribution inspect.
import { EngineError, invalidParameter, unauthorized } from '../../errors.ts';
import { DEFAULT_DOMAIN, parseReference, type Reference } from '../../util/image-reference.ts';
import type { AuthConfig, SearchResult } from '../../types/distribution.ts';
import { hasCredentials, hostFromServerAddress } from './auth-config.ts';
import { insecureHint, RegistryError, translateRegistryError, statusText } from './errors.ts';
import { isIndex, type ImageIndex, type Platform } from './media.ts';
import { NotV2Error } from './registry-auth.ts';
import { RegistrySession } from './registry-client.ts';
import { certsDir, OFFICIAL_INDEX_HOST, type Endpoint, type RegistryHosts } from './registry-hosts.ts';
import { readAll, type RegistryTransport, TransportError } from './transport.ts';

/** A connection failure in dockerd's words (the TLS hint for a registry not marked insecure); others as they are. */
export function describeTransport(err: unknown, ep: Endpoint): unknown {
  if (err instanceof TransportError && err.tlsProblem && !ep.insecure && !ep.mirror && ep.registry !== DEFAULT_DOMAIN)
    return new EngineError('INTERNAL', err.message + insecureHint(ep.registry, certsDir()));
  if (err instanceof NotV2Error) return new EngineError('INTERNAL', err.message);
  return err;
}

export class RegistryAccess {
  constructor(
    private readonly hosts: RegistryHosts,
    private readonly transport: RegistryTransport,
  ) {}

  /**
   * A session with the registry of `ref`, for artifacts that are not images (managed plugins): pull
   * may go through mirrors, push never does. Connection errors come back in dockerd's words.
   */
  registrySession(ref: Reference, push: boolean, auth: AuthConfig, signal?: AbortSignal): Promise<RegistrySession> {
    return this.firstSession(ref.domain, [`repository:${ref.path}:${push ? 'pull,push' : 'pull'}`], auth, !push, signal);
  }

  /** A session on the first endpoint that answers its /v2/ ping (https, then http if insecure). */
  async firstSession(
    registry: string,
    scopes: string[],
    auth: AuthConfig,
    mirrors: boolean,
    signal?: AbortSignal,
    opts: { offlineToken?: boolean } = {},
  ): Promise<RegistrySession> {
    const endpoints = await this.hosts.endpoints(registry, { mirrors });
    let lastErr: unknown;
    for (const ep of endpoints) {
      const session = new RegistrySession(this.transport, ep, auth, scopes, opts);
      try {
        await session.ping(signal);
        return session;
      } catch (err) {
        lastErr = describeTransport(err, ep);
        if (!(err instanceof TransportError) && !ep.mirror) break;
      }
    }
    throw lastErr instanceof EngineError ? lastErr : translateRegistryError(lastErr);
  }

  /** POST /auth: checks the credentials against the registry (dockerd's login sequence). */
  async login(auth: AuthConfig): Promise<{ Status: string; IdentityToken: string }> {
    const registry = hostFromServerAddress(auth.serveraddress);
    const endpoints = await this.hosts.endpoints(registry, { mirrors: false });
    let lastErr: unknown;
    for (const ep of endpoints) {
      const session = new RegistrySession(this.transport, ep, auth, [], { offlineToken: true });
      const url = `${ep.url}/v2/`;
      try {
        const challenge = await session.ping();
        if (challenge && !hasCredentials(auth)) throw unauthorized(`login attempt to ${url} failed with status: 401 Unauthorized`);
        const res = await session.send('GET', '/v2/');
        res.body.resume();
        if (res.status === 200) return { Status: 'Login Succeeded', IdentityToken: session.refreshToken };
        throw unauthorized(`login attempt to ${url} failed with status: ${res.status} ${statusText(res.status)}`);
      } catch (err) {
        if (err instanceof EngineError && err.code === 'UNAUTHORIZED') throw err;
        if (err instanceof RegistryError)
          throw unauthorized(err.status === 401 || err.status === 403 ? `Get "${url}": ${err.message}` : err.message);
        lastErr = describeTransport(err, ep);
        if (!(err instanceof TransportError)) break;
      }
    }
    throw lastErr instanceof EngineError ? lastErr : translateRegistryError(lastErr);
  }
}

export class RegistryQueries {
  constructor(
    private readonly access: RegistryAccess,
    private readonly transport: RegistryTransport,
  ) {}

  /** GET /images/search: the registry's v1 search; for registries without it, their v2 catalog. */
  async search(term: string, limit: number, filters: Map<string, string[]>, auth: AuthConfig): Promise<SearchResult[]> {
    if (limit < 1 || limit > 100) throw invalidParameter(`limit ${limit} is outside the range of [1, 100]`);
    for (const k of filters.keys())
      if (!['is-official', 'is-automated', 'stars'].includes(k)) throw invalidParameter(`invalid filter '${k}'`);
    let registry = DEFAULT_DOMAIN;
    let query = term;
    const slash = term.indexOf('/');
    if (slash > 0) {
      const first = term.slice(0, slash);
      if (first.includes('.') || first.includes(':') || first === 'localhost') {
        registry = hostFromServerAddress(first);
        query = term.slice(slash + 1);
      }
    }
    let results =
      registry === DEFAULT_DOMAIN
        ? await this.searchV1(`https://${OFFICIAL_INDEX_HOST}`, undefined, query, limit)
        : await this.searchRegistry(registry, query, limit, auth);
    const bool = (k: string) => filters.get(k)?.[0];
    if (bool('is-official') !== undefined)
      results = results.filter((r) => r.is_official === (bool('is-official') === 'true' || bool('is-official') === '1'));
    if (bool('is-automated') !== undefined)
      results = results.filter((r) => r.is_automated === (bool('is-automated') === 'true' || bool('is-automated') === '1'));
    const stars = Number(bool('stars') ?? 0);
    if (stars) results = results.filter((r) => r.star_count >= stars);
    return results.slice(0, limit);
  }

  private async searchV1(base: string, ep: Endpoint | undefined, query: string, limit: number): Promise<SearchResult[]> {
    try {
      const res = await this.transport.request({
        method: 'GET',
        url: `${base}/v1/search?q=${encodeURIComponent(query)}&n=${limit}`,
        ...(ep ? { tls: ep.tls } : {}),
        idleTimeoutMs: 15_000,
      });
      if (res.status !== 200) {
        res.body.resume();
        throw new RegistryError(res.status, [], `Unexpected status code ${res.status}`);
      }
      const body = JSON.parse((await readAll(res.body)).toString('utf8')) as { results?: Partial<SearchResult>[] };
      return (body.results ?? []).map((r) => ({
        name: String(r.name ?? ''),
        description: String(r.description ?? ''),
        star_count: Number(r.star_count ?? 0),
        is_official: !!r.is_official,
        is_automated: !!r.is_automated,
      }));
    } catch (err) {
      throw ep ? describeTransport(err, ep) : err;
    }
  }

  private async searchRegistry(registry: string, query: string, limit: number, auth: AuthConfig): Promise<SearchResult[]> {
    const session = await this.access.firstSession(registry, ['registry:catalog:*'], auth, false);
    try {
      return (await this.searchV1(session.endpoint.url, session.endpoint, query, limit)).map((r) => ({
        ...r,
        name: `${registry}/${r.name}`,
      }));
    } catch (err) {
      if (!(err instanceof RegistryError) || err.status !== 404) throw translateRegistryError(err);
    }
    // A v2-only registry (distribution, the one in Debian): its catalog, filtered by the term.
    const repos = await session.catalog(1000).catch((err) => {
      throw translateRegistryError(err);
    });
    return repos
      .filter((r) => r.includes(query))
      .map((r) => ({ name: `${registry}/${r}`, description: '', star_count: 0, is_official: false, is_automated: false }));
  }

  /** GET /distribution/{name}/json: the descriptor the reference resolves to and its platforms. */
  async inspect(
    name: string,
    auth: AuthConfig,
  ): Promise<{ Descriptor: { mediaType: string; digest: string; size: number }; Platforms: Platform[] }> {
    const ref = parseReference(name);
    const session = await this.access.firstSession(ref.domain, [`repository:${ref.path}:pull`], auth, true);
    try {
      const m = await session.getManifest(ref.path, ref.digest ?? ref.tag!);
      const Descriptor = { mediaType: m.mediaType, digest: m.digest, size: m.bytes.length };
      if (isIndex(m.mediaType)) {
        const index = JSON.parse(m.bytes.toString('utf8')) as ImageIndex;
        return { Descriptor, Platforms: index.manifests.filter((d) => d.platform).map((d) => d.platform!) };
      }
      const manifest = JSON.parse(m.bytes.toString('utf8')) as { config?: { digest: string } };
      const Platforms: Platform[] = [];
      if (manifest.config?.digest) {
        const res = await session.getBlob(ref.path, manifest.config.digest);
        const cfg = JSON.parse((await readAll(res.body, 32 << 20)).toString('utf8')) as Partial<Platform> & { variant?: string };
        Platforms.push({
          architecture: cfg.architecture ?? '',
          os: cfg.os ?? '',
          ...(cfg.variant ? { variant: cfg.variant } : {}),
          ...(cfg['os.version'] ? { 'os.version': cfg['os.version'] } : {}),
        });
      }
      return { Descriptor, Platforms };
    } catch (err) {
      throw translateRegistryError(err);
    }
  }
}
