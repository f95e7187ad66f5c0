// Drops a just-written executable from the page cache, so its first run reads it back from disk.
// Measured on the compiled `engine` CLI (Bun): while the pages the write left are cached, every run
// maps ~5 MiB more of the executable (max RSS of `engine --version` 26.2 → 21.5 MiB, `engine ps`
// 38 → 33; the docker CLI's `--version` is 21.4), and that lasts until the kernel evicts them. Read
// back from disk, as after a reboot, the file is cached in the pieces the runs fault in. Node's
// binary shows no such difference. The file is synced first: dirty pages cannot be dropped.
import { spawnSync } from 'node:child_process';

/** Best effort: a failure only leaves the file cached as written (reported, not fatal). */
export function dropFromPageCache(file) {
  // coreutils: `sync FILE` fsyncs it; dd with iflag=nocache and count=0 advises DONTNEED for the whole file.
  const r = spawnSync('sh', ['-c', 'sync "$1" && dd if="$1" iflag=nocache count=0 status=none', 'sh', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (r.status !== 0)
    console.error(
      `page-cache: ${file} stays cached as written (${r.stderr?.toString().trim() || r.error?.message || `status ${r.status}`})`,
    );
}
