// Downloads written (and unpacked) by worker threads (stage-worker.ts): a worker GETs the layer
// itself (worker-fetch.ts) and a second one unpacks the blob file as it is written
// (stage-tail.ts); or (ENGINE_PULL_FETCH=main) the main thread copies the received bytes into
// 1 MiB batches and hands them over (transferred, not copied again) to one worker that hashes
// them, writes the temporary blob file and, when asked, gunzips, hashes and extracts the layer
// into a staging tree. So the layers of a pull download and unpack in parallel, off the main
// thread. Idle workers
// are kept for the next layer of the pull (a worker's start costs ~20 ms of CPU) and end after
// IDLE_MS unused: an ended worker's isolate and its thread's malloc memory go back to the OS (a
// heap trim is asked for), where a kept one held tens of MiB each for as long as it was kept.
import { randomBytes } from 'node:crypto';
import { mkdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { BlobVerificationError, registerBlob, TMP_PREFIX, type BlobTarget } from './blob-writer.ts';
import type { StagedLayer } from './staged-unpack.ts';
import type { FromWorker, ToWorker } from './stage-worker.ts';
import type { StageOutcome } from './stage-tail.ts';
import { errorOf, type BlobFetch } from './worker-fetch.ts';
import { internal } from '../../errors.ts';
import { requestHeapTrim } from '../../util/heap-trim.ts';

const BATCH = 1 << 20;
/** Bytes handed to a worker and not yet written by it: the download waits beyond this. */
const IN_FLIGHT = 16 << 20;
/** Long enough for the next layer of the same pull, short enough that a pull's memory goes soon after it. */
const IDLE_MS = 1_000;
/**
 * A worker's heap: its young generation (V8 sizes it for the main thread's, up to 3 × 8 MiB here)
 * is mostly the socket reads' and file reads' small Buffer objects, dead at once; a small one is
 * scavenged more often, each scavenge costing next to nothing on a heap this small, and frees their
 * off-heap bytes sooner. The old generation holds the module code and little else.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 3, maxOldGenerationSizeMb: 64 };

const idle: Worker[] = [];
const idleTimers = new Map<Worker, NodeJS.Timeout>();

function take(): Worker {
  const w = idle.pop();
  if (w) {
    clearTimeout(idleTimers.get(w));
    idleTimers.delete(w);
    w.ref();
    return w;
  }
  // Beside this module: dist/src/… unbundled, dist/bundle/ in the bundle (scripts/bundle.mjs).
  const fresh = new Worker(new URL('./stage-worker.js', import.meta.url), { resourceLimits: WORKER_LIMITS });
  live++;
  fresh.once('exit', () => {
    live--;
    // Its pages are unmapped; what its thread freed in malloc's arenas needs a trim.
    if (live === 0) requestHeapTrim();
  });
  return fresh;
}

/** Workers running or kept idle. */
let live = 0;
/** Workers handed out and not given back (or terminated) yet. */
let busy = 0;
/** Callers waiting for workers, first come first served. */
const waiting: Array<{ n: number; grant: () => void }> = [];

/**
 * Each worker is an isolate with Node's environment (~13 MiB resident before any work): a pull of
 * many layers used to start one or two per layer in flight (8 for 4 layers), ~25 MiB each with their
 * buffers. So at most POOL_MAX work at once, whatever the downloads' concurrency: a layer's pair
 * (fetching + unpacking) is granted together, so a waiting layer never holds one of them.
 * ENGINE_PULL_WORKERS changes it (measured with bench/pull-memory.ts).
 */
const POOL_MAX = Math.max(2, Number(process.env.ENGINE_PULL_WORKERS) || 4);

/** `n` workers (≤ POOL_MAX) once that many are free. */
async function acquire(n: number): Promise<Worker[]> {
  if (busy + n > POOL_MAX || waiting.length) await new Promise<void>((grant) => waiting.push({ n, grant }));
  else busy += n;
  return Array.from({ length: n }, take);
}

/** A worker handed out is back (idle or ended): the waiters that now fit go on, in order. */
function release(): void {
  busy--;
  while (waiting[0] && busy + waiting[0].n <= POOL_MAX) {
    const next = waiting.shift()!;
    busy += next.n; // theirs from now: nobody overtakes them before they resume
    next.grant();
  }
}

/** A worker handed out, after a failure: ended, not kept. */
function drop(w: Worker): void {
  void w.terminate();
  release();
}

function giveBack(w: Worker): void {
  w.removeAllListeners('message');
  w.removeAllListeners('error');
  w.removeAllListeners('exit');
  w.unref();
  idle.push(w);
  release();
  const t = setTimeout(() => {
    idleTimers.delete(w);
    const i = idle.indexOf(w);
    if (i >= 0) idle.splice(i, 1);
    void w.terminate();
  }, IDLE_MS);
  t.unref();
  idleTimers.set(w, t);
}

interface Streamed {
  digest: string;
  size: number;
  staged: StagedLayer | null;
  reason?: string;
  /** The layer has an entry leading out of it: the pull fails. */
  refused?: boolean;
}

/** Streams `source` through a worker into `tmp` (and a staging tree under stage.root). */
async function throughWorker(
  tmp: string,
  source: AsyncIterable<Buffer>,
  stage: { root: string; mediaType: string } | null,
): Promise<Streamed> {
  const [w] = (await acquire(1)) as [Worker];
  let inFlight = 0;
  let wake: (() => void) | null = null;
  let failed: Error | null = null;
  let settle!: { resolve: (r: Streamed) => void; reject: (e: Error) => void };
  const done = new Promise<Streamed>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined); // awaited below; a failure while sending is reported there
  const fail = (err: Error) => {
    failed ??= err;
    settle.reject(err);
    wake?.();
  };
  w.on('message', (m: FromWorker) => {
    if (m.type === 'ack') {
      inFlight -= m.bytes;
      spare.push(m.buf);
      if (inFlight <= IN_FLIGHT) wake?.();
    } else if (m.type === 'done')
      settle.resolve({
        digest: m.digest,
        size: m.size,
        staged: m.staged,
        ...(m.reason ? { reason: m.reason } : {}),
        ...(m.refused ? { refused: true } : {}),
      });
    else if (m.type === 'error') fail(new Error(`blob writer: ${m.message}`));
  });
  w.on('error', fail);
  w.on('exit', () => fail(new Error('blob writer thread exited')));
  const send = (m: ToWorker, transfer?: ArrayBuffer[]) => w.postMessage(m, transfer);
  send({ type: 'start', tmp, stageRoot: stage?.root ?? null, mediaType: stage?.mediaType ?? '' });
  // Batches come back from the worker and are reused: fresh ArrayBuffers (210 for a 210 MB pull)
  // would each count as external memory and bring on full collections of the daemon's large heap.
  const spare: ArrayBuffer[] = [];
  let batch = new ArrayBuffer(BATCH);
  let fill = 0;
  const flush = async () => {
    if (!fill) return;
    inFlight += fill;
    send({ type: 'chunk', buf: batch, length: fill }, [batch]);
    batch = spare.pop() ?? new ArrayBuffer(BATCH);
    fill = 0;
    while (inFlight > IN_FLIGHT && !failed) await new Promise<void>((r) => (wake = r));
    wake = null;
  };
  try {
    for await (const chunk of source) {
      for (let off = 0; off < chunk.length;) {
        const n = Math.min(BATCH - fill, chunk.length - off);
        new Uint8Array(batch, fill, n).set(chunk.subarray(off, off + n));
        fill += n;
        off += n;
        if (fill === BATCH) await flush();
      }
      if (failed) throw failed;
    }
    await flush();
    send({ type: 'end' });
  } catch (err) {
    if (!failed) {
      send({ type: 'abort' }); // the worker removes its staging tree and answers 'done'
      await done.catch(() => undefined);
      giveBack(w);
    } else drop(w);
    throw err;
  }
  try {
    const r = await done;
    giveBack(w);
    return r;
  } catch (err) {
    drop(w);
    throw err;
  }
}

/** What the main thread hears of a worker's own download (worker-fetch.ts). */
export interface FetchEvents {
  response(): void;
  progress(received: number): void;
  received(): void;
}

/**
 * The worker GETs the blob itself into `tmp`; `status` when the registry did not answer 200. With
 * `stage`, a second worker unpacks the file as it is written (stage-tail.ts).
 */
async function fetchInWorker(
  tmp: string,
  fetch: BlobFetch,
  stage: { root: string; mediaType: string } | null,
  events: FetchEvents,
  signal: AbortSignal,
): Promise<Streamed | { status: number }> {
  if (!stage) return fetchOnly((await acquire(1))[0]!, tmp, fetch, events, signal, null);
  const [tail, fetcher] = (await acquire(2)) as [Worker, Worker];
  const { port1, port2 } = new MessageChannel();
  const unpacked = tailIn(tail, tmp, port2, stage);
  const dropStaged = async () => {
    const o = await unpacked; // aborted by the fetching worker (or its end), or complete
    if (o.staged) await rm(o.staged.dir, { recursive: true, force: true }).catch(() => undefined);
  };
  let r: Streamed | { status: number };
  try {
    r = await fetchOnly(fetcher, tmp, fetch, events, signal, port1);
  } catch (err) {
    await dropStaged();
    throw err;
  }
  if ('status' in r) {
    await dropStaged();
    return r;
  }
  const o = await unpacked;
  return {
    digest: r.digest,
    size: r.size,
    staged: o.staged,
    ...(o.reason ? { reason: o.reason } : {}),
    ...(o.refused ? { refused: true } : {}),
  };
}

/** The unpacking half on worker `w`: its outcome (never rejects; a failed thread is a layer not staged). */
function tailIn(w: Worker, tmp: string, port: MessagePort, stage: { root: string; mediaType: string }): Promise<StageOutcome> {
  return new Promise<StageOutcome>((resolve) => {
    let settled = false;
    const end = (ok: boolean, o: StageOutcome) => {
      if (settled) return;
      settled = true;
      if (ok) giveBack(w);
      else drop(w);
      resolve(o);
    };
    w.on('message', (m: FromWorker) => {
      if (m.type === 'staged')
        end(true, { staged: m.staged, ...(m.reason ? { reason: m.reason } : {}), ...(m.refused ? { refused: true } : {}) });
      else if (m.type === 'error') end(false, { staged: null, reason: `unpack thread: ${m.message}` });
    });
    w.on('error', (err) => end(false, { staged: null, reason: `unpack thread: ${err.message}` }));
    w.on('exit', () => end(false, { staged: null, reason: 'unpack thread exited' }));
    w.postMessage({ type: 'tail', tmp, stageRoot: stage.root, mediaType: stage.mediaType, port } satisfies ToWorker, [port]);
  });
}

/** The fetching worker: the GET, the blob's digest and file; told to `tailPort` as the file is written when given. */
function fetchOnly(
  w: Worker,
  tmp: string,
  fetch: BlobFetch,
  events: FetchEvents,
  signal: AbortSignal,
  tailPort: MessagePort | null,
): Promise<Streamed | { status: number }> {
  return new Promise<Streamed | { status: number }>((resolve, reject) => {
    let settled = false;
    const onAbort = () => w.postMessage({ type: 'abort' } satisfies ToWorker);
    const end = (ok: boolean) => {
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (ok) giveBack(w);
      else drop(w);
    };
    w.on('message', (m: FromWorker) => {
      if (settled) return;
      if (m.type === 'response') events.response();
      else if (m.type === 'progress') events.progress(m.received);
      else if (m.type === 'received') events.received();
      else if (m.type === 'status') {
        end(true);
        resolve({ status: m.status });
      } else if (m.type === 'fetch-failed') {
        end(true);
        reject(
          signal.aborted ? (signal.reason ?? errorOf(m.failure)) : m.failure.badLength ? internal(m.failure.message) : errorOf(m.failure),
        );
      } else if (m.type === 'done') {
        end(true);
        resolve({
          digest: m.digest,
          size: m.size,
          staged: m.staged,
          ...(m.reason ? { reason: m.reason } : {}),
          ...(m.refused ? { refused: true } : {}),
        });
      } else if (m.type === 'error') {
        end(false);
        reject(new Error(`blob writer: ${m.message}`));
      }
    });
    w.on('error', (err) => {
      if (!settled) (end(false), reject(err));
    });
    w.on('exit', () => {
      if (!settled) (end(false), reject(new Error('blob writer thread exited')));
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const start: ToWorker = {
      type: 'start',
      tmp,
      stageRoot: null,
      mediaType: '',
      fetch,
      ...(tailPort ? { tailPort } : {}),
    };
    w.postMessage(start, tailPort ? [tailPort] : []);
  });
}

/**
 * writeBlob's direct path (blob-writer.ts) with the writing done by a worker, which also unpacks
 * the layer into a staging directory under `stage.root` when `stage` is given. `source` is the
 * received bytes, or the request for the worker to send itself (answered with `status` when the
 * registry did not answer 200: nothing stored, the caller repeats the GET on its own). Rejects (storing
 * nothing, staging nothing) when the bytes do not match; a layer the stage could not reproduce
 * comes back with `staged: null` and the reason.
 */
export async function writeBlobThreaded(
  t: BlobTarget & { contentRoot: string },
  ref: string,
  digest: string,
  size: number,
  source: AsyncIterable<Buffer> | { fetch: BlobFetch; events: FetchEvents; signal: AbortSignal },
  labels: Record<string, string>,
  stage: { root: string; mediaType: string } | null,
): Promise<{ staged: StagedLayer | null; reason?: string; refused?: boolean } | { status: number }> {
  const dir = join(t.contentRoot, 'blobs', 'sha256');
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${TMP_PREFIX}${randomBytes(8).toString('hex')}`);
  let staged: StagedLayer | null = null;
  try {
    const r =
      'fetch' in source
        ? await fetchInWorker(tmp, source.fetch, stage, source.events, source.signal)
        : await throughWorker(tmp, source, stage);
    if ('status' in r) return r;
    staged = r.staged;
    if (r.size !== size) throw new BlobVerificationError(`blob ${digest}: got ${r.size} bytes, expected ${size}`);
    if (r.digest !== digest) throw new BlobVerificationError(`filesystem layer verification failed for digest ${digest}`);
    await registerBlob(t, tmp, join(dir, digest.slice('sha256:'.length)), { ref, digest, size, labels });
    return { staged, ...(r.reason ? { reason: r.reason } : {}), ...(r.refused ? { refused: true } : {}) };
  } catch (err) {
    // A staged tree of bytes that were not the blob's is not used.
    if (staged) await rm(staged.dir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  } finally {
    // The temporary file (the blob is its hard link now, or the write failed).
    await unlink(tmp).catch(() => undefined);
  }
}
