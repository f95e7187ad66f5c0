// Images in the SDK: list/inspect/history/tag/remove/prune/search, pull and push and build and
// import as async iterables of progress messages, load and save as tar streams, commit, and the
// registry-side inspect. Credentials go base64url-encoded in X-Registry-Auth (X-Registry-Config for build).
import type { Readable } from 'node:stream';
import type { AuthConfig, JsonMessage, SearchResult } from '../types/distribution.ts';
import type { ImageDeleteItem } from '../types/images.ts';
import type { ContainerConfig } from '../types/container-api.ts';
import type { DistributionInspect, ImageInspect, ImageSummary } from '../types/api/index.ts';
import type { Filters } from './containers.ts';
import type { HttpTransport } from './http.ts';
import { jsonLines } from './streams.ts';

type Sig = { signal?: AbortSignal };

/** The X-Registry-Auth value: base64url of the JSON credentials ("e30" = {} when none). */
export function encodeAuth(auth: AuthConfig | undefined): string {
  return Buffer.from(JSON.stringify(auth ?? {})).toString('base64url');
}

/** A stream's progress messages; an error message ends it with an Error carrying the daemon's text. */
export async function* progress(src: AsyncIterable<Buffer>): AsyncGenerator<JsonMessage> {
  for await (const m of jsonLines<JsonMessage>(src)) {
    if (m.error || m.errorDetail)
      throw Object.assign(new Error(m.errorDetail?.message ?? m.error ?? 'unknown error'), { progressMessage: m });
    yield m;
  }
}

export interface BuildOptions extends Sig {
  tags?: string[];
  dockerfile?: string;
  buildArgs?: Record<string, string>;
  labels?: Record<string, string>;
  noCache?: boolean;
  pull?: boolean;
  rm?: boolean;
  forceRm?: boolean;
  target?: string;
  platform?: string;
  quiet?: boolean;
  /** Registry → credentials, for FROM images. */
  registryConfig?: Record<string, AuthConfig>;
}

export class ImagesApi {
  constructor(private readonly t: HttpTransport) {}

  list(opts: Sig & { all?: boolean; filters?: Filters; digests?: boolean } = {}): Promise<ImageSummary[]> {
    return this.t.json('GET', '/images/json', {
      query: { all: opts.all, filters: opts.filters, digests: opts.digests },
      signal: opts.signal,
    });
  }
  inspect(name: string, opts: Sig = {}): Promise<ImageInspect> {
    return this.t.json('GET', `/images/${name}/json`, opts);
  }
  history(
    name: string,
    opts: Sig = {},
  ): Promise<{ Id: string; Created: number; CreatedBy: string; Tags: string[] | null; Size: number; Comment: string }[]> {
    return this.t.json('GET', `/images/${name}/history`, opts);
  }
  tag(name: string, repo: string, tag?: string, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/images/${name}/tag`, { query: { repo, tag }, signal: opts.signal });
  }
  remove(name: string, opts: Sig & { force?: boolean; noprune?: boolean } = {}): Promise<ImageDeleteItem[]> {
    return this.t.json('DELETE', `/images/${name}`, { query: { force: opts.force, noprune: opts.noprune }, signal: opts.signal });
  }
  prune(opts: Sig & { filters?: Filters } = {}): Promise<{ ImagesDeleted: ImageDeleteItem[] | null; SpaceReclaimed: number }> {
    return this.t.json('POST', '/images/prune', { query: { filters: opts.filters }, signal: opts.signal });
  }
  search(term: string, opts: Sig & { limit?: number; filters?: Filters; auth?: AuthConfig } = {}): Promise<SearchResult[]> {
    return this.t.json('GET', '/images/search', {
      query: { term, limit: opts.limit, filters: opts.filters },
      headers: { 'X-Registry-Auth': encodeAuth(opts.auth) },
      signal: opts.signal,
    });
  }
  distributionInspect(name: string, opts: Sig & { auth?: AuthConfig } = {}): Promise<DistributionInspect> {
    return this.t.json('GET', `/distribution/${name}/json`, { headers: { 'X-Registry-Auth': encodeAuth(opts.auth) }, signal: opts.signal });
  }

  /** Pulls image[:tag|@digest]; the progress messages are to be read to the end (the pull completes with them). */
  async *pull(
    image: string,
    opts: Sig & { tag?: string; platform?: string; auth?: AuthConfig; all?: boolean } = {},
  ): AsyncGenerator<JsonMessage> {
    const res = await this.t.request('POST', '/images/create', {
      query: { fromImage: image, tag: opts.tag, platform: opts.platform },
      headers: { 'X-Registry-Auth': encodeAuth(opts.auth) },
      signal: opts.signal,
    });
    yield* progress(res);
  }
  async *push(name: string, opts: Sig & { tag?: string; auth?: AuthConfig; platform?: string } = {}): AsyncGenerator<JsonMessage> {
    const res = await this.t.request('POST', `/images/${name}/push`, {
      query: { tag: opts.tag, platform: opts.platform },
      headers: { 'X-Registry-Auth': encodeAuth(opts.auth) },
      signal: opts.signal,
    });
    yield* progress(res);
  }
  /** POST /images/create?fromSrc=-: imports a root filesystem tarball (or, with `source`, the URL the daemon fetches). */
  async *import(
    tar: Readable | Buffer | undefined,
    opts: Sig & { repo?: string; tag?: string; message?: string; changes?: string[]; platform?: string; source?: string } = {},
  ): AsyncGenerator<JsonMessage> {
    const fromSrc = opts.source ?? '-';
    const query = { fromSrc, repo: opts.repo, tag: opts.tag, message: opts.message, changes: opts.changes, platform: opts.platform };
    const res = await this.t.request('POST', '/images/create', {
      query,
      body: tar,
      headers: tar ? { 'Content-Type': 'application/x-tar' } : {},
      signal: opts.signal,
    });
    yield* progress(res);
  }
  /** Builds from a tar context (the daemon's classic builder). */
  async *build(context: Readable | Buffer, opts: BuildOptions = {}): AsyncGenerator<JsonMessage> {
    const query = {
      t: opts.tags,
      dockerfile: opts.dockerfile,
      buildargs: opts.buildArgs,
      labels: opts.labels,
      nocache: opts.noCache,
      pull: opts.pull,
      rm: opts.rm ?? true,
      forcerm: opts.forceRm,
      target: opts.target,
      platform: opts.platform,
      q: opts.quiet,
    };
    const headers = {
      'Content-Type': 'application/x-tar',
      'X-Registry-Config': Buffer.from(JSON.stringify(opts.registryConfig ?? {})).toString('base64url'),
    };
    const res = await this.t.request('POST', '/build', { query, body: context, headers, signal: opts.signal });
    yield* progress(res);
  }
  /** POST /images/load: a `docker save` tarball in; the daemon's messages out. */
  async *load(tar: Readable | Buffer, opts: Sig & { quiet?: boolean; platform?: string } = {}): AsyncGenerator<JsonMessage> {
    const res = await this.t.request('POST', '/images/load', {
      query: { quiet: opts.quiet, platform: opts.platform },
      body: tar,
      headers: { 'Content-Type': 'application/x-tar' },
      signal: opts.signal,
    });
    yield* progress(res);
  }
  /** A tarball of the named images (GET /images/get?names=…). */
  save(names: string[], opts: Sig & { platform?: string } = {}): Promise<Readable> {
    return this.t.request('GET', '/images/get', { query: { names, platform: opts.platform }, signal: opts.signal });
  }
  commit(
    container: string,
    opts: Sig & {
      repo?: string;
      tag?: string;
      comment?: string;
      author?: string;
      pause?: boolean;
      changes?: string[];
      config?: ContainerConfig;
    } = {},
  ): Promise<{ Id: string }> {
    const query = {
      container,
      repo: opts.repo,
      tag: opts.tag,
      comment: opts.comment,
      author: opts.author,
      pause: opts.pause,
      changes: opts.changes,
    };
    return this.t.json('POST', '/commit', { query, body: opts.config ?? {}, signal: opts.signal });
  }
}
