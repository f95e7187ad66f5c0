// Shared by the FIFO unit tests (fifo, output-hub): real named pipes in a directory removed when
// the test file ends.

import { execFileSync } from 'node:child_process';
import { after } from 'node:test';
import { tempDir } from './temp-dir.ts';

/** A maker of fresh FIFOs (mkfifo) under one temporary directory, removed after the file's tests. */
export function fifoMaker(prefix: string): () => string {
  const tmp = tempDir(prefix);
  after(() => tmp.remove());
  let n = 0;
  return () => {
    const p = tmp.file(`f${n++}`);
    execFileSync('mkfifo', [p]);
    return p;
  };
}
