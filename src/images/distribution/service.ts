// The distribution backend of the API: pull (identical concurrent pulls share one run: pull-runs.ts),
// push, import, login, search and distribution inspect (registry-access.ts), configured from the
// live daemon configuration (registry-mirrors, insecure-registries, max-concurrent-*,
// max-download-attempts and proxies are read per request, so a reload applies to the next operation).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cleanIngestLeftovers } from './blob-writer.ts';
import { cleanStageLeftovers } from './stage/staged-unpack.ts';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { invalidParameter } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { ImageStore } from '../image-store.ts';
import { familiarString, parseReference, referenceString, repoName, type Reference } from '../../util/image-reference.ts';
import type { EventPublisher } from '../../events/bus.ts';
import { publishImageEvent, publishImageEventFor } from '../../events/image-events.ts';
import type { AuthConfig, ImportRequest, JsonMessage, ProgressSink, SearchResult } from '../../types/distribution.ts';
import { translateRegistryError, statusText } from './errors.ts';
import type { Platform } from './media.ts';
import { renderProgress } from './progress.ts';
import { importImage } from '../import.ts';
import type { IncomingMessage } from 'node:http';
import { PULL_LEASE_LABEL, type PullDeps } from './pull.ts';
import { pullReference, PullRuns, type PullParams } from './pull-runs.ts';
import { imagesToPush, Pusher } from './push.ts';
import { RegistryAccess, RegistryQueries } from './registry-access.ts';
import type { RegistrySession } from './registry-client.ts';
import { RegistryHosts } from './registry-hosts.ts';
import { effectiveProxies, RegistryTransport } from './transport.ts';

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

/** `docker import` of a tar at an http(s) URL: the response body, with "Importing" progress. */
async function urlSource(
  transport: RegistryTransport,
  fromSrc: string,
  sink: ProgressSink,
  signal: AbortSignal,
): Promise<AsyncIterable<Uint8Array>> {
  let url: URL;
  try {
    url = new URL(fromSrc);
  } catch {
    throw invalidParameter(`invalid fromSrc ${JSON.stringify(fromSrc)}: want "-" or an http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidParameter(`invalid fromSrc ${JSON.stringify(fromSrc)}: want "-" or an http(s) URL`);
  const res = await transport.request({ method: 'GET', url: url.toString(), signal });
  if (res.status !== 200) {
    res.body.resume();
    throw invalidParameter(`Get "${url}": unexpected status ${res.status} ${statusText(res.status)}`);
  }
  const total = Number(res.headers['content-length'] ?? 0);
  let got = 0;
  let last = 0;
  return (async function* () {
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

export class DistributionService {
  readonly hosts: RegistryHosts;
  readonly transport: RegistryTransport;
  private readonly access: RegistryAccess;
  private readonly queries: RegistryQueries;
  private readonly pullRuns: PullRuns;
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
    this.access = new RegistryAccess(this.hosts, this.transport);
    this.queries = new RegistryQueries(this.access, this.transport);
    this.pullRuns = new PullRuns(this.access, deps.images, deps.events, () => this.pullerDeps());
  }

  /** Drops pull leases and temporary blob files a previous daemon process left behind (it was killed mid-pull). */
  async dropStaleLeases(): Promise<void> {
    if (this.contentRoot) await cleanIngestLeftovers(this.contentRoot);
    if (this.contentRoot) await cleanStageLeftovers(dirname(this.contentRoot));
    // Cleaning other instances' pull leases is housekeeping; without the list there is nothing to clean.
    const leases = await this.deps.client.leases.list().catch((err: Error) => {
      this.deps.log.debug(`stale pull leases not listed: ${err.message}`);
      return [];
    });
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
    return pullReference(fromImage, tag);
  }

  /** POST /images/create?fromImage=…: streams progress to `sink`; rejects on failure. */
  pull(p: PullParams, sink: ProgressSink, signal: AbortSignal): Promise<void> {
    return this.pullRuns.pull(p, sink, signal);
  }

  /** How many pulls are running (identical ones count once). */
  get runningPulls(): number {
    return this.pullRuns.runningPulls;
  }

  private pullerDeps(): PullDeps {
    return {
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
  }

  /**
   * A session with the registry of `ref`, for artifacts that are not images (managed plugins): pull
   * may go through mirrors, push never does. Connection errors come back in dockerd's words.
   */
  registrySession(ref: Reference, push: boolean, auth: AuthConfig, signal?: AbortSignal): Promise<RegistrySession> {
    return this.access.registrySession(ref, push, auth, signal);
  }

  /** POST /images/{name}/push: `tag` empty pushes every local tag of the repository. */
  async push(name: string, tag: string | undefined, auth: AuthConfig, sink: ProgressSink, signal: AbortSignal): Promise<void> {
    const ref = parseReference(name, { defaultTag: false });
    if (ref.digest) throw invalidParameter('cannot push a digest reference');
    const repo = repoName(ref);
    const images = await imagesToPush(this.deps.client, this.deps.images, ref, tag);
    sink({ status: `The push refers to repository [${repo}]` });
    const session = await this.access.firstSession(ref.domain, [`repository:${ref.path}:pull,push`], auth, false, signal);
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
  login(auth: AuthConfig): Promise<{ Status: string; IdentityToken: string }> {
    return this.access.login(auth);
  }

  /** GET /images/search: the registry's v1 search; for registries without it, their v2 catalog. */
  search(term: string, limit: number, filters: Map<string, string[]>, auth: AuthConfig): Promise<SearchResult[]> {
    return this.queries.search(term, limit, filters, auth);
  }

  /** GET /distribution/{name}/json: the descriptor the reference resolves to and its platforms. */
  inspect(
    name: string,
    auth: AuthConfig,
  ): Promise<{ Descriptor: { mediaType: string; digest: string; size: number }; Platforms: Platform[] }> {
    return this.queries.inspect(name, auth);
  }

  /** POST /images/create?fromSrc=: `docker import` of the body ("-") or of a tar at an http(s) URL. */
  async importImage(req: ImportRequest, body: IncomingMessage, sink: ProgressSink, signal: AbortSignal): Promise<void> {
    const source: AsyncIterable<Uint8Array> = req.fromSrc === '-' ? body : await urlSource(this.transport, req.fromSrc, sink, signal);
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
    return referenceString(pullReference(fromImage, tag).ref);
  }
}
