// The init process injected by --init (Debian's tini by default): its path and version for /info.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const DEFAULT_INIT_CANDIDATES = ['/usr/bin/tini-static', '/usr/bin/tini'];

export function resolveInitPath(configured?: string): string {
  if (configured) return configured;
  return DEFAULT_INIT_CANDIDATES.find((p) => existsSync(p)) ?? DEFAULT_INIT_CANDIDATES[0]!;
}

const cache = new Map<string, { version: string; commit: string }>();

/** `tini --version` prints "tini version 0.19.0"; an absent binary is reported, not fatal. */
export function initVersion(configured?: string): { version: string; commit: string } {
  const path = resolveInitPath(configured);
  const hit = cache.get(path);
  if (hit) return hit;
  let v = { version: 'N/A', commit: 'N/A' };
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 2000 });
    const m = /version\s+([0-9][^\s-]*)(?:\s*-\s*git\.([0-9a-f]+))?/.exec(out);
    if (m) v = { version: m[1]!, commit: m[2] ?? 'N/A' };
  } catch {
    // ENOENT, not executable, or no answer within 2 s: the version stays N/A (as dockerd's info)
  }
  cache.set(path, v);
  return v;
}
