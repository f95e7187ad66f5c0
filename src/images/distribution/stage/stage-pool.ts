// Downloads written (and unpacked) by worker threads (stage-worker.ts): a worker GETs the layer
// itself (worker-fetch.ts) and another job, on the other worker, unpacks the blob file as it is
// written (stage-worker.ts runTail); or (ENGINE_PULL_FETCH=main) the main thread copies the received bytes
// into 1 MiB batches and hands them over (transferred, not copied again) to a worker that hashes
// them, writes the temporary blob file and, when asked, gunzips, hashes and extracts the layer into
// a staging tree. So the layers of a pull download and unpack in parallel, off the main thread, on
// a small fixed number of workers (POOL_MAX) that each run several jobs. Idle workers are kept for
// the next layer of the pull (a worker's start costs ~20 ms of CPU) and end after IDLE_MS unused:
// an ended worker's isolate and its thread's malloc memory go back to the OS (a heap trim is asked
// for), where a kept one held tens of MiB for as long as it was kept.
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { mkdir, rm, unlink } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { BlobVerificationError, registerBlob, TMP_PREFIX, type BlobTarget } from '../blob-writer.ts';
import type { StagedLayer } from './staged-unpack.ts';
import type { FromWorker, StageWorkerData, ToWorker } from './stage-worker.ts';
import { takeHashed } from './hash-handoff.ts';
import type { StageOutcome } from './stage-tail.ts';
import { errorOf, type BlobFetch } from './worker-fetch.ts';
import { internal } from '../../../errors.ts';
import { requestHeapTrim } from '../../../util/heap-trim.ts';
import { mallocTrim } from '../../../util/malloc-trim.ts';

const BATCH = 1 << 20;
/** Bytes handed to a worker and not yet written by it: the download waits beyond this. */
const IN_FLIGHT = 4 << 20;
/** Long enough for the next layer of the same pull, short enough that a pull's memory goes soon after it. */
const IDLE_MS = 1_000;
/** How long an idle worker asked to exit may take before it is terminated. */
const EXIT_GRACE_MS = 2_000;
/**
 * A worker's heap: its young generation (V8 sizes it for the main thread's, up to 3 × 8 MiB here)
 * is mostly the socket reads' and file reads' small Buffer objects, dead at once; a small one is
 * scavenged more often, each scavenge costing next to nothing on a heap this small, and frees their
 * off-heap bytes sooner. The old generation holds the module code and little else.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 3, maxOldGenerationSizeMb: 64 };
/**
 * Workers at most, whatever the downloads' concurrency. Each is an isolate with Node's environment
 * (~13 MiB resident before any work): one or two per layer in flight (8 for a pull of 4 layers)
 * held ~25 MiB each with their buffers. A worker runs several jobs at once (stage-worker.ts), so
 * two keep both halves of a layer, and of every layer in flight, off the main thread on two cores.
 * On a host of two cores or fewer, one: the main thread, containerd and the other worker share the
 * same two cores, and a 210 MB pull took no longer with one (measured at load 7–20: 1.6–2.9 s with
 * one, 2.0–3.6 s with two) for ~14 MiB less at the peak (113 against 127 MiB). With two CPU burners
 * spinning, though, two workers win a larger share of the cores: 7.6–8.0 s against 9.6–13.2 s.
 * ENGINE_PULL_WORKERS changes it (measured with bench/pull-memory.ts).
 */
const POOL_MAX = Math.max(1, Number(process.env.ENGINE_PULL_WORKERS) || (availableParallelism() > 2 ? 2 : 1));

/** Whether a worker's downloads are hashed here (hash-handoff.ts) rather than by the worker. */
const HASH_ON_MAIN = process.env.ENGINE_PULL_HASH !== 'worker';

/** What a job hears from its worker: its messages, or the worker's end. */
interface JobHandlers {
  message(m: FromWorker): void;
  gone(err: Error): void;
  /** The blob's digest, computed here from the worker's write buffers. */
  hash?: Hash;
}

interface Slot {
  w: Worker;
  jobs: Map<number, JobHandlers>;
  idleTimer: NodeJS.Timeout | null;
}

const slots: Slot[] = [];
let nextId = 1;

function spawnSlot(): Slot {
  // Beside this module: dist/src/… unbundled, dist/bundle/ in the bundle (scripts/bundle.mjs).
  const workerData: StageWorkerData = { hashOnMain: HASH_ON_MAIN };
  const w = new Worker(new URL('./stage-worker.js', import.meta.url), { resourceLimits: WORKER_LIMITS, workerData });
  const slot: Slot = { w, jobs: new Map(), idleTimer: null };
  const gone = (err: Error) => {
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    const jobs = [...slot.jobs.values()];
    slot.jobs.clear();
    for (const j of jobs) j.gone(err);
  };
  w.on('message', (m: FromWorker) => {
    // Taken whether or not the job is still followed: the worker reuses the buffer once it is.
    if (m.type === 'hash') return takeHashed(m, slot.jobs.get(m.id)?.hash);
    slot.jobs.get(m.id)?.message(m);
  });
  w.on('error', (err) => {
    gone(err);
    void w.terminate();
  });
  w.on('exit', () => {
    gone(new Error('blob writer thread exited'));
    // Its pages are unmapped; what its thread freed in malloc's arenas needs a trim.
    if (!slots.length) requestHeapTrim({ isolateEnded: true });
  });
  slots.push(slot);
  return slot;
}

/** How long a worker started ahead of a pull's downloads waits for them before it ends. */
const WARM_MS = 10_000;

/**
 * Starts a worker ahead of a pull's first download (while its manifest and configuration are
 * fetched), when none runs: a worker's start (an isolate, Node's bootstrap, this module's code) is
 * ~20 ms of CPU, which on a busy machine took seconds of the pull's wall time (measured with two
 * CPU burners: the first layers' GET went out ~2.3 s after they were asked for). Unused, it ends
 * after WARM_MS.
 */
export function warmStageWorker(): void {
  if (slots.length) return;
  const slot = spawnSlot();
  slot.w.unref();
  slot.idleTimer = setTimeout(() => endIdle(slot), WARM_MS);
  slot.idleTimer.unref();
}

/** An idle worker asked to end. */
function endIdle(slot: Slot): void {
  slot.idleTimer = null;
  const i = slots.indexOf(slot);
  if (i >= 0) slots.splice(i, 1);
  // It exits on its own after releasing its heap's pages (stage-worker.ts exitNow);
  // terminate() would hand them to V8's shared page pool for 8 s.
  slot.w.postMessage({ id: 0, type: 'exit' } satisfies ToWorker);
  setTimeout(() => void slot.w.terminate(), EXIT_GRACE_MS).unref();
}

/** A worker for a new job: an idle one, a new one while under POOL_MAX, else the least busy (not `avoid`). */
function pick(avoid?: Slot): Slot {
  const free = slots.find((s) => s !== avoid && !s.jobs.size);
  if (free) return free;
  if (slots.length < POOL_MAX) return spawnSlot();
  const others = slots.filter((s) => s !== avoid);
  return (others.length ? others : slots).reduce((a, b) => (b.jobs.size < a.jobs.size ? b : a));
}

const TRIM_EVERY_MS = Number(process.env.ENGINE_PULL_TRIM_MS ?? 200);
let lastTrim = 0;
/**
 * malloc_trim as a job ends (at most every TRIM_EVERY_MS): what a layer's work freed in malloc's
 * arenas (V8's compiler zones, socket reads, the isolates' own allocations) stays resident otherwise
 * until the pull ends and the idle trim runs.
 */
function trimSoon(): void {
  const now = performance.now();
  if (TRIM_EVERY_MS <= 0 || now - lastTrim < TRIM_EVERY_MS) return;
  lastTrim = now;
  mallocTrim();
}

/** Registers a job on `slot`: its id, and `end` to call once when its worker is done with it. */
function open(slot: Slot, handlers: JobHandlers): { id: number; end(): void } {
  const id = nextId++;
  if (slot.idleTimer) clearTimeout(slot.idleTimer);
  slot.idleTimer = null;
  slot.w.ref();
  slot.jobs.set(id, handlers);
  return {
    id,
    end: () => {
      if (!slot.jobs.delete(id)) return;
      trimSoon();
      if (slot.jobs.size) return;
      // Idle: kept IDLE_MS for the next layer, then ended.
      slot.w.unref();
      slot.idleTimer = setTimeout(() => endIdle(slot), IDLE_MS);
      slot.idleTimer.unref();
    },
  };
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
  const slot = pick();
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
  // Batches come back from the worker and are reused: fresh ArrayBuffers (210 for a 210 MB pull)
  // would each count as external memory and bring on full collections of the daemon's large heap.
  const spare: ArrayBuffer[] = [];
  const job = open(slot, {
    message: (m) => {
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
    },
    gone: fail,
  });
  const send = (m: ToWorker, transfer?: ArrayBuffer[]) => slot.w.postMessage(m, transfer);
  const id = job.id;
  send({ id, type: 'start', tmp, stageRoot: stage?.root ?? null, mediaType: stage?.mediaType ?? '' });
  let batch = new ArrayBuffer(BATCH);
  let fill = 0;
  const flush = async () => {
    if (!fill) return;
    inFlight += fill;
    send({ id, type: 'chunk', buf: batch, length: fill }, [batch]);
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
    send({ id, type: 'end' });
  } catch (err) {
    if (!failed) {
      send({ id, type: 'abort' }); // the worker removes its staging tree and answers 'done'
      await done.catch(() => undefined); // its answer, or the worker's end: the job is over either way
    }
    job.end();
    throw err;
  }
  try {
    return await done;
  } finally {
    job.end();
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
 * `stage`, another job (on the other worker when there are two) unpacks the file as it is written
 * (stage-worker.ts runTail).
 */
async function fetchInWorker(
  tmp: string,
  fetch: BlobFetch,
  stage: { root: string; mediaType: string } | null,
  events: FetchEvents,
  signal: AbortSignal,
): Promise<Streamed | { status: number }> {
  if (!stage) return fetchOnly(pick(), tmp, fetch, events, signal, null, null);
  const fetcher = pick();
  const unpacker = pick(fetcher);
  // One worker: the fetching job unpacks what it receives itself (no blob file read back, no
  // messages between two jobs of one thread; measured: the worker's CPU on a 210 MB pull 1.4 → 1.2 s).
  if (unpacker === fetcher) return fetchOnly(fetcher, tmp, fetch, events, signal, null, stage);
  const { port1, port2 } = new MessageChannel();
  const unpacked = tailIn(unpacker, tmp, port2, stage);
  const dropStaged = async () => {
    const o = await unpacked; // aborted by the fetching job (or its end), or complete
    if (o.staged) await rm(o.staged.dir, { recursive: true, force: true }).catch(() => undefined); // EBUSY or EACCES: a tree left behind is swept at the next start (cleanStageLeftovers)
  };
  let r: Streamed | { status: number };
  try {
    r = await fetchOnly(fetcher, tmp, fetch, events, signal, port1, null);
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

/** The unpacking half as a job on `slot`: its outcome (never rejects; a failed thread is a layer not staged). */
function tailIn(slot: Slot, tmp: string, port: MessagePort, stage: { root: string; mediaType: string }): Promise<StageOutcome> {
  return new Promise<StageOutcome>((resolve) => {
    const job = open(slot, {
      message: (m) => {
        if (m.type === 'staged')
          end({ staged: m.staged, ...(m.reason ? { reason: m.reason } : {}), ...(m.refused ? { refused: true } : {}) });
        else if (m.type === 'error') end({ staged: null, reason: `unpack thread: ${m.message}` });
      },
      gone: (err) => end({ staged: null, reason: `unpack thread: ${err.message}` }),
    });
    let settled = false;
    function end(o: StageOutcome): void {
      if (settled) return;
      settled = true;
      job.end();
      resolve(o);
    }
    const m: ToWorker = { id: job.id, type: 'tail', tmp, stageRoot: stage.root, mediaType: stage.mediaType, port };
    slot.w.postMessage(m, [port]);
  });
}

/** The fetching job on `slot`: the GET, the blob's digest and file; told to `tailPort` as the file is written when given. */
function fetchOnly(
  slot: Slot,
  tmp: string,
  fetch: BlobFetch,
  events: FetchEvents,
  signal: AbortSignal,
  tailPort: MessagePort | null,
  stage: { root: string; mediaType: string } | null,
): Promise<Streamed | { status: number }> {
  return new Promise<Streamed | { status: number }>((resolve, reject) => {
    let settled = false;
    const finish = () => {
      settled = true;
      signal.removeEventListener('abort', onAbort);
      job.end();
    };
    const hash = createHash('sha256');
    const job = open(slot, {
      hash,
      message: (m) => {
        if (settled) return;
        if (m.type === 'response') events.response();
        else if (m.type === 'progress') events.progress(m.received);
        else if (m.type === 'received') events.received();
        else if (m.type === 'status') {
          finish();
          resolve({ status: m.status });
        } else if (m.type === 'fetch-failed') {
          finish();
          reject(
            signal.aborted ? (signal.reason ?? errorOf(m.failure)) : m.failure.badLength ? internal(m.failure.message) : errorOf(m.failure),
          );
        } else if (m.type === 'done') {
          finish();
          resolve({
            digest: m.digest || `sha256:${hash.digest('hex')}`,
            size: m.size,
            staged: m.staged,
            ...(m.reason ? { reason: m.reason } : {}),
            ...(m.refused ? { refused: true } : {}),
          });
        } else if (m.type === 'error') {
          finish();
          reject(new Error(`blob writer: ${m.message}`));
        }
      },
      gone: (err) => {
        if (!settled) (finish(), reject(err));
      },
    });
    const onAbort = () => slot.w.postMessage({ id: job.id, type: 'abort' } satisfies ToWorker);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const start: ToWorker = {
      id: job.id,
      type: 'start',
      tmp,
      stageRoot: stage?.root ?? null,
      mediaType: stage?.mediaType ?? '',
      fetch,
      ...(tailPort ? { tailPort } : {}),
    };
    slot.w.postMessage(start, tailPort ? [tailPort] : []);
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
    if (staged) await rm(staged.dir, { recursive: true, force: true }).catch(() => undefined); // A staged tree of bytes that were not the blob's is not used; one rm cannot remove is swept at the next start.
    throw err;
  } finally {
    await unlink(tmp).catch(() => undefined); // The temporary file (the blob is its hard link now, or the write failed).
  }
}
