// Registry-facing routes: pull (POST /images/create?fromImage=), import (…?fromSrc=), push, login
// (POST /auth), search and distribution inspect. Progress streams start lazily: an error before the
// first message is a real HTTP status with {"message"}, after it an errorDetail line (as dockerd).
import type { OCIDescriptor } from '../../types/api/index.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidParameter, messageOf, notImplemented } from '../../errors.ts';
import type { AuthConfig, ImportRequest, JsonMessage, ProgressSink, SearchResult } from '../../types/distribution.ts';
import { decodeAuthHeaderLenient, normaliseAuth } from '../../images/distribution/auth-config.ts';
import { encodeMessage, errorMessage } from '../../images/distribution/progress.ts';
import type { Platform } from '../../images/distribution/media.ts';
import { platformParam, readJsonObject, sendJson } from '../http.ts';
import { AUTH_CONFIG, decodeBody } from '../body-schemas.ts';
import type { Router } from '../router.ts';
import { versionLessThan } from '../../util/api-version.ts';
import { checkImagePlatform, decodePlatform } from './image-platform.ts';

export interface DistributionBackend {
  pull(p: { fromImage: string; tag?: string; platform?: string; auth: AuthConfig }, sink: ProgressSink, signal: AbortSignal): Promise<void>;
  /** Absent until image import exists: the route answers 501. */
  importImage?(req: ImportRequest, body: IncomingMessage, sink: ProgressSink, signal: AbortSignal): Promise<void>;
  push(name: string, tag: string | undefined, auth: AuthConfig, sink: ProgressSink, signal: AbortSignal): Promise<void>;
  login(auth: AuthConfig): Promise<{ Status: string; IdentityToken: string }>;
  search(term: string, limit: number, filters: Map<string, string[]>, auth: AuthConfig): Promise<SearchResult[]>;
  inspect(name: string, auth: AuthConfig): Promise<{ Descriptor: OCIDescriptor; Platforms: Platform[] }>;
}

/** A JSON-lines response whose status line goes out with the first message (plugins' pull and push use it too). */
export class ProgressResponse {
  started = false;
  readonly abort = new AbortController();

  constructor(private readonly res: ServerResponse) {
    res.on('close', () => {
      if (!res.writableFinished) this.abort.abort(new Error('client disconnected'));
    });
  }

  readonly sink: ProgressSink = (m: JsonMessage) => {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (!this.started) {
      this.started = true;
      this.res.writeHead(200, { 'Content-Type': 'application/json' });
    }
    this.res.write(encodeMessage(m));
  };

  /** Runs the operation; failures after the first message become an error line. */
  async run(fn: (sink: ProgressSink, signal: AbortSignal) => Promise<void>): Promise<void> {
    try {
      await fn(this.sink, this.abort.signal);
    } catch (err) {
      if (!this.started) throw err;
      this.sink(errorMessage(messageOf(err)));
    }
    if (!this.started) {
      this.started = true;
      this.res.writeHead(200, { 'Content-Type': 'application/json' });
    }
    this.res.end();
  }
}

const authOf = (req: IncomingMessage) => decodeAuthHeaderLenient(req.headers['x-registry-auth'] as string | undefined);

export interface DistributionRouteOptions {
  /** A local image's platform (its inspect view), undefined when there is no such image. */
  imagePlatform?: (ref: string) => Promise<{ Os?: unknown; Architecture?: unknown; Variant?: unknown } | undefined>;
}

export function registerDistributionRoutes(router: Router, backend: DistributionBackend, opts: DistributionRouteOptions = {}): void {
  router.post('/images/create', async (ctx) => {
    const q = ctx.query;
    const fromImage = q.string('fromImage');
    const fromSrc = q.string('fromSrc');
    // The platform parameter exists from API 1.32; dockerd parses it before a pull or an import starts (a 400).
    const platform = versionLessThan(ctx.version, '1.32') ? undefined : q.string('platform');
    if (platform && (fromImage || fromSrc)) platformParam(q);
    const out = new ProgressResponse(ctx.res);
    if (fromImage) {
      const tag = q.string('tag');
      const auth = authOf(ctx.req);
      await out.run((sink, signal) =>
        backend.pull({ fromImage, ...(tag ? { tag } : {}), ...(platform ? { platform } : {}), auth }, sink, signal),
      );
      return;
    }
    if (fromSrc) {
      if (!backend.importImage) throw notImplemented('importing images (fromSrc) is not available');
      const repo = q.string('repo');
      const tag = q.string('tag');
      const message = q.string('message');
      const req: ImportRequest = {
        fromSrc,
        changes: q.strings('changes'),
        ...(repo ? { repo } : {}),
        ...(tag ? { tag } : {}),
        ...(message ? { message } : {}),
        ...(platform ? { platform } : {}),
      };
      await out.run((sink, signal) => backend.importImage!(req, ctx.req, sink, signal));
      return;
    }
    throw invalidParameter('fromImage or fromSrc must be given');
  });

  router.post('/images/{name*}/push', async (ctx) => {
    let auth = authOf(ctx.req);
    if (!ctx.req.headers['x-registry-auth']) {
      // The old clients' form: the auth config as the JSON body.
      auth = normaliseAuth(decodeBody(await readJsonObject(ctx.req, true), AUTH_CONFIG, 'AuthConfig'));
    }
    const tag = ctx.query.string('tag');
    // platform from 1.46 (a JSON OCI platform): the local image must be of it.
    const raw = versionLessThan(ctx.version, '1.46') ? undefined : ctx.query.string('platform');
    if (raw) {
      const want = decodePlatform(raw);
      const ref = tag ? `${ctx.params.name}:${tag}` : ctx.params.name;
      const image = await opts.imagePlatform?.(ref);
      if (image) checkImagePlatform(ref, image, want);
    }
    const out = new ProgressResponse(ctx.res);
    await out.run((sink, signal) => backend.push(ctx.params.name, tag || undefined, auth, sink, signal));
  });

  router.post('/auth', async (ctx) => {
    const body = normaliseAuth(decodeBody(await readJsonObject(ctx.req), AUTH_CONFIG, 'AuthConfig'));
    sendJson(ctx.res, 200, await backend.login(body));
  });

  router.get('/images/search', async (ctx) => {
    const term = ctx.query.string('term') ?? '';
    if (!term) throw invalidParameter('term is required');
    const limit = ctx.query.int('limit', 25)!;
    sendJson(ctx.res, 200, await backend.search(term, limit, ctx.query.filters(), authOf(ctx.req)));
  });

  router.get('/distribution/{name*}/json', async (ctx) => {
    sendJson(ctx.res, 200, await backend.inspect(ctx.params.name, authOf(ctx.req)));
  });
}
