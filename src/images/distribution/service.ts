// The distribution backend of the API: pull (identical concurrent pulls share one run), push,
// login, search and distribution inspect, configured from the live daemon configuration
// (registry-mirrors, insecure-registries, max-concurrent-*, max-download-attempts and proxies are
// read per request, so a reload applies to the next operation).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cleanIngestLeftovers } from './blob-writer.ts';
import { cleanStageLeftovers } from './staged-unpack.ts';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { EngineError, invalidParameter, notFound, unauthorized } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { ImageStore } from '../image-store.ts';
import {
  familiarName,
  familiarString,
  parseReference,
  referenceString,
  repoName,
  DEFAULT_DOMAIN,
  type Reference,
} from '../../util/image-reference.ts';
import type { EventPublisher } from '../../events/bus.ts';
import { publishImageEvent, publishImageEventFor } from '../../events/image-events.ts';
import type { AuthConfig, ImportRequest, JsonMessage, ProgressSink, SearchResult } from '../../types/distribution.ts';
import { hasCredentials, hostFromServerAddress } from './auth-config.ts';
import { insecureHint, RegistryError, translateRegistryError, statusText } from './errors.ts';
import { isIndex, parsePlatform, type ImageIndex, type Platform } from './media.ts';
import { renderProgress } from './progress.ts';
import { importImage } from '../import.ts';
import type { IncomingMessage } from 'node:http';
import { PULL_LEASE_LABEL, Puller, recordNameFor, type PullResult } from './pull.ts';
import { Pusher } from './push.ts';
import { NotV2Error, RegistrySession } from './registry-client.ts';
import { certsDir, RegistryHosts, OFFICIAL_INDEX_HOST, type Endpoint } from './registry-hosts.ts';
import { SharedOperations } from './shared.ts';
import { effectiveProxies, readAll, RegistryTransport, TransportError } from './transport.ts';

export interface DistributionDeps {
  client: SupervisorClient;
  images: ImageStore;
  snapshotter: string;
  config: () => DaemonConfig;
  log: Logger;
  /** containerd's io.containerd.content.v1.content directory, when the daemon runs containerd itself. */
  contentRoot?: string;
  /** The events stream (pull, push, import). */
  events?: EventPublisher;
  /** Unpack layers while they download (staged-unpack.ts); default on. false: through containerd's diff service. */
  stageLayers?: boolean;
  /** The stage workers send the layers' GETs themselves (worker-fetch.ts); default on. false: the main thread receives. */
  workerFetch?: boolean;
  /** Seconds before download retry n (default dockerd's 5 s × n). */
  retryDelaySeconds?: (attempt: number) => number;
}

export interface PullParams {
  fromImage: string;
  tag?: string;
  platform?: string;
  auth: AuthConfig;
}

const authKey = (a: AuthConfig) =>
  createHash('sha256')
    .update(JSON.stringify([a.username, a.password, a.identitytoken, a.registrytoken]))
    .digest('hex')
    .slice(0, 16);

export class DistributionService {
  readonly hosts: RegistryHosts;
  readonly transport: RegistryTransport;
  private readonly pulls = new SharedOperations<PullResult>();
  private readonly instance = `${process.pid}-${randomBytes(4).toString('hex')}`;
  /** Set only when containerd's content directory is really there (the direct blob path). */
  private readonly contentRoot: string | undefined;

  constructor(private readonly deps: DistributionDeps) {
    this.contentRoot = deps.contentRoot && existsSync(join(deps.contentRoot, 'ingest')) ? deps.contentRoot : undefined;
    const cfg = deps.config;
    this.hosts = new RegistryHosts(() => ({
      mirrors: cfg()['registry-mirrors'] ?? [],
      insecureRegistries: cfg()['insecure-registries'] ?? [],
    }));
    this.transport = new RegistryTransport(() =>
      effectiveProxies({
        httpProxy: cfg()['proxies.http-proxy'],
        httpsProxy: cfg()['proxies.https-proxy'],
        noProxy: cfg()['proxies.no-proxy'],
      }),
    );
  }

  /** Drops pull leases and temporary blob files a previous daemon process left behind (it was killed mid-pull). */
  async dropStaleLeases(): Promise<void> {
    if (this.contentRoot) await cleanIngestLeftovers(this.contentRoot);
    if (this.contentRoot) await cleanStageLeftovers(dirname(this.contentRoot));
    const leases = await this.deps.client.leases.list().catch(() => []); // Cleaning other instances' pull leases is housekeeping; without the list there is nothing to clean.
    for (const l of leases) {
      if (l.labels[PULL_LEASE_LABEL] && l.labels[PULL_LEASE_LABEL] !== this.instance) {
        await this.deps.client.leases.delete(l.id).catch(() => undefined); // A lease another daemon removed first, or one containerd expired: either way it is gone.
      }
    }
  }

  close(): void {
    this.transport.close();
  }

  private limits() {
    const c = this.deps.config();
    return {
      maxConcurrentDownloads: c['max-concurrent-downloads'] || 3,
      maxConcurrentUploads: c['max-concurrent-uploads'] || 5,
      maxDownloadAttempts: c['max-download-attempts'] || 5,
    };
  }

  /** fromImage (+ tag, which may be a digest) → normalised reference; no tag at all means every tag. */
  static pullReference(fromImage: string, tag: string | undefined): { ref: Reference; allTags: boolean } {
    const base = parseReference(fromImage, { defaultTag: false });
    if (tag) {
      if (/^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/.test(tag))
        return { ref: { domain: base.domain, path: base.path, digest: tag }, allTags: false };
      return { ref: parseReference(`${repoName(base)}:${tag}`), allTags: false };
    }
    return { ref: base, allTags: !base.tag && !base.digest };
  }

  /** POST /images/create?fromImage=…: streams progress to `sink`; rejects on failure. */
  async pull(p: PullParams, sink: ProgressSink, signal: AbortSignal): Promise<void> {
    const { ref, allTags } = DistributionService.pullReference(p.fromImage, p.tag);
    const platform = p.platform ? parsePlatform(p.platform) : undefined;
    if (!allTags) {
      await this.pullOne(ref, platform, p.auth, sink, signal);
      await this.pulledEvent(ref);
      return;
    }
    // docker pull --all-tags: every tag of the repository, one after the other.
    const session = await this.firstSession(ref.domain, [`repository:${ref.path}:pull`], p.auth, true, signal);
    const tags = await session.listTags(ref.path, signal).catch((err) => {
      throw translateRegistryError(err);
    });
    if (!tags.length) throw notFound(`repository ${familiarName(ref)} has no tags`);
    for (const tag of tags) {
      await this.pullOne({ ...ref, tag }, platform, p.auth, sink, signal, true);
      await this.pulledEvent({ ...ref, tag });
    }
    sink({ status: `Status: Downloaded newer image for ${familiarName(ref)}` });
  }

  /** dockerd names the pulled reference (busybox:latest) as the event's actor. */
  private async pulledEvent(ref: Reference): Promise<void> {
    const name = familiarString(ref);
    if (!this.deps.events) return;
    const labels = await this.deps.images.resolve(referenceString(ref)).then(
      (img) => img.config.config?.Labels,
      () => undefined,
    );
    publishImageEvent(this.deps.events, 'pull', name, name, labels);
  }

  private pullOne(
    ref: Reference,
    platform: Platform | undefined,
    auth: AuthConfig,
    sink: ProgressSink,
    signal: AbortSignal,
    quietStatus = false,
  ): Promise<PullResult> {
    const key = `${recordNameFor(ref)}|${platform ? JSON.stringify(platform) : ''}|${authKey(auth)}`;
    const out: ProgressSink = quietStatus
      ? (m: JsonMessage) => {
          if (!m.status?.startsWith('Status: ')) sink(m);
        }
      : sink;
    return this.pulls.run(key, out, signal, (shared, opSignal) => {
      const deps = {
        client: this.deps.client,
        images: this.deps.images,
        snapshotter: this.deps.snapshotter,
        hosts: this.hosts,
        transport: this.transport,
        limits: () => this.limits(),
        log: this.deps.log,
        instance: this.instance,
        ...(this.deps.retryDelaySeconds ? { retryDelaySeconds: this.deps.retryDelaySeconds } : {}),
        ...(this.contentRoot ? { contentRoot: this.contentRoot } : {}),
        ...(this.deps.stageLayers !== undefined ? { stageLayers: this.deps.stageLayers } : {}),
        ...(this.deps.workerFetch !== undefined ? { workerFetch: this.deps.workerFetch } : {}),
      };
      return new Puller(deps, ref, auth, platform, shared, opSignal).run();
    });
  }

  /** How many pulls are running (identical ones count once). */
  get runningPulls(): number {
    return this.pulls.size;
  }

  /** A session on the first endpoint that answers its /v2/ ping (https, then http if insecure). */
  /**
   * A session with the registry of `ref`, for artifacts that are not images (managed plugins): pull
   * may go through mirrors, push never does. Connection errors come back in dockerd's words.
   */
  registrySession(ref: Reference, push: boolean, auth: AuthConfig, signal?: AbortSignal): Promise<RegistrySession> {
    return this.firstSession(ref.domain, [`repository:${ref.path}:${push ? 'pull,push' : 'pull'}`], auth, !push, signal);
  }

  private async firstSession(
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
        lastErr = this.describeTransport(err, ep);
        if (!(err instanceof TransportError) && !ep.mirror) break;
      }
    }
    throw lastErr instanceof EngineError ? lastErr : translateRegistryError(lastErr);
  }

  private describeTransport(err: unknown, ep: Endpoint): unknown {
    if (err instanceof TransportError && err.tlsProblem && !ep.insecure && !ep.mirror && ep.registry !== DEFAULT_DOMAIN)
      return new EngineError('INTERNAL', err.message + insecureHint(ep.registry, certsDir()));
    if (err instanceof NotV2Error) return new EngineError('INTERNAL', err.message);
    return err;
  }

  /** POST /images/{name}/push: `tag` empty pushes every local tag of the repository. */
  async push(name: string, tag: string | undefined, auth: AuthConfig, sink: ProgressSink, signal: AbortSignal): Promise<void> {
    const ref = parseReference(name, { defaultTag: false });
    if (ref.digest) throw invalidParameter('cannot push a digest reference');
    const repo = repoName(ref);
    let tags: string[];
    if (tag || ref.tag) tags = [tag || ref.tag!];
    else {
      const records = await this.deps.client.images.list();
      tags = records
        .map((r) => r.name)
        .filter((n) => n.startsWith(repo + ':') && !n.includes('@'))
        .map((n) => n.slice(repo.length + 1))
        .sort();
    }
    const images = [];
    for (const t of tags) {
      try {
        images.push({ tag: t, image: await this.deps.images.resolve(`${repo}:${t}`) });
      } catch {
        // skipped below when nothing is left
      }
    }
    if (!images.length) throw notFound(`An image does not exist locally with the tag: ${familiarName(ref)}`);
    sink({ status: `The push refers to repository [${repo}]` });
    const session = await this.firstSession(ref.domain, [`repository:${ref.path}:pull,push`], auth, false, signal);
    const pusher = new Pusher(
      {
        client: this.deps.client,
        limits: () => this.limits(),
        log: this.deps.log,
        ...(this.contentRoot ? { contentRoot: this.contentRoot } : {}),
      },
      session,
      ref,
      sink,
      signal,
    );
    for (const { tag: t, image } of images) {
      try {
        await pusher.pushTag(t, image);
      } catch (err) {
        throw translateRegistryError(err);
      }
      const pushed = familiarString({ ...ref, tag: t });
      publishImageEvent(this.deps.events, 'push', pushed, pushed, image.config.config?.Labels);
    }
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
        lastErr = this.describeTransport(err, ep);
        if (!(err instanceof TransportError)) break;
      }
    }
    throw lastErr instanceof EngineError ? lastErr : translateRegistryError(lastErr);
  }

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
      throw ep ? this.describeTransport(err, ep) : err;
    }
  }

  private async searchRegistry(registry: string, query: string, limit: number, auth: AuthConfig): Promise<SearchResult[]> {
    const session = await this.firstSession(registry, ['registry:catalog:*'], auth, false);
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
    const session = await this.firstSession(ref.domain, [`repository:${ref.path}:pull`], auth, true);
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

  /** POST /images/create?fromSrc=: `docker import` of the body ("-") or of a tar at an http(s) URL. */
  async importImage(req: ImportRequest, body: IncomingMessage, sink: ProgressSink, signal: AbortSignal): Promise<void> {
    let source: AsyncIterable<Uint8Array> = body;
    if (req.fromSrc !== '-') {
      let url: URL;
      try {
        url = new URL(req.fromSrc);
      } catch {
        throw invalidParameter(`invalid fromSrc ${JSON.stringify(req.fromSrc)}: want "-" or an http(s) URL`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw invalidParameter(`invalid fromSrc ${JSON.stringify(req.fromSrc)}: want "-" or an http(s) URL`);
      const res = await this.transport.request({ method: 'GET', url: url.toString(), signal });
      if (res.status !== 200) {
        res.body.resume();
        throw invalidParameter(`Get "${url}": unexpected status ${res.status} ${statusText(res.status)}`);
      }
      const total = Number(res.headers['content-length'] ?? 0);
      let got = 0;
      let last = 0;
      source = (async function* () {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          got += chunk.length;
          if (Date.now() - last > 100) {
            last = Date.now();
            sink({
              status: 'Importing',
              progressDetail: { current: got, ...(total ? { total } : {}) },
              progress: renderProgress(got, total),
            });
          }
          yield chunk;
        }
      })();
    }
    const result = await importImage(
      { client: this.deps.client, images: this.deps.images, snapshotter: this.deps.snapshotter },
      source,
      {
        ...(req.repo ? { repo: req.repo } : {}),
        ...(req.tag ? { tag: req.tag } : {}),
        ...(req.message ? { message: req.message } : {}),
        changes: req.changes,
        ...(req.platform ? { platform: req.platform } : {}),
      },
      (m) => sink(m as JsonMessage),
    );
    const lookup = (r: string) => this.deps.images.resolve(r);
    if (result.name) await publishImageEventFor(this.deps.events, lookup, 'tag', result.id, familiarString(parseReference(result.name)));
    await publishImageEventFor(this.deps.events, lookup, 'import', result.id, result.id);
    sink({ status: result.id });
  }

  /** The canonical record name a pull of fromImage/tag creates (for callers that need the image afterwards). */
  static recordName(fromImage: string, tag: string | undefined): string {
    return referenceString(DistributionService.pullReference(fromImage, tag).ref);
  }
}
