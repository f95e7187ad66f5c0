// A log file's generations on disk: at a rotation the files shift x → x.1 → x.2 … (x.N.gz when
// compressed; the oldest beyond max-file goes), never truncated in place, and a fresh x is opened;
// the newest rotated file is then compressed in the background, one compression at a time.

import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { compressLogFile } from './gzip.ts';

export class FileRotation {
  private compressing: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    /** Files kept including the current one (1 = the rotated file is deleted). */
    private readonly maxFiles: number,
    private readonly compress: boolean,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Shifts the files (after the previous compression) and opens the new current file. */
  async shift(): Promise<FileHandle> {
    await this.compressing;
    const base = this.path;
    if (this.maxFiles >= 2) {
      const ext = this.compress ? '.gz' : '';
      await rm(`${base}.${this.maxFiles - 1}${ext}`, { force: true });
      for (let i = this.maxFiles - 1; i > 1; i--) await renameIfExists(`${base}.${i - 1}${ext}`, `${base}.${i}${ext}`);
      await renameIfExists(base, `${base}.1`);
    } else {
      await rm(base, { force: true });
    }
    return open(base, 'a+', 0o640);
  }

  /** After a shift: x.1 becomes x.1.gz in the background (when compression is on). */
  compressNewest(lastTs: bigint): void {
    if (!this.compress) return;
    this.compressing = compressLogFile(`${this.path}.1`, `${this.path}.1.gz`, lastTs).catch((err: unknown) => this.onError(err));
  }

  /** Resolves once the background compression (if any) is done. */
  settled(): Promise<void> {
    return this.compressing;
  }
}

async function renameIfExists(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
