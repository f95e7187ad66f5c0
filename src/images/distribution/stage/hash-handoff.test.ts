// A blob file written through pooled writes whose buffers are hashed on another thread: the file
// and the digest are the bytes pushed, also when the hashing side is slow and the writer has to
// wait for buffers.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { takeHashed, type HashMessage } from './hash-handoff.ts';

/** The `i`-th chunk: odd lengths, so buffers end mid-chunk. */
const chunkOf = (i: number) => Buffer.alloc(1000 + ((i * 7919) % 50000), i & 0xff);
const CHUNKS = 200;

// The writer's thread: two 64 KiB shared buffers for a 5 MB file, so most pushes wait for one.
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, closeSync } = require('node:fs');
const chunkOf = ${chunkOf.toString()};
Promise.all([import(workerData.pooled), import(workerData.handoff)]).then(async ([{ PooledFile, WriteBuffers }, { handoffTo, sharedBuffer }]) => {
  // As a stage worker's parentPort listener does: the loop stays up while a write waits for a hashed buffer.
  const alive = setInterval(() => {}, 1000);
  const fd = openSync(workerData.path, 'w');
  const file = new PooledFile(fd, new WriteBuffers(65536, 2, sharedBuffer), undefined, handoffTo((m) => parentPort.postMessage(m)));
  let waited = 0;
  for (let i = 0; i < ${CHUNKS}; i++) {
    const w = file.push(chunkOf(i));
    if (w) (waited++, await w);
  }
  file.flush();
  await file.drained();
  closeSync(fd);
  clearInterval(alive);
  parentPort.postMessage({ done: true, waited, error: file.error && file.error.message });
});`;

test('a blob file hashed on another thread: the file and the digest are the bytes pushed, with waits for buffers', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'hash-handoff-'));
  try {
    const path = join(dir, 'blob');
    const hash = createHash('sha256');
    const worker = new Worker(WRITER, {
      eval: true,
      workerData: {
        path,
        pooled: new URL('./pooled-writes.js', import.meta.url).href,
        handoff: new URL('./hash-handoff.js', import.meta.url).href,
      },
    });
    // Each buffer is hashed a few milliseconds late, in order: the writer runs out of buffers.
    let queue = Promise.resolve();
    const end = await new Promise<{ waited: number; error: string | null }>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (m: HashMessage | { done: true; waited: number; error: string | null }) => {
        if ('done' in m) return void queue.then(() => resolve(m));
        queue = queue.then(() => new Promise<void>((r) => setTimeout(() => (takeHashed(m, hash), r()), 2)));
      });
    });
    await worker.terminate();
    assert.equal(end.error, null);
    assert.ok(end.waited > 10, `the writer waited for a hashed buffer (${end.waited} times)`);
    const expected = createHash('sha256');
    for (let i = 0; i < CHUNKS; i++) expected.update(chunkOf(i));
    const want = expected.digest('hex');
    assert.equal(hash.digest('hex'), want);
    assert.equal(
      createHash('sha256')
        .update(await readFile(path))
        .digest('hex'),
      want,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
