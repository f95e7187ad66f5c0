// Registry error responses ({"errors":[{"code":"MANIFEST_UNKNOWN","message":…}]}) and how the
// daemon words them, as dockerd does: "manifest for busybox:latest not found: manifest unknown:
// manifest unknown", "pull access denied for x, repository does not exist or may require 'docker
// login'", with the HTTP status the API answers when nothing was streamed yet.
import type { IncomingMessage } from 'node:http';
import { EngineError, type ErrorCode } from '../../errors.ts';
import { readAll, TransportError } from './transport.ts';

export interface RegistryErrorItem {
  code: string;
  message: string;
  detail?: unknown;
}

/** An HTTP error answer from a registry. */
export class RegistryError extends Error {
  constructor(
    readonly status: number,
    readonly errors: RegistryErrorItem[],
    message: string,
  ) {
    super(message);
    this.name = 'RegistryError';
  }

  get code(): string {
    return this.errors[0]?.code ?? '';
  }
}

/** errcode's wording: UNAUTHORIZED → "unauthorized", MANIFEST_UNKNOWN → "manifest unknown". */
const codeText = (code: string) => code.toLowerCase().replace(/_/g, ' ');

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  416: 'Requested Range Not Satisfiable',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
export const statusText = (s: number) => STATUS_TEXT[s] ?? 'Unknown';

/** Builds a RegistryError from a non-success response (consumes the body). */
export async function registryErrorFrom(res: { status: number; body: IncomingMessage }): Promise<RegistryError> {
  let items: RegistryErrorItem[] = [];
  try {
    const body = await readAll(res.body, 1 << 20);
    const parsed = JSON.parse(body.toString('utf8')) as { errors?: RegistryErrorItem[]; details?: string };
    if (Array.isArray(parsed.errors))
      items = parsed.errors
        .filter((e) => e && typeof e.code === 'string')
        .map((e) => ({ code: e.code, message: String(e.message ?? ''), detail: e.detail }));
    else if (typeof parsed.details === 'string')
      items = [{ code: res.status === 401 ? 'UNAUTHORIZED' : 'UNKNOWN', message: parsed.details }];
  } catch {
    // not JSON
  }
  if (!items.length) {
    if (res.status === 401) items = [{ code: 'UNAUTHORIZED', message: 'authentication required' }];
    else if (res.status === 403) items = [{ code: 'DENIED', message: 'requested access to the resource is denied' }];
    else if (res.status === 429) items = [{ code: 'TOOMANYREQUESTS', message: 'too many requests' }];
    else return new RegistryError(res.status, [], `received unexpected HTTP status: ${res.status} ${statusText(res.status)}`);
  }
  const first = items[0]!;
  return new RegistryError(res.status, items, `${codeText(first.code)}: ${first.message || codeText(first.code)}`);
}

/** Whether a failure on one endpoint lets us try the next (mirror → official, https → http). */
export function canFallBack(err: unknown, endpointIsMirror: boolean): boolean {
  if (endpointIsMirror) return true;
  if (err instanceof TransportError) return true;
  if (err instanceof RegistryError) return err.errors.length === 0 && err.status >= 500;
  return false;
}

/** Whether a failed download is worth another attempt. */
export function retryable(err: unknown): boolean {
  if (err instanceof RegistryError) {
    if (['UNAUTHORIZED', 'UNSUPPORTED', 'DENIED', 'TOOMANYREQUESTS', 'NAME_UNKNOWN', 'BLOB_UNKNOWN'].includes(err.code)) return false;
    return err.status >= 500 || err.status === 0 || err.status === 408;
  }
  if (err instanceof EngineError) return false;
  const msg = err instanceof Error ? err.message : String(err);
  return !/no space left on device|ENOSPC/i.test(msg);
}

function engineCode(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 400) return 'INVALID_PARAMETER';
  if (status === 429 || status === 503) return 'UNAVAILABLE';
  return 'INTERNAL';
}

/** A pull failure as the API reports it, with dockerd's wording and status class. */
export function translatePullError(err: unknown, familiarRef: string, familiarRepo: string): EngineError {
  if (err instanceof EngineError) return err;
  if (err instanceof RegistryError) {
    switch (err.code) {
      case 'DENIED':
        return new EngineError(
          'NOT_FOUND',
          `pull access denied for ${familiarRepo}, repository does not exist or may require 'docker login': ${err.message}`,
        );
      case 'MANIFEST_UNKNOWN':
        return new EngineError('NOT_FOUND', `manifest for ${familiarRef} not found: ${err.message}`);
      case 'NAME_UNKNOWN':
        return new EngineError('NOT_FOUND', `repository ${familiarRepo} not found: ${err.message}`);
    }
    if (!err.errors.length && err.status === 404)
      return new EngineError('NOT_FOUND', `manifest for ${familiarRef} not found: manifest unknown: manifest unknown`);
    // dockerd answers anything else (unauthorized included) as an unknown error: a 500.
    return new EngineError(err.status === 429 ? 'UNAVAILABLE' : 'INTERNAL', err.message);
  }
  return new EngineError('INTERNAL', err instanceof Error ? err.message : String(err), { cause: err });
}

/** Push/login/search failures: registry wording, status class by HTTP status. */
export function translateRegistryError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  if (err instanceof RegistryError) return new EngineError(engineCode(err.status), err.message);
  return new EngineError('INTERNAL', err instanceof Error ? err.message : String(err), { cause: err });
}

/** Appended to TLS failures against a registry that is not marked insecure (§5.8). */
export function insecureHint(registry: string, certs: string): string {
  return (
    ` (the registry ${registry} is not trusted: if it serves plain HTTP or a certificate from an unknown CA, ` +
    `add it to insecure-registries (--insecure-registry ${registry}); or secure it by placing its CA certificate at ${certs}/${registry}/ca.crt)`
  );
}
