// Files of the repository (build/commit, build/proto) found from the running module's location,
// which is dist/src/<dir>/ for the compiled tree and dist/bundle/ for the bundled daemon.
import fs from 'node:fs';
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
