// The worker thread of stage-pool.ts: one layer at a time, it takes the compressed bytes of a
// download — GETting them itself (worker-fetch.ts) or handed over by the main thread — hashes them
// (the blob's digest; of its own GET, the main thread hashes the blob file's write buffers:
// hash-handoff.ts), writes them to the temporary blob file, and (when asked) unpacks them into a
// staging tree through staged-unpack.ts (gunzip, diffID, extraction). Doing this off the daemon's
// main thread lets the layers of a pull download, decompress and extract on several cores at once,
// keeps the main thread's event loop for the API, and keeps the buffers' garbage (hundreds of MB
// per pull) in this small heap, whose collections are cheap.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { handoffTo, sharedBuffer, type HashMessage } from './hash-handoff.ts';
import { LayerStage } from './staged-unpack.ts';
import { failureOf, fetchBlob, type BlobFetch, type FetchFailure } from './worker-fetch.ts';
import { PooledFile, WriteBuffers } from './pooled-writes.ts';
import { runTail, type StageOutcome, type ToTail } from './stage-tail.ts';

/**
 * Messages from the pool (stage-pool.ts), each for one job (a layer's download, or its unpacking
 * half): a worker runs several jobs at once (its downloads' sockets and file writes interleave on
 * its event loop; each unpack step is synchronous, 1 MiB at a time).
 */
export type ToWorker = { id: number } & (
  | { type: 'start'; tmp: string; stageRoot: string | null; mediaType: string; fetch?: BlobFetch; tailPort?: MessagePort }
  /** The unpacking half of a layer whose GET another worker does, reading `tmp` as it is written (stage-tail.ts). */
  | { type: 'tail'; tmp: string; stageRoot: string; mediaType: string; port: MessagePort }
  | { type: 'chunk'; buf: ArrayBuffer; length: number }
  | { type: 'end' }
  | { type: 'abort' }
  /** No jobs left and none wanted: release what the heap holds and end (exitNow). */
  | { type: 'exit' }
);

/** What the pool tells a worker at its start. */
export interface StageWorkerData {
  /** The blob digest of the worker's own downloads is computed by the main thread (hash-handoff.ts). */
  hashOnMain: boolean;
}

/** Answers to the pool, each naming its job. */
export type FromWorker = { id: number } & (
  | { type: 'ack'; bytes: number; buf: ArrayBuffer }
  /** The next bytes of the job's blob, for the main thread to hash. */
  | HashMessage
  /** `digest`: '' when the main thread hashed the blob (hash-handoff.ts). */
  | { type: 'done'; digest: string; size: number; staged: { dir: string; diffId: string } | null; reason?: string; refused?: boolean }
  | { type: 'error'; message: string }
  /** The worker's own GET (start.fetch): the response came, bytes received so far, all received. */
  | { type: 'response' }
  | { type: 'progress'; received: number }
  | { type: 'received' }
  /** …answered something else than 200: nothing stored, the main thread repeats the GET. */
  | { type: 'status'; status: number }
  | { type: 'fetch-failed'; failure: FetchFailure }
  /** The unpacking half's result ('tail'). */
  | ({ type: 'staged' } & StageOutcome)
);

/** An answer without its job's id: `post` adds it. */
type Answer = FromWorker extends infer F ? (F extends unknown ? Omit<F, 'id'> : never) : never;

interface Job {
  id: number;
  fd: number;
  /** null: the main thread hashes the blob (hash-handoff.ts). */
  hash: Hash | null;
  size: number;
  stage: LayerStage | null;
  stageError?: string;
  /** The worker's own GET, when it does one. */
  fetch?: AbortController;
  /** Told how much of the blob file is written, for another worker to unpack it (instead of `stage`). */
  tail?: MessagePort;
  /** The blob file written on libuv's pool (a download unpacked here, or not at all). */
  file?: PooledFile;
  /** `fd` closed (never twice: the number may be another file's by then). */
  closed?: boolean;
}

/** The running jobs by id (a job's 'start' to its answer). */
const jobs = new Map<number, Job>();
let queue: Promise<void> = Promise.resolve();
const post = (id: number, m: Answer, transfer?: ArrayBuffer[]) => parentPort!.postMessage({ id, ...m }, transfer);

/** Closes the job's blob file and ends its stage: 'done' with the digest and staged layer. */
async function finish(j: Job): Promise<void> {
  if (j.file) {
    await j.file.drained();
    if (j.file.error) {
      await discard(j);
      throw j.file.error;
    }
  }
  j.closed = true;
  closeSync(j.fd);
  const digest = j.hash ? `sha256:${j.hash.digest('hex')}` : '';
  const r = j.stage ? await j.stage.finish() : { layer: null, reason: j.stageError ?? 'not staged' };
  post(j.id, {
    type: 'done',
    digest,
    size: j.size,
    staged: r.layer,
    ...(r.reason ? { reason: r.reason } : {}),
    ...('refused' in r && r.refused ? { refused: true } : {}),
  });
}

async function discard(j: Job): Promise<void> {
  await j.file?.drained(); // not closed under a write in flight
  if (j.closed) return;
  j.closed = true;
  closeSync(j.fd);
  await j.stage?.discard();
}

/**
 * Writes of the received chunks gathered into one write per 256 KiB: socket reads are 64 KiB. One
 * gather buffer per layer in flight: 1 MiB ones made the peak of a 210 MB pull ~6 MiB higher
 * (bench/pull-memory.ts) for no measurable gain in time. ENGINE_PULL_BUF_KB changes it (and the
 * unpacking half's reads, stage-tail.ts).
 */
const GATHER = Number(process.env.ENGINE_PULL_BUF_KB ?? 256) * 1024;
/** Gather buffers of ended downloads, for the next ones. */
const gathers: Buffer[] = [];
/**
 * Buffers of this worker's writes on libuv's pool (pooled-writes.ts), blob files and extracted
 * files together: POOL_WRITES × 256 KiB in flight at most. ENGINE_PULL_POOL_WRITES=N changes the
 * number; 0: every write on this thread.
 */
const POOL_WRITES = Number(process.env.ENGINE_PULL_POOL_WRITES ?? 8);
const pooled = POOL_WRITES > 0 ? new WriteBuffers(GATHER, POOL_WRITES) : null;
/**
 * The blob files' pooled writes when the main thread hashes them: buffers of shared memory, each
 * reused once written and hashed (hash-handoff.ts). As many as the pool's writes (8 by default),
 * at least six: the pull's default three downloads each gathering one and writing one.
 */
const blobWrites =
  pooled && (workerData as StageWorkerData | null)?.hashOnMain ? new WriteBuffers(GATHER, Math.max(POOL_WRITES, 6), sharedBuffer) : null;

/**
 * A young-generation collection after every SCAVENGE_EVERY bytes received through node:http by
 * this worker (all its downloads together; socket-get.ts reads into one reused buffer, with no
 * garbage to collect). Each socket read of node:http is a fresh 64 KiB off-heap allocation owned by a Buffer that dies at once, but its memory goes back
 * only when a collection finds it dead, and receiving makes so little garbage on the heap that
 * none comes for hundreds of MiB (external memory counts only against V8's global limit here:
 * bin/engined): measured, a 210 MB pull left ~100 MiB of socket reads per fetching worker in
 * malloc's arenas. A scavenge of this small heap costs well under a millisecond.
 */
const SCAVENGE_EVERY = Number(process.env.ENGINE_PULL_SCAVENGE_MB ?? 2) * 2 ** 20;
let sinceGc = 0;
type GcOptions = { type: 'minor' } | { type: 'major'; execution: 'sync'; flavor: 'last-resort' };
let exposedGc: ((o: GcOptions) => void) | null | undefined;
function gc(o: GcOptions): void {
  if (exposedGc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      exposedGc = runInNewContext('gc') as (o: GcOptions) => void;
    } catch {
      exposedGc = null; // no gc in this V8: the buffers wait for V8's own collections
    }
  }
  exposedGc?.(o);
}
function scavenge(): void {
  gc({ type: 'minor' });
}

/**
 * The pool ends an idle worker ('exit'). The pages this isolate's collections freed sit in its
 * local page pool; an isolate that is torn down hands that pool to the process's shared pool, which
 * V8 releases only 8 s later (page-pool.cc, a fixed delay): ~20 MiB resident for 8 s after every
 * pull. A last-resort collection first releases the local pool at once.
 */
function exitNow(): void {
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  process.exit(0);
}

/** The worker's own download of the job's blob (start.fetch); ends the job like 'end' or 'abort' would. */
async function download(j: Job, f: BlobFetch): Promise<void> {
  // Received chunks are copied into a gather buffer and let go at once: a socket read kept until a
  // MiB had gathered survived the scavenges meanwhile and was promoted to the old generation, which
  // only a full collection frees (measured: 20–27 MiB of dead socket reads per fetching worker).
  const file = j.file;
  const gather = file ? Buffer.alloc(0) : (gathers.pop() ?? Buffer.allocUnsafeSlow(GATHER));
  let fill = 0;
  let written = 0;
  let reported = 0;
  /** Each chunk is a fresh allocation (node:http), freed only by a collection; not for socket-get.ts's reused buffer. */
  let fresh = true;
  const received = (n: number) => {
    sinceGc += fresh ? n : 0;
    if (sinceGc >= SCAVENGE_EVERY) {
      sinceGc = 0;
      scavenge();
    }
  };
  const flush = () => {
    for (let off = 0; off < fill;) off += writeSync(j.fd, gather, off, fill - off);
    written += fill;
    // What is in the file (the rest of a received chunk may still be in the gather buffer).
    j.tail?.postMessage({ type: 'written', bytes: written } satisfies ToTail);
    received(fill);
    fill = 0;
  };
  try {
    const status = await fetchBlob(f, j.fetch!.signal, {
      response: (how) => {
        fresh = !how.reusedBuffer;
        post(j.id, { type: 'response' });
      },
      chunk: (c) => {
        j.hash?.update(c);
        j.size += c.length;
        j.stage?.push(c);
        let wait: Promise<void> | undefined;
        if (file) {
          wait = file.push(c);
          received(c.length);
        }
        for (let off = file ? c.length : 0; off < c.length;) {
          const n = c.copy(gather, fill, off);
          fill += n;
          off += n;
          if (fill === GATHER) flush();
        }
        if (j.size - reported >= GATHER) post(j.id, { type: 'progress', received: (reported = j.size) });
        return wait;
      },
      received: () => {
        file?.flush();
        flush();
        if (!file) j.tail?.postMessage({ type: 'end', bytes: written } satisfies ToTail);
        post(j.id, { type: 'progress', received: j.size });
        post(j.id, { type: 'received' });
      },
    });
    if (file && status === 200) {
      // The unpacking half told the end once the last pooled write is in the file.
      await file.drained();
      if (file.error) throw file.error;
      j.tail?.postMessage({ type: 'end', bytes: j.size } satisfies ToTail);
    }
    jobs.delete(j.id);
    if (status !== 200) {
      j.tail?.postMessage({ type: 'abort' } satisfies ToTail);
      await discard(j);
      post(j.id, { type: 'status', status });
      return;
    }
    await finish(j);
  } catch (err) {
    jobs.delete(j.id);
    j.tail?.postMessage({ type: 'abort' } satisfies ToTail);
    await discard(j).catch(() => undefined); // failing already: the failure below is what counts
    post(j.id, { type: 'fetch-failed', failure: failureOf(err) });
  } finally {
    if (!file) gathers.push(gather);
  }
}

async function handle(m: ToWorker): Promise<void> {
  switch (m.type) {
    case 'start': {
      let stage: LayerStage | null = null;
      let stageError: string | undefined;
      if (m.stageRoot) {
        try {
          stage = await LayerStage.start(m.stageRoot, m.mediaType, pooled);
        } catch (err) {
          stageError = (err as Error).message;
        }
      }
      const job: Job = {
        id: m.id,
        fd: openSync(m.tmp, 'w', 0o644),
        hash: m.fetch && blobWrites ? null : createHash('sha256'),
        size: 0,
        stage,
        ...(stageError ? { stageError } : {}),
      };
      jobs.set(m.id, job);
      if (m.tailPort) job.tail = m.tailPort;
      if (m.fetch && pooled) {
        const tail = job.tail;
        job.file = new PooledFile(
          job.fd,
          blobWrites ?? pooled,
          tail ? (bytes) => tail.postMessage({ type: 'written', bytes } satisfies ToTail) : undefined,
          blobWrites ? handoffTo((h) => post(m.id, h)) : undefined,
        );
      }
      if (m.fetch) {
        job.fetch = new AbortController();
        void download(job, m.fetch); // not queued: an 'abort' must reach it meanwhile
      }
      return;
    }
    case 'tail': {
      // Not awaited: the queue stays free (this worker gets nothing else until it answers).
      const id = m.id;
      void runTail(m.port, m.tmp, m.stageRoot, m.mediaType, pooled).then(
        (r) => post(id, { type: 'staged', ...r }),
        (err: Error) => post(id, { type: 'staged', staged: null, reason: err.message }),
      );
      return;
    }
    case 'chunk': {
      const j = jobs.get(m.id);
      if (!j) return; // after an error: the pool drops this worker
      const b = Buffer.from(m.buf, 0, m.length);
      j.hash?.update(b);
      for (let off = 0; off < b.length;) off += writeSync(j.fd, b, off, b.length - off);
      j.size += b.length;
      j.stage?.push(b); // synchronous: done with the batch when it returns
      post(j.id, { type: 'ack', bytes: b.length, buf: m.buf }, [m.buf]);
      return;
    }
    case 'end': {
      const j = jobs.get(m.id);
      jobs.delete(m.id);
      if (!j) return;
      await finish(j);
      return;
    }
    case 'exit':
      if (jobs.size === 0) exitNow();
      return;
    case 'abort': {
      const j = jobs.get(m.id);
      if (!j) return;
      if (j.fetch) return j.fetch.abort(new Error('aborted')); // download() ends the job and answers
      jobs.delete(m.id);
      await discard(j);
      post(j.id, { type: 'done', digest: '', size: j.size, staged: null, reason: 'aborted' });
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
    jobs.delete(m.id);
    post(m.id, { type: 'error', message: err.message });
  });
});
