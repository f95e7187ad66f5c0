// FIFOs made ahead of time, a batch per mkfifo spawn: Node cannot mkfifo itself, and one spawn per
// exec (two or three FIFOs) costs milliseconds on the exec path and for every health probe. A pool
// FIFO has never been opened, so handing it out is as good as making a fresh one.
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../../util/helper-shell.ts';

export class FifoPool {
  private readonly ready: string[] = [];
  private filling: Promise<void> | undefined;
  private prepared: Promise<void> | undefined;

  /** Refills to `batch` FIFOs whenever fewer than `low` are left. */
  constructor(
    private readonly dir: string,
    private readonly low = 6,
    private readonly batch = 12,
  ) {}

  /** `n` fresh FIFO paths; the caller removes them after use. */
  async take(n: number): Promise<string[]> {
    while (this.ready.length < n) await this.fill();
    const out = this.ready.splice(0, n);
    if (this.ready.length < this.low) void this.fill().catch(() => undefined); // A background refill: the next take() fills synchronously and reports a failure then.
    return out;
  }

  /** Removes the pool (and FIFOs a crashed daemon left in it). */
  async close(): Promise<void> {
    // A refill in flight would add FIFOs while the directory is being removed (rm: ENOTEMPTY); its
    // failure does not matter here, the directory goes either way.
    await this.filling?.catch(() => undefined); // a refill's failure (mkfifo, or its directory removed under it): the directory goes either way
    this.ready.length = 0;
    await rm(this.dir, { recursive: true, force: true });
  }

  private fill(): Promise<void> {
    this.filling ??= (async () => {
      // The first fill clears what an earlier daemon left behind.
      this.prepared ??= rm(this.dir, { recursive: true, force: true })
        .then(() => mkdir(this.dir, { recursive: true, mode: 0o700 }))
        .then(() => undefined);
      await this.prepared;
      const want = Math.max(this.batch - this.ready.length, 1);
      const paths = Array.from({ length: want }, () => join(this.dir, randomBytes(8).toString('hex')));
      await runCommand('mkfifo', ['-m', '0600', ...paths]);
      this.ready.push(...paths);
    })().finally(() => {
      this.filling = undefined;
    });
    return this.filling;
  }
}
