// The daemon's own version and the git commit it was built from (written by the build, see scripts/setup.sh).
import { readFileSync } from 'node:fs';
import { findUpwards } from './util/find-upwards.ts';

export const ENGINE_VERSION = '0.1.0';

function readCommit(): string {
  try {
    const file = findUpwards(import.meta.url, 'build/commit');
    return (file && readFileSync(file, 'utf8').trim()) || 'unknown';
  } catch {
    // unreadable commit file: unknown
    return 'unknown';
  }
}

// Pure: a bundle that never reads the commit (the CLI) drops the file read.
export const ENGINE_COMMIT = /* @__PURE__ */ readCommit();
