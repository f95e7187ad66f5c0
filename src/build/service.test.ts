// The build service and the heap trimmer: the end of the last running build asks for a trim,
// whatever the build's outcome. A build is mostly waiting (the disk, containerd, the step's
// process), so the trimmer rarely sees enough event-loop work of its own to act after one.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BuildOptions } from '../types/build.ts';
import { startHeapTrimmer } from '../util/heap-trim.ts';
import { Logger } from '../util/log.ts';
import { BuildService, type BuildServiceDeps } from './service.ts';

test('a build that ends (here refused: no context) asks for a heap trim', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'build-service-'));
  const log = new Logger({ level: 'error', format: 'text', raw: false });
  let collected = 0;
  const trimmer = startHeapTrimmer({
    log,
    intervalMs: 60_000,
    startBusy: false,
    gc: () => collected++,
    trim: () => true,
    utilization: () => ({ idle: 1000, active: 0, utilization: 0 }), // always quiet, never busy
  });
  try {
    trimmer.check();
    assert.equal(collected, 0, 'no work and no request: no trim');
    // Only what a refused build touches: its temporary directory and the logger.
    const service = new BuildService({ tmpDir: dir, log } as unknown as BuildServiceDeps);
    const opts = { dockerfile: 'Dockerfile', tags: [] } as unknown as BuildOptions;
    await assert.rejects(service.build(opts, null, () => undefined, new AbortController().signal), /a build context is required/);
    trimmer.check(); // (or the trimmer's own early look after the request already did)
    assert.equal(collected, 1, 'the build asked for one trim');
  } finally {
    trimmer.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
