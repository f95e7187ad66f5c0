// One authenticated conversation with a registry endpoint about one repository: the /v2/ ping that
// learns the auth challenge (and refuses registries without the v2 protocol), Basic credentials or
// Bearer tokens from the challenge's realm (anonymous, user/password, or identity token), and the
// distribution API calls pull and push need.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { EngineError } from '../../errors.ts';
import type { AuthConfig } from '../../types/distribution.ts';
import { registryErrorFrom, RegistryError } from './errors.ts';
import type { Endpoint, TlsSettings } from './registry-hosts.ts';
import { readAll, type HttpResponse, type ProxySettings, type RegistryTransport } from './transport.ts';

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses WWW-Authenticate: `Bearer realm="…",service="…", Basic realm="…"` (several challenges allowed). */
export function parseChallenges(header: string | string[] | undefined): Challenge[] {
  const out: Challenge[] = [];
  const TOKEN = /[A-Za-z0-9_!#$%&'*+.^`|~-]/;
  for (const h of Array.isArray(header) ? header : header ? [header] : []) {
    let i = 0;
    let current: Challenge | null = null;
    const skip = (chars: RegExp) => {
      while (i < h.length && chars.test(h[i]!)) i++;
    };
    while (i < h.length) {
      skip(/[\s,]/);
      const start = i;
      while (i < h.length && TOKEN.test(h[i]!)) i++;
      if (i === start) {
        i++;
        continue;
      }
      const token = h.slice(start, i);
      skip(/\s/);
      if (h[i] !== '=') {
        current = { scheme: token.toLowerCase(), params: {} };
        out.push(current);
        continue;
      }
      i++;
      skip(/\s/);
      let value = '';
      if (h[i] === '"') {
        i++;
        while (i < h.length && h[i] !== '"') {
          if (h[i] === '\\' && i + 1 < h.length) i++;
          value += h[i++];
        }
        i++;
      } else {
        const vs = i;
        while (i < h.length && !/[\s,]/.test(h[i]!)) i++;
        value = h.slice(vs, i);
      }
      if (current) current.params[token.toLowerCase()] = value;
    }
  }
  return out;
}

/** A registry that answers /v2/ with neither success, a challenge nor the v2 version header. */
export class NotV2Error extends Error {}

const goOp = (method: string) => method.charAt(0).toUpperCase() + method.slice(1).toLowerCase();

export const MANIFEST_ACCEPT = [
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v1+prettyjws',
  'application/vnd.docker.distribution.manifest.v1+json',
].join(', ');

export interface FetchedManifest {
  bytes: Buffer;
  mediaType: string;
  digest: string;
}

interface Token {
  value: string;
  expiresAt: number;
}

export class RegistrySession {
  private pinged: Promise<Challenge | null> | null = null;
  private token: Promise<Token> | null = null;
  /** A refresh token the token server handed out (POST /auth returns it as IdentityToken). */
  refreshToken = '';

  constructor(
    private readonly transport: RegistryTransport,
    readonly endpoint: Endpoint,
    private readonly auth: AuthConfig,
    /** Token scopes, e.g. ['repository:library/busybox:pull']. */
    private readonly scopes: string[],
    private readonly opts: { offlineToken?: boolean } = {},
  ) {}

  url(path: string): string {
    return this.endpoint.url + path;
  }

  /** GET /v2/: learns the auth challenge (null when none is needed). */
  ping(signal?: AbortSignal): Promise<Challenge | null> {
    this.pinged ??= (async () => {
      const res = await this.transport.request({
        method: 'GET',
        url: this.url('/v2/'),
        tls: this.endpoint.tls,
        ...(signal ? { signal } : {}),
        idleTimeoutMs: 15_000,
      });
      res.body.resume();
      const v2 = String(res.headers['docker-distribution-api-version'] ?? '')
        .split(/[\s,]+/)
        .includes('registry/2.0');
      if (res.status === 401) {
        const challenges = parseChallenges(res.headers['www-authenticate']);
        return (
          challenges.find((c) => c.scheme === 'bearer') ?? challenges.find((c) => c.scheme === 'basic') ?? { scheme: 'basic', params: {} }
        );
      }
      if (res.status >= 200 && res.status < 300) return null;
      if (!v2)
        throw new NotV2Error(
          `${this.endpoint.registry} does not support the registry v2 API (GET ${this.url('/v2/')} answered ${res.status}); registries that speak only the v1 protocol are not supported`,
        );
      return null;
    })();
    this.pinged.catch(() => {
      this.pinged = null;
    });
    return this.pinged;
  }

  private async fetchToken(c: Challenge, signal?: AbortSignal): Promise<Token> {
    const realm = c.params.realm;
    if (!realm) throw new EngineError('INTERNAL', `${this.endpoint.registry}: bearer challenge without a realm`);
    const url = new URL(realm);
    const headers: Record<string, string> = {};
    let method = 'GET';
    let body: Buffer | undefined;
    const scopes = this.scopes.length ? this.scopes : c.params.scope ? [c.params.scope] : [];
    if (this.auth.identitytoken) {
      // OAuth2 refresh-token grant, as the docker client's token handler sends it.
      method = 'POST';
      const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: this.auth.identitytoken, client_id: 'docker' });
      if (c.params.service) form.set('service', c.params.service);
      if (scopes.length) form.set('scope', scopes.join(' '));
      body = Buffer.from(form.toString());
      headers['Content-Type'] = 'application/x-www-form-urlencoded; charset=utf-8';
    } else {
      if (c.params.service) url.searchParams.set('service', c.params.service);
      for (const s of scopes) url.searchParams.append('scope', s);
      if (this.auth.username) {
        url.searchParams.set('account', this.auth.username);
        headers.Authorization = 'Basic ' + Buffer.from(`${this.auth.username}:${this.auth.password ?? ''}`).toString('base64');
      }
      if (this.opts.offlineToken) {
        url.searchParams.set('offline_token', 'true');
        url.searchParams.set('client_id', 'docker');
      }
    }
    // The token server is trusted like the registry when it is the same host.
    const tls = url.host === new URL(this.endpoint.url).host ? this.endpoint.tls : undefined;
    const res = await this.transport.request({
      method,
      url: url.toString(),
      headers,
      ...(body ? { body } : {}),
      ...(tls ? { tls } : {}),
      ...(signal ? { signal } : {}),
      idleTimeoutMs: 30_000,
    });
    if (res.status !== 200) throw await registryErrorFrom(res);
    const parsed = JSON.parse((await readAll(res.body, 1 << 20)).toString('utf8')) as {
      token?: string;
      access_token?: string;
      expires_in?: number;
      refresh_token?: string;
    };
    const value = parsed.access_token || parsed.token;
    if (!value) throw new EngineError('INTERNAL', `${realm}: the token server returned no token`);
    if (parsed.refresh_token) this.refreshToken = parsed.refresh_token;
    const ttl = Math.max(60, parsed.expires_in ?? 60);
    return { value, expiresAt: Date.now() + (ttl - 10) * 1000 };
  }

  /** The Authorization header for the next request (undefined when the registry wants none). */
  private async authorization(method: string, url: string, signal?: AbortSignal, refresh = false): Promise<string | undefined> {
    if (this.auth.registrytoken) return `Bearer ${this.auth.registrytoken}`;
    const c = await this.ping(signal);
    if (!c) return undefined;
    if (c.scheme === 'basic') {
      if (!this.auth.username)
        throw new RegistryError(
          401,
          [{ code: 'UNAUTHORIZED', message: 'no basic auth credentials' }],
          `${goOp(method)} "${url}": no basic auth credentials`,
        );
      return 'Basic ' + Buffer.from(`${this.auth.username}:${this.auth.password ?? ''}`).toString('base64');
    }
    if (refresh) this.token = null;
    if (this.token) {
      const t = await this.token.catch(() => null); // A failed token fetch means asking anonymously; the registry's answer then says what is wrong.
      if (!t || t.expiresAt < Date.now()) this.token = null;
    }
    this.token ??= this.fetchToken(c, signal);
    this.token.catch(() => {
      this.token = null;
    });
    return `Bearer ${(await this.token).value}`;
  }

  /** A request to the registry with credentials; a 401 with a replayable body fetches a new token once. */
  async send(
    method: string,
    path: string,
    o: {
      headers?: Record<string, string>;
      body?: Buffer | Readable;
      signal?: AbortSignal;
      idleTimeoutMs?: number;
      redirects?: boolean;
    } = {},
  ): Promise<HttpResponse> {
    const url = /^https?:\/\//.test(path) ? path : this.url(path);
    for (let attempt = 0; ; attempt++) {
      const auth = await this.authorization(method, url, o.signal, attempt > 0);
      const res = await this.transport.request({
        method,
        url,
        tls: this.endpoint.tls,
        headers: { ...o.headers, ...(auth ? { Authorization: auth } : {}) },
        ...(o.body !== undefined ? { body: o.body } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.idleTimeoutMs ? { idleTimeoutMs: o.idleTimeoutMs } : {}),
        ...(o.redirects === false ? { redirects: false } : {}),
      });
      const canRetry =
        attempt === 0 &&
        res.status === 401 &&
        (o.body === undefined || Buffer.isBuffer(o.body)) &&
        !!auth?.startsWith('Bearer ') &&
        !this.auth.registrytoken;
      if (!canRetry) return res;
      res.body.resume();
    }
  }

  /** GET a manifest by tag or digest; verifies the digest (against the reference or the registry's header). */
  async getManifest(repo: string, reference: string, signal?: AbortSignal): Promise<FetchedManifest> {
    const res = await this.send('GET', `/v2/${repo}/manifests/${reference}`, {
      headers: { Accept: MANIFEST_ACCEPT },
      ...(signal ? { signal } : {}),
    });
    if (res.status !== 200) throw await registryErrorFrom(res);
    const bytes = await readAll(res.body, 4 << 20);
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (reference.includes(':') && reference !== digest) {
      throw new EngineError('INTERNAL', `manifest verification failed for digest ${reference}: got content with digest ${digest}`);
    }
    const header = String(res.headers['docker-content-digest'] ?? '');
    if (!reference.includes(':') && header.startsWith('sha256:') && header !== digest) {
      throw new EngineError(
        'INTERNAL',
        `manifest verification failed: the registry announced ${header} but sent content with digest ${digest}`,
      );
    }
    let mediaType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    try {
      const declared = (JSON.parse(bytes.toString('utf8')) as { mediaType?: string }).mediaType;
      if (declared) mediaType = declared;
      else if (!mediaType || mediaType === 'application/json' || mediaType === 'text/plain')
        mediaType = 'application/vnd.oci.image.manifest.v1+json';
    } catch {
      throw new EngineError('INTERNAL', `${reference}: the registry returned a manifest that is not JSON`);
    }
    return { bytes, mediaType, digest };
  }

  /** GET a blob; the caller streams the body (size checks are the caller's). */
  async getBlob(repo: string, digest: string, signal?: AbortSignal, offset = 0): Promise<HttpResponse> {
    const res = await this.send('GET', `/v2/${repo}/blobs/${digest}`, {
      ...(signal ? { signal } : {}),
      headers: offset ? { Range: `bytes=${offset}-` } : {},
    });
    if (res.status !== 200 && res.status !== 206) throw await registryErrorFrom(res);
    return res;
  }

  /**
   * What a GET of a blob would send — URL, credentials, TLS settings, the transport's proxies — for
   * a stage worker that does the request itself (worker-fetch.ts).
   */
  async blobRequest(
    repo: string,
    digest: string,
    signal?: AbortSignal,
  ): Promise<{ url: string; headers: Record<string, string>; tls: TlsSettings; proxies: ProxySettings }> {
    const url = this.url(`/v2/${repo}/blobs/${digest}`);
    const auth = await this.authorization('GET', url, signal);
    return { url, headers: auth ? { Authorization: auth } : {}, tls: this.endpoint.tls, proxies: this.transport.proxySettings() };
  }

  /** HEAD a blob: its size when the registry has it, null otherwise. */
  async blobSize(repo: string, digest: string, signal?: AbortSignal): Promise<number | null> {
    const res = await this.send('HEAD', `/v2/${repo}/blobs/${digest}`, signal ? { signal } : {});
    res.body.resume();
    if (res.status === 200) return Number(res.headers['content-length'] ?? -1);
    if (res.status === 404) return null;
    throw await registryErrorFrom(res);
  }

  /** Tries a cross-repository mount; true when the registry mounted it (201). */
  async mountBlob(repo: string, digest: string, from: string, signal?: AbortSignal): Promise<{ mounted: boolean; location?: string }> {
    const res = await this.send('POST', `/v2/${repo}/blobs/uploads/?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(from)}`, {
      body: Buffer.alloc(0),
      ...(signal ? { signal } : {}),
      redirects: false,
    });
    res.body.resume();
    if (res.status === 201) return { mounted: true };
    if (res.status === 202 && res.headers.location)
      return { mounted: false, location: new URL(res.headers.location, this.endpoint.url + '/').toString() };
    throw await registryErrorFrom(res);
  }

  /** Starts an upload session; returns its absolute location. */
  async startUpload(repo: string, signal?: AbortSignal): Promise<string> {
    const res = await this.send('POST', `/v2/${repo}/blobs/uploads/`, {
      body: Buffer.alloc(0),
      ...(signal ? { signal } : {}),
      redirects: false,
    });
    res.body.resume();
    if (res.status !== 202 || !res.headers.location) throw await registryErrorFrom(res);
    return new URL(res.headers.location, this.endpoint.url + '/').toString();
  }

  /** Uploads the whole blob in one PUT to the session location. */
  async finishUpload(location: string, digest: string, size: number, body: Readable, signal?: AbortSignal): Promise<void> {
    const url = new URL(location);
    url.searchParams.set('digest', digest);
    const res = await this.send('PUT', url.toString(), {
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) },
      body,
      ...(signal ? { signal } : {}),
      idleTimeoutMs: 120_000,
      redirects: false,
    });
    res.body.resume();
    if (res.status !== 201 && res.status !== 204) throw await registryErrorFrom(res);
  }

  async putManifest(repo: string, reference: string, mediaType: string, bytes: Buffer, signal?: AbortSignal): Promise<string> {
    const res = await this.send('PUT', `/v2/${repo}/manifests/${reference}`, {
      headers: { 'Content-Type': mediaType },
      body: bytes,
      ...(signal ? { signal } : {}),
    });
    res.body.resume();
    if (res.status !== 201 && res.status !== 200 && res.status !== 202) throw await registryErrorFrom(res);
    return String(res.headers['docker-content-digest'] ?? '');
  }

  /** All tags of a repository (follows Link pagination). */
  async listTags(repo: string, signal?: AbortSignal): Promise<string[]> {
    const tags: string[] = [];
    let path: string | null = `/v2/${repo}/tags/list`;
    while (path) {
      const res: HttpResponse = await this.send('GET', path, signal ? { signal } : {});
      if (res.status !== 200) throw await registryErrorFrom(res);
      const body = JSON.parse((await readAll(res.body)).toString('utf8')) as { tags?: string[] | null };
      tags.push(...(body.tags ?? []));
      const link = /<([^>]+)>;\s*rel="?next"?/.exec(String(res.headers.link ?? ''));
      path = link ? new URL(link[1]!, this.endpoint.url + '/').toString() : null;
    }
    return tags;
  }

  async catalog(limit: number, signal?: AbortSignal): Promise<string[]> {
    const res = await this.send('GET', `/v2/_catalog?n=${limit}`, signal ? { signal } : {});
    if (res.status !== 200) throw await registryErrorFrom(res);
    return (JSON.parse((await readAll(res.body)).toString('utf8')) as { repositories?: string[] }).repositories ?? [];
  }
}
