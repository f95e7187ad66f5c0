// scripts/page-cache.mjs: a file just written is in the page cache; after dropFromPageCache none of
// it is (util-linux's fincore counts the cached bytes), and a missing file is reported, not thrown.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { findUpwards } from '../../src/util/find-upwards.ts';

const { dropFromPageCache } = (await import(pathToFileURL(findUpwards(import.meta.url, 'scripts/page-cache.mjs')!).href)) as {
  dropFromPageCache(file: string): void;
};

const cachedBytes = (f: string) => Number(execFileSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', f]).toString().trim());

test('a written file leaves the page cache; a missing one is only reported', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'engine-pagecache-'));
  try {
    const f = join(dir, 'exe');
    await writeFile(f, randomBytes(4 << 20));
    assert.ok(cachedBytes(f) > 0, 'the write left it cached');
    dropFromPageCache(f);
    assert.equal(cachedBytes(f), 0);
    assert.doesNotThrow(() => dropFromPageCache(join(dir, 'missing')));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
