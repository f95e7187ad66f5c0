// The Docker API versions this daemon speaks, and version comparison for version-dependent behaviour
// (used by the API server, the routes and the services whose answers differ by version).
export const API_VERSION = '1.51';
export const MIN_API_VERSION = '1.24';

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

export const versionLessThan = (a: string, b: string) => compareVersions(a, b) < 0;
