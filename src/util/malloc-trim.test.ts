import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { mallocTrim, mallocTrimAvailable } from './malloc-trim.ts';

const rssMiB = () => process.memoryUsage.rss() / 2 ** 20;

describe('malloc trim', () => {
  it('is built (npm run build compiles it when a C compiler is there, which setup.sh installs)', () => {
    assert.equal(mallocTrimAvailable(), true);
  });

  it('returns the free pages between the survivors of a burst of buffers, which free() keeps', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // 64 MiB of 64 KiB buffers (malloc's heap, under its mmap threshold), one in 16 kept alive.
    let burst: Buffer[] | null = Array.from({ length: 1024 }, () => Buffer.allocUnsafeSlow(64 * 1024).fill(1));
    const kept = burst.filter((_, i) => i % 16 === 0);
    burst = null;
    // V8 frees dead buffers' memory on a background thread after the collection: on a loaded
    // machine that can come after the first trim, so trim again a few times as it lands.
    gc();
    const before = rssMiB();
    let released = 0;
    let trimmed = false;
    for (let i = 0; i < 10 && released <= 32; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      gc();
      trimmed = mallocTrim() || trimmed;
      released = before - rssMiB();
    }
    assert.equal(trimmed, true);
    assert.ok(released > 32, `malloc_trim released ${released.toFixed(1)} MiB of ~60 MiB freed`);
    assert.equal(kept.length, 64);
  });
});
