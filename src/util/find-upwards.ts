// Files of the repository (build/commit, build/proto, build/native) found from the running module's
// location, which is dist/src/<dir>/ for the compiled tree and dist/bundle/ for the bundled daemon.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The path of `relative` under the nearest ancestor directory of `moduleUrl` that has it, or null. */
export function findUpwards(moduleUrl: string, relative: string): string | null {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const candidate = path.join(dir, relative);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The daemon's native helper `build/native/<name>.node` (built from src/native/<name>.c by
 * scripts/build-native.mjs when a C compiler is there), or null when it was not built or does not
 * load (built for another platform or libc). Each is optional: its callers say what goes without it.
 */
export function nativeHelper<T>(name: string): T | null {
  const file = findUpwards(import.meta.url, `build/native/${name}.node`);
  if (!file) return null;
  try {
    return createRequire(import.meta.url)(file) as T;
  } catch {
    return null; // built for another platform or libc
  }
}
