// The page-cache helper: a synced file's pages leave the cache; dirty ones stay (nothing is lost).
import assert from 'node:assert/strict';
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { test } from 'node:test';
import { cachedBytes } from '../../../test/helpers/page-cache.ts';
import { tempDir } from '../../../test/helpers/temp-dir.ts';
import { dropPageCache, pageCacheHelperAvailable } from './page-cache.ts';

test('is built (npm run build compiles it when a C compiler is there, which setup.sh installs)', () => {
  assert.equal(pageCacheHelperAvailable(), true);
});

test('a synced file leaves the page cache; an unsynced one keeps its dirty pages', () => {
  const dir = tempDir('page-cache-');
  const file = dir.file('blob');
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, Buffer.alloc(4 << 20, 7));
    assert.equal(cachedBytes(file), 4 << 20, 'written pages are cached');
    dropPageCache(fd);
    assert.equal(cachedBytes(file), 4 << 20, 'dirty pages are not dropped');
    fdatasyncSync(fd);
    assert.equal(dropPageCache(fd), true);
    assert.equal(cachedBytes(file), 0);
  } finally {
    closeSync(fd);
    dir.remove();
  }
});
