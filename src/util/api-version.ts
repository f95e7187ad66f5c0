// The Docker API versions this daemon speaks, and version comparison for version-dependent behaviour
// (used by the API server, the routes and the services whose answers differ by version).
export const API_VERSION = '1.51';
export const MIN_API_VERSION = '1.24';

/** Go's versions.compare: dot-separated numbers, a part that is not a number counting as 0. */
export function compareVersions(a: string, b: string): number {
  const num = (p: string) => (/^\d+$/.test(p) ? Number(p) : 0);
  const pa = a.split('.').map(num);
  const pb = b.split('.').map(num);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

export const versionLessThan = (a: string, b: string) => compareVersions(a, b) < 0;

/**
 * dockerd's check of DOCKER_MIN_API_VERSION (a minimum raised within the versions spoken): the
 * reason it is refused, or undefined.
 */
export function minApiVersionError(v: string): string | undefined {
  if (v === '') return 'value is empty';
  if (/^v/i.test(v)) return 'API version must be provided without "v" prefix';
  if (versionLessThan(v, MIN_API_VERSION)) return `minimum supported API version is ${MIN_API_VERSION}: ${v}`;
  if (compareVersions(v, API_VERSION) > 0) return `maximum supported API version is ${API_VERSION}: ${v}`;
  return undefined;
}
