// The daemon's own version and the git commit it was built from (written by the build, see scripts/setup.sh).
import { readFileSync } from 'node:fs';

export const ENGINE_VERSION = '0.1.0';

function readCommit(): string {
  try {
    return readFileSync(new URL('../../build/commit', import.meta.url), 'utf8').trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}

export const ENGINE_COMMIT = readCommit();
