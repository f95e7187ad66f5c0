// Registry credentials as clients send them: the X-Registry-Auth header (base64 of a JSON
// document, URL-safe or standard alphabet, padded or not) and the POST /auth body.
import { invalidParameter } from '../../errors.ts';
import type { AuthConfig } from '../../types/distribution.ts';

/** Normalises field names (the CLI sends lower case; some SDKs send Username, ServerAddress, …). */
export function normaliseAuth(raw: unknown): AuthConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: AuthConfig = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof v !== 'string' || v === '') continue;
    const key = k.toLowerCase() as keyof AuthConfig;
    if (
      key === 'username' ||
      key === 'password' ||
      key === 'auth' ||
      key === 'serveraddress' ||
      key === 'identitytoken' ||
      key === 'registrytoken'
    )
      out[key] = v;
  }
  if (out.auth && !out.username) {
    const plain = Buffer.from(out.auth, 'base64').toString('utf8');
    const colon = plain.indexOf(':');
    if (colon > 0) {
      out.username = plain.slice(0, colon);
      out.password = plain.slice(colon + 1);
    }
  }
  return out;
}

/** Decodes X-Registry-Auth; throws on a header that is not base64 JSON. Empty → {}. */
export function decodeAuthHeader(header: string | undefined): AuthConfig {
  if (!header || header.trim() === '') return {};
  const b64 = header.trim().replace(/-/g, '+').replace(/_/g, '/');
  const text = Buffer.from(b64, 'base64').toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw invalidParameter(`invalid X-Registry-Auth header: ${(err as Error).message}`);
  }
  return normaliseAuth(parsed);
}

/** Like decodeAuthHeader but never fails: pulls ignore a malformed header, as dockerd does. */
export function decodeAuthHeaderLenient(header: string | undefined): AuthConfig {
  try {
    return decodeAuthHeader(header);
  } catch {
    return {};
  }
}

export const hasCredentials = (a: AuthConfig) => !!(a.username || a.identitytoken || a.registrytoken);

/** serveraddress ("https://index.docker.io/v1/", "localhost:5000", "https://r.example/") → registry host. */
export function hostFromServerAddress(address: string | undefined): string {
  if (!address) return 'docker.io';
  let s = address.trim().replace(/^https?:\/\//, '');
  s = s.split('/')[0]!;
  if (s === 'index.docker.io' || s === 'registry-1.docker.io' || s === 'docker.io' || s === 'registry.hub.docker.com') return 'docker.io';
  return s.toLowerCase();
}
