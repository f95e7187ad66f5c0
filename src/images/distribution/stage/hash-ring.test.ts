// The hash ring between a stage worker and the main thread: a writer on another thread, bytes of
// interleaved jobs many times the ring's size, each job's digest as a hash of its own bytes.
import assert from 'node:assert/strict';
import { createHash, type Hash } from 'node:crypto';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { createHashRing, HashRingReader } from './hash-ring.ts';

/** Job `id`'s `i`-th chunk: its length varies (odd sizes straddle the ring's end) and its bytes differ per job. */
const chunkOf = (id: number, i: number) => Buffer.alloc(1000 + ((i * 7919 + id * 104729) % 70000), (id * 31 + i) & 0xff);
const CHUNKS = 300;

// Runs in the writer's thread: the two jobs' chunks interleaved, a third job abandoned midway, each told as done.
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const chunkOf = ${chunkOf.toString()};
import(workerData.module).then(({ HashRingWriter }) => {
  const w = new HashRingWriter(workerData.ring, (id, bytes) => parentPort.postMessage({ id, bytes }));
  for (let i = 0; i < ${CHUNKS}; i++) {
    w.write(1, chunkOf(1, i));
    if (i % 3 === 0) w.write(2, chunkOf(2, i));
    if (i < 20) w.write(3, chunkOf(3, i));
  }
  w.flush();
  parentPort.postMessage({ done: true });
});`;

test('a job digest hashed through the ring is the hash of its bytes, across wraps and a full ring', async () => {
  const ring = createHashRing(256 * 1024); // the jobs' 13 MB go round it ~50 times
  const reader = new HashRingReader(ring);
  const module = new URL('./hash-ring.js', import.meta.url).href;
  const hashes = new Map<number, Hash>([
    [1, createHash('sha256')],
    [2, createHash('sha256')],
  ]);
  let told = 0;
  const worker = new Worker(WRITER, { eval: true, workerData: { ring, module } });
  await new Promise<void>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: { id: number; bytes: number } | { done: true }) => {
      if ('done' in m) return resolve();
      told += m.bytes;
      reader.take(m.bytes, hashes.get(m.id)); // job 3 is no longer followed: skipped
    });
  });
  await worker.terminate();
  const expect = (id: number, every: number, upTo: number) => {
    const h = createHash('sha256');
    for (let i = 0; i < upTo; i++) if (i % every === 0) h.update(chunkOf(id, i));
    return h.digest('hex');
  };
  assert.equal(hashes.get(1)!.digest('hex'), expect(1, 1, CHUNKS));
  assert.equal(hashes.get(2)!.digest('hex'), expect(2, 3, CHUNKS));
  let all = 0;
  for (let i = 0; i < CHUNKS; i++) all += chunkOf(1, i).length + (i % 3 === 0 ? chunkOf(2, i).length : 0) + (i < 20 ? chunkOf(3, i).length : 0);
  assert.equal(told, all, 'every byte written was told once');
});
