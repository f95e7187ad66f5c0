// The worker thread of stage-pool.ts: one layer at a time, it takes the compressed bytes of a
// download, hashes them (the blob's digest), writes them to the temporary blob file, and (when
// asked) unpacks them into a staging tree through staged-unpack.ts (gunzip, diffID, extraction).
// Doing this off the daemon's main thread lets the layers of a pull decompress and extract on
// several cores at once, keeps the main thread's event loop for the API, and keeps the buffers'
// garbage (hundreds of MB per pull) in this small heap, whose collections are cheap.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { LayerStage } from './staged-unpack.ts';

/** Messages from the pool (stage-pool.ts). */
export type ToWorker =
  | { type: 'start'; tmp: string; stageRoot: string | null; mediaType: string }
  | { type: 'chunk'; buf: ArrayBuffer; length: number }
  | { type: 'end' }
  | { type: 'abort' };

/** Answers to the pool. */
export type FromWorker =
  | { type: 'ack'; bytes: number; buf: ArrayBuffer }
  | { type: 'done'; digest: string; size: number; staged: { dir: string; diffId: string } | null; reason?: string; refused?: boolean }
  | { type: 'error'; message: string };

interface Job {
  fd: number;
  hash: Hash;
  size: number;
  stage: LayerStage | null;
  stageError?: string;
}

let job: Job | null = null;
let queue: Promise<void> = Promise.resolve();
const post = (m: FromWorker, transfer?: ArrayBuffer[]) => parentPort!.postMessage(m, transfer);

async function handle(m: ToWorker): Promise<void> {
  switch (m.type) {
    case 'start': {
      let stage: LayerStage | null = null;
      let stageError: string | undefined;
      if (m.stageRoot) {
        try {
          stage = await LayerStage.start(m.stageRoot, m.mediaType);
        } catch (err) {
          stageError = (err as Error).message;
        }
      }
      job = { fd: openSync(m.tmp, 'w', 0o644), hash: createHash('sha256'), size: 0, stage, ...(stageError ? { stageError } : {}) };
      return;
    }
    case 'chunk': {
      const j = job;
      if (!j) return; // after an error: the pool drops this worker
      const b = Buffer.from(m.buf, 0, m.length);
      j.hash.update(b);
      for (let off = 0; off < b.length;) off += writeSync(j.fd, b, off, b.length - off);
      j.size += b.length;
      // The stage's gunzip holds on to what it is given: a copy, so the batch goes back at once.
      const copy = j.stage ? Buffer.from(b) : null;
      post({ type: 'ack', bytes: b.length, buf: m.buf }, [m.buf]);
      if (copy) await j.stage!.push(copy);
      return;
    }
    case 'end': {
      const j = job;
      job = null;
      if (!j) return;
      closeSync(j.fd);
      const digest = `sha256:${j.hash.digest('hex')}`;
      const r = j.stage ? await j.stage.finish() : { layer: null, reason: j.stageError ?? 'not staged' };
      post({
        type: 'done',
        digest,
        size: j.size,
        staged: r.layer,
        ...(r.reason ? { reason: r.reason } : {}),
        ...('refused' in r && r.refused ? { refused: true } : {}),
      });
      return;
    }
    case 'abort': {
      const j = job;
      job = null;
      if (!j) return;
      closeSync(j.fd);
      await j.stage?.discard();
      post({ type: 'done', digest: '', size: j.size, staged: null, reason: 'aborted' });
      return;
    }
  }
}

parentPort?.on('message', (m: ToWorker) => {
  queue = queue.then(
    () => handle(m),
    () => handle(m),
  );
  queue.catch((err: Error) => {
    job = null;
    post({ type: 'error', message: err.message });
  });
});
