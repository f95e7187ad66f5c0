// A host-wide lock for choosing subnets: two daemons starting side by side (tests run several)
// must not both see 172.17.0.0/16 free and both take it. The lock is a directory (mkdir is atomic);
// one left behind by a crashed daemon is taken over once it is older than STALE_MS.
// Rootless daemons lock inside their rootlesskit state directory instead.
import { existsSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const STALE_MS = 15_000;

export function hostLockPath(env: NodeJS.ProcessEnv = process.env): string {
  // Rootless: the daemon's network namespace is rootlesskit's own, and /run is a copied-up tmpfs
  // holding whatever the host's /run held at start (a held lock included): lock in its state dir.
  if (env.ROOTLESSKIT_STATE_DIR) return join(env.ROOTLESSKIT_STATE_DIR, 'engine-network.lock');
  return join(existsSync('/run') ? '/run' : tmpdir(), 'engine-network.lock');
}

export async function withHostLock<T>(fn: () => Promise<T>, path = hostLockPath()): Promise<T> {
  const deadline = Date.now() + 2 * STALE_MS;
  for (;;) {
    try {
      mkdirSync(path, { mode: 0o700 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmdirSync(path);
      } catch {
        // ENOENT: released meanwhile
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the host network lock ${path}`);
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 10));
    }
  }
  try {
    return await fn();
  } finally {
    try {
      rmdirSync(path);
    } catch {
      // ENOENT: a stale-lock sweep by another process took it; nothing to release
    }
  }
}
