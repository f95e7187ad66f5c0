// Authentication with one registry endpoint: the /v2/ ping that learns the auth challenge (and
// refuses registries without the v2 protocol), Basic credentials, or Bearer tokens from the
// challenge's realm (anonymous, user/password, identity token as an OAuth2 refresh grant), cached
// until they expire. registry-client.ts asks it for each request's Authorization header.
import { EngineError } from '../../errors.ts';
import type { AuthConfig } from '../../types/distribution.ts';
import { registryErrorFrom, RegistryError } from './errors.ts';
import type { Endpoint } from './registry-hosts.ts';
import { readAll, type RegistryTransport } from './transport.ts';

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

/** Go's name of an HTTP method in error messages ("Get", "Head"). */
export const goOp = (method: string) => method.charAt(0).toUpperCase() + method.slice(1).toLowerCase();

interface Token {
  value: string;
  expiresAt: number;
}

export class RegistryAuth {
  private pinged: Promise<Challenge | null> | null = null;
  private token: Promise<Token> | null = null;
  /** A refresh token the token server handed out (POST /auth returns it as IdentityToken). */
  refreshToken = '';

  constructor(
    private readonly transport: RegistryTransport,
    private readonly endpoint: Endpoint,
    private readonly auth: AuthConfig,
    /** Token scopes, e.g. ['repository:library/busybox:pull']. */
    private readonly scopes: string[],
    private readonly opts: { offlineToken?: boolean } = {},
  ) {}

  private url(path: string): string {
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
  async authorization(method: string, url: string, signal?: AbortSignal, refresh = false): Promise<string | undefined> {
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
}
