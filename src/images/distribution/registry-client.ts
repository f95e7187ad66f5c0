// One authenticated conversation with a registry endpoint about one repository: the distribution
// API calls pull and push need, each request with the credentials registry-auth.ts gives (the /v2/
// ping and its challenge, Basic or Bearer), a new token fetched once on a 401.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { EngineError } from '../../errors.ts';
import type { AuthConfig } from '../../types/distribution.ts';
import { registryErrorFrom } from './errors.ts';
import { RegistryAuth, type Challenge } from './registry-auth.ts';
import type { Endpoint, TlsSettings } from './registry-hosts.ts';
import { readAll, type HttpResponse, type ProxySettings, type RegistryTransport } from './transport.ts';

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

/**
 * A manifest's bytes checked against the digest asked for (or the registry's Docker-Content-Digest
 * header for a tag), and its media type: the document's own, else the response's content type.
 */
function verifiedManifest(reference: string, bytes: Buffer, headers: HttpResponse['headers']): FetchedManifest {
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (reference.includes(':') && reference !== digest) {
    throw new EngineError('INTERNAL', `manifest verification failed for digest ${reference}: got content with digest ${digest}`);
  }
  const header = String(headers['docker-content-digest'] ?? '');
  if (!reference.includes(':') && header.startsWith('sha256:') && header !== digest) {
    throw new EngineError(
      'INTERNAL',
      `manifest verification failed: the registry announced ${header} but sent content with digest ${digest}`,
    );
  }
  let mediaType = String(headers['content-type'] ?? '')
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

export class RegistrySession {
  /** The endpoint's challenge and this session's credentials or tokens. */
  private readonly authn: RegistryAuth;

  constructor(
    private readonly transport: RegistryTransport,
    readonly endpoint: Endpoint,
    private readonly auth: AuthConfig,
    /** Token scopes, e.g. ['repository:library/busybox:pull']. */
    scopes: string[],
    opts: { offlineToken?: boolean } = {},
  ) {
    this.authn = new RegistryAuth(transport, endpoint, auth, scopes, opts);
  }

  url(path: string): string {
    return this.endpoint.url + path;
  }

  /** GET /v2/: learns the auth challenge (null when none is needed). */
  ping(signal?: AbortSignal): Promise<Challenge | null> {
    return this.authn.ping(signal);
  }

  /** A refresh token the token server handed out (POST /auth returns it as IdentityToken). */
  get refreshToken(): string {
    return this.authn.refreshToken;
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
      const auth = await this.authn.authorization(method, url, o.signal, attempt > 0);
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
    return verifiedManifest(reference, await readAll(res.body, 4 << 20), res.headers);
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
    const auth = await this.authn.authorization('GET', url, signal);
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
