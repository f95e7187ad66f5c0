// Gives memory back after a burst of work. V8 keeps the heap it grew to (streaming logs, starting
// many containers): its memory reducer waits for a low allocation rate that it measures only at
// GCs, and an idle daemon runs none, so the reducer never starts (measured: 150 MB committed for
// 20 MB live, for as long as the daemon stays idle). So once some work has been done and then a
// whole interval passes quietly, we ask for one memory-reducing collection ourselves. Its
// "last-resort" flavour also returns V8's pooled pages to the OS, which a regular full GC keeps.
// The Buffers it frees go back to malloc, whose heap keeps them resident unless trimmed: a
// malloc_trim follows the collection (util/malloc-trim.ts).
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from './log.ts';
import { mallocStats, mallocTrim, mallocTrimAvailable } from './malloc-trim.ts';

type GcOptions = { type: 'major'; execution: 'sync'; flavor: 'last-resort' } | { type: 'major'; execution: 'async' } | { type: 'minor' };
type Gc = (options: GcOptions) => void;

export interface HeapTrimOptions {
  log: Logger;
  /** How often utilisation is checked; a trim needs one whole quiet interval. */
  intervalMs?: number;
  /** JS work since the last trim that makes another worth its ~70 ms. */
  minBusyMs?: number;
  /** Utilisation of the event loop below which an interval counts as quiet. */
  quietBelow?: number;
  /** Whether the work before the trimmer started counts (default: yes, the daemon's start-up). */
  startBusy?: boolean;
  /** For tests: the collector, malloc's trim, and the event loop utilisation since a previous reading. */
  gc?: Gc;
  trim?: () => boolean;
  utilization?: (since?: EventLoopUtilization) => EventLoopUtilization;
}

interface EventLoopUtilization {
  idle: number;
  active: number;
  utilization: number;
}

export interface HeapTrimmer {
  /** Runs one check now (the timer calls it); true if it collected. */
  check(): boolean;
  stop(): void;
}

/** `gc` without --expose-gc on the command line: the flag, then the function from a fresh context. */
function exposedGc(): Gc {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Gc;
}

/** V8's own figures at a trim, MiB: what of the resident memory is heap (by space) and Buffers. */
function heapFigures(): Record<string, number> {
  const mib = (n: number) => Math.round(n / 104857.6) / 10;
  const m = process.memoryUsage();
  const out: Record<string, number> = {
    heapUsedMiB: mib(m.heapUsed),
    heapTotalMiB: mib(m.heapTotal),
    externalMiB: mib(m.external),
    arrayBuffersMiB: mib(m.arrayBuffers),
  };
  for (const s of getHeapSpaceStatistics()) out[`${s.space_name.replace(/_space$/, '')}MiB`] = mib(s.physical_space_size);
  const malloc = mallocStats();
  if (malloc)
    Object.assign(out, { mallocInUseMiB: mib(malloc.inUse), mallocFreeMiB: mib(malloc.free), mallocMmappedMiB: mib(malloc.mmapped) });
  return out;
}

let backgroundGc: Gc | undefined;
let trimRequested = false;
/**
 * A requested trim (without work of the daemon's own) at most this often: it costs a full GC. Short
 * enough for a pull's ended workers (stage-pool.ts), whose memory waits for it, a few seconds
 * after a previous one.
 */
const REQUESTED_TRIM_EVERY_MS = 3_000;

/**
 * Asks the trimmer for a trim at its next quiet interval even after little work of the daemon's
 * own: memory was freed elsewhere (a worker thread ended, leaving its pages in V8's pool and its
 * allocations in malloc's heap).
 */
export function requestHeapTrim(opts: { isolateEnded?: boolean } = {}): void {
  trimRequested = true;
  if (opts.isolateEnded) isolateEnded = true;
  onRequest?.();
}

let isolateEnded = false;
/**
 * MiB of short-lived arrays the trimmer moves into the old generation before its collection after
 * a worker's isolate ended (0: none). The pages a torn-down isolate's heap pooled go to V8's
 * process-wide shared pool, released only by a task that runs 8 s later (page-pool.cc, a fixed
 * delay); but an isolate without pooled pages of its own takes its new pages from that shared pool
 * first. So this isolate grows its old generation by about the pool's size, the pages coming out of
 * it, and the memory-reducing collection right after frees them and releases them at once
 * (measured on a 210 MB pull with one stage worker: RSS at +2 s and +5 s 87 MiB, 91 without, idle 75).
 */
const ABSORB_MIB = Number(process.env.ENGINE_ABSORB_POOL_MB ?? 8);

/**
 * Allocates `mib` MiB of arrays and keeps them through two scavenges, which promotes them to the
 * old generation (new pages, the shared pool's first); they die as this returns. Each array is
 * 32 KiB (4 096 tagged slots), well under V8's largest regular object: a larger one would go to
 * the large-object space, whose pages are never pooled.
 */
function absorbSharedPool(gc: Gc, mib: number): void {
  const keep: unknown[][] = [];
  for (let i = 0; i < mib * 32; i++) keep.push(new Array<number>(4096).fill(i));
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  keep.length = 0;
}

const releasers = new Set<() => void>();
/**
 * Registers `release`, run at every trim before the collection: it lets go of a cache the daemon
 * can rebuild (a database connection's page cache), which a burst filled and nothing else shrinks.
 * Returns the function that unregisters it.
 */
export function onHeapTrim(release: () => void): () => void {
  releasers.add(release);
  return () => releasers.delete(release);
}

/**
 * Runs the registered releasers (the trimmer, before its collection). One that fails is told to
 * `failed` and the others still run: a cache that could not be let go must not end the daemon.
 */
export function releaseCaches(failed: (err: unknown) => void = () => undefined): void {
  for (const release of releasers) {
    try {
      release();
    } catch (err) {
      failed(err);
    }
  }
}

/** The running trimmer's early look after a request (without it, the next tick: up to 2 s later). */
let onRequest: (() => void) | undefined;

/**
 * Asks for one major collection that does not hold the event loop (V8 marks concurrently, then
 * finishes incrementally), for right after work known to leave a large heap of garbage behind: a
 * build of a large context. Back-to-back builds leave the trimmer no quiet interval, and each kept
 * the heap the previous one grew to (measured: 116, 140, 148 MiB over three builds of 100 MiB;
 * 105 MiB each with a collection between them).
 */
export function collectInBackground(): void {
  (backgroundGc ??= exposedGc())({ type: 'major', execution: 'async' });
}

/**
 * Passes a request body's chunks on, with a young-generation collection every `everyBytes`. Node's
 * HTTP parser copies each body chunk into a fresh off-heap buffer; a chunk consumed at once dies
 * young, but its memory goes back only when a collection finds it dead, and a body that creates
 * little on the heap (a few large files) triggers few: a test server receiving 100 MiB peaked
 * 50 MiB above its start, 2 MiB with a scavenge every 2 MiB. A scavenge of a small young
 * generation costs well under a millisecond. Chunks must not be kept by the consumer.
 */
export async function* collectingEvery(source: AsyncIterable<Uint8Array>, everyBytes = 4 << 20): AsyncGenerator<Uint8Array> {
  let since = 0;
  for await (const chunk of source) {
    since += chunk.length;
    if (since >= everyBytes) {
      since = 0;
      (backgroundGc ??= exposedGc())({ type: 'minor' });
    }
    yield chunk;
  }
}

/**
 * Bounds the dead weight of V8's old generation while a long job runs (a build's extraction,
 * checksum, copy and layer walk): every `everyMs` the heap's used size is read, and when it has
 * grown `stepBytes` past its lowest reading since the last request, one concurrent major
 * collection is asked for. Each file of a context leaves ~0.6 KiB in the old generation that a
 * scavenge promoted and that dies soon after; V8 waits for its own limit before collecting it, so a
 * build of 40 000 files grew the heap by 20 MiB of garbage without a single major collection
 * (heap snapshots mid-build: 21 MiB live, as at rest).
 */
export function boundHeapGrowth(opts: { stepBytes?: number; everyMs?: number; used?: () => number; gc?: () => void } = {}): {
  check(): boolean;
  stop(): void;
} {
  const stepBytes = opts.stepBytes ?? 8 << 20;
  const used = opts.used ?? (() => getHeapStatistics().used_heap_size);
  const gc = opts.gc ?? (() => (backgroundGc ??= exposedGc())({ type: 'major', execution: 'async' }));
  let base = used();
  const check = (): boolean => {
    const now = used();
    if (now < base)
      base = now; // a collection ran: measure from what it left
    else if (now - base > stepBytes) {
      gc();
      base = now;
      return true;
    }
    return false;
  };
  const timer = setInterval(check, opts.everyMs ?? 100);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}

export function startHeapTrimmer(opts: HeapTrimOptions): HeapTrimmer {
  // At most one ~80 ms collection per half second of work, however the work is spread out; a
  // quiet second is enough to start it (an idle daemon is small within a couple of seconds).
  const intervalMs = opts.intervalMs ?? 1_000;
  const minBusyMs = opts.minBusyMs ?? 500;
  const trim = opts.trim ?? mallocTrim;
  if (!opts.trim && !mallocTrimAvailable()) {
    opts.log.info(
      'malloc_trim helper not built (build/native/malloc-trim.node; npm run build needs cc): memory freed after bursts stays resident',
    );
  }
  const quietBelow = opts.quietBelow ?? 0.01;
  const utilization = opts.utilization ?? ((since) => performance.eventLoopUtilization(since));
  const gc = opts.gc ?? exposedGc();
  let last = utilization();
  /** Start-up is work too: compiling, parsing the protos, restoring state. */
  let busySinceTrim = opts.startBusy === false ? 0 : minBusyMs;
  /** When a trim last ran for a request alone (not after work of the daemon's own). */
  let lastRequested = -Infinity;

  const check = (): boolean => {
    const interval = utilization(last);
    last = utilization();
    busySinceTrim += interval.active;
    const requested = trimRequested && performance.now() - lastRequested >= REQUESTED_TRIM_EVERY_MS;
    if (interval.utilization >= quietBelow || (busySinceTrim < minBusyMs && !requested)) return false;
    if (busySinceTrim < minBusyMs) lastRequested = performance.now();
    trimRequested = false;
    const before = process.memoryUsage.rss();
    const reason = busySinceTrim >= minBusyMs ? 'work' : 'request';
    const started = performance.now();
    if (isolateEnded && ABSORB_MIB > 0) absorbSharedPool(gc, ABSORB_MIB);
    isolateEnded = false;
    releaseCaches((err) => opts.log.warn('a cache could not be let go at the heap trim', { error: String(err) }));
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const gcMs = performance.now() - started;
    const afterGc = process.memoryUsage.rss();
    // V8 frees dead ArrayBuffers' memory on a background thread after the collection: trim once
    // that is done.
    setTimeout(() => {
      const t0 = performance.now();
      trim();
      last = utilization();
      if (opts.log.enabled('debug')) {
        opts.log.debug('heap trimmed after a busy period', {
          reason,
          gcMs: Math.round(gcMs),
          trimMs: Math.round(performance.now() - t0),
          rssBeforeMiB: before >> 20,
          rssAfterGcMiB: afterGc >> 20,
          rssAfterMiB: process.memoryUsage.rss() >> 20,
          ...heapFigures(),
        });
      }
    }, 100).unref();
    busySinceTrim = 0;
    last = utilization(); // the collection itself is not work to trim after
    return true;
  };
  const timer = setInterval(check, intervalMs);
  timer.unref();
  const early = () => void setTimeout(check, Math.min(300, intervalMs)).unref();
  onRequest = early;
  return {
    check,
    stop: () => {
      clearInterval(timer);
      if (onRequest === early) onRequest = undefined;
    },
  };
}
