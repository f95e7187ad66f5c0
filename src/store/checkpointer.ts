// WAL checkpoints on a thread of their own. A checkpoint copies the WAL's pages into engine.db and
// fsyncs both files: SQLite runs one inside the COMMIT that takes the WAL past 1 000 pages, so a
// 4 MiB record's write held the event loop for the copy and the fsyncs too (25–80 ms on a busy
// disk). Here the writing connection never checkpoints (wal_autocheckpoint = 0); a worker with a
// connection of its own runs PASSIVE checkpoints whenever the WAL changed. A passive checkpoint
// takes no lock a writer or reader waits for, and a kill -9 in the middle of one loses nothing
// (it is SQLite's own recovery that makes the WAL and engine.db whole again at the next open).
// The worker runs only while there is writing: a thread with its own V8 isolate is ~18 MiB
// resident, most of an idle daemon's memory beyond Node's own. The daemon's thread looks at the
// WAL (a stat every 100 ms) while no worker runs and starts one when it changed; the worker ends
// itself after a quiet second (longer when it keeps being restarted), and the memory it leaves in
// V8's page pool and malloc's heap is handed back by the next heap trim (util/heap-trim.ts).
// A small WAL (a pull's records, a container's start) is checkpointed on the daemon's thread
// instead, once the writes have paused (`here`): no isolate for it (its start and its ~13 MiB,
// part of the peak of every pull), for a stall of a few milliseconds while the daemon is quiet
// (measured: 1–15 ms for up to 500 KiB of WAL, its two fsyncs; up to ~90 ms on a loaded disk).
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { requestHeapTrim } from '../util/heap-trim.ts';

/** How often the WAL's size is looked at (by the worker, or by the daemon's thread while none runs). */
const PERIOD_MS = 100;
/** A worker ends after this long without a change to the WAL… */
const IDLE_MS = 1000;
/** …or up to this long when it was restarted soon after ending (a steady trickle of writes). */
const MAX_IDLE_MS = 60_000;
/** A WAL up to this size is checkpointed on the daemon's thread (`here`), beyond it on a worker. */
const HERE_MAX_BYTES = Number(process.env.ENGINE_CHECKPOINT_HERE_KB ?? 512) * 1024;
/** …once it has not changed for this long (the writes paused). */
const HERE_QUIET_MS = 300;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const { DatabaseSync } = require('node:sqlite');
const { path, period, idle, flag } = workerData;
const state = new Int32Array(flag);
const db = new DatabaseSync(path, { timeout: 5000 });
let seen = '';
let quietSince = Date.now();
const end = (why) => {
  clearInterval(timer);
  try { db.close(); } catch { /* the worker ends either way: the daemon holds its own connection */ }
  // The heap's free pages released now: a torn-down isolate's pooled pages stay 8 s in V8's shared pool.
  try {
    require('node:v8').setFlagsFromString('--expose-gc');
    require('node:vm').runInNewContext('gc')({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch { /* no gc in this V8: the pages wait for V8's own release */ }
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
  parentPort.postMessage({ ended: why, seen });
  parentPort.close();
};
const timer = setInterval(() => {
  let now;
  try {
    const st = statSync(path + '-wal');
    now = st.size ? st.size + ':' + st.mtimeMs : 'none';
  } catch {
    now = 'none'; // no WAL (yet): nothing to copy
  }
  if (now === seen || now === 'none') {
    if (Date.now() - quietSince >= idle) end('idle');
    return;
  }
  quietSince = Date.now();
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    seen = now;
  } catch (err) {
    parentPort.postMessage(String(err && err.message));
  }
}, period);
parentPort.on('message', (m) => {
  if (m === 'close') end('closed');
});
`;

export interface Checkpointer {
  /** Stops the worker after its current checkpoint and closes its connection (waits up to 2 s). */
  close(): void;
}

/** The WAL's size and modification time as the worker compares them ('none': no WAL, or empty). */
function walState(path: string): string {
  try {
    const st = statSync(`${path}-wal`);
    return st.size ? `${st.size}:${st.mtimeMs}` : 'none';
  } catch {
    // ENOENT: no WAL file
    return 'none';
  }
}

/**
 * Checkpoints the database at path on a worker started whenever its WAL changes; `warn` gets the
 * worker's failures, and `stopped` runs if a worker fails (the writer must then checkpoint again
 * itself). `opts` are for tests.
 */
export function startCheckpointer(
  path: string,
  warn: (message: string) => void,
  stopped: () => void,
  opts: {
    idleMs?: number;
    onWorker?: (running: boolean) => void;
    /** A PASSIVE checkpoint on the caller's connection, for a small WAL; false when it cannot now (a transaction is open). */
    here?: () => boolean;
    /** Told how long each checkpoint on the caller's thread took. */
    onHere?: (ms: number, walBytes: number) => void;
  } = {},
): Checkpointer {
  const flag = new SharedArrayBuffer(4);
  const state = new Int32Array(flag);
  const baseIdle = opts.idleMs ?? IDLE_MS;
  let idle = baseIdle;
  let worker: Worker | null = null;
  let endedAt = 0;
  let closed = false;
  let seen = ''; // a WAL left from before is checkpointed at once

  const spawn = () => {
    // Restarted within its idle time of ending: writes come in a steady trickle, so keep the next
    // one longer; after a long rest, back to the base.
    const since = Date.now() - endedAt;
    idle = since < idle ? Math.min(idle * 2, MAX_IDLE_MS) : since > MAX_IDLE_MS ? baseIdle : idle;
    Atomics.store(state, 0, 0);
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, period: PERIOD_MS, idle, flag } });
    worker = w;
    let ended = false;
    w.on('message', (m: string | { ended: string; seen: string }) => {
      if (typeof m === 'string') return warn(`WAL checkpoint: ${m}`);
      ended = true;
      seen = m.seen || seen;
    });
    w.on('error', (err) => warn(`WAL checkpoint worker: ${err.message}`));
    w.on('exit', () => {
      worker = null;
      endedAt = Date.now();
      opts.onWorker?.(false);
      if (closed) return;
      if (!ended) {
        closed = true;
        clearInterval(poll);
        stopped();
        return;
      }
      requestHeapTrim({ isolateEnded: true }); // its isolate's pages and its thread's malloc memory
    });
    w.unref();
    opts.onWorker?.(true);
  };

  let last = ''; // the WAL at the previous look, and since when it is so
  let lastSince = 0;
  const poll = setInterval(() => {
    if (worker || closed) return;
    const now = walState(path);
    if (now === seen || now === 'none') return;
    const bytes = Number(now.slice(0, now.indexOf(':')));
    if (!opts.here || bytes > HERE_MAX_BYTES) {
      seen = now;
      spawn();
      return;
    }
    if (now !== last) {
      last = now;
      lastSince = performance.now();
      return;
    }
    if (performance.now() - lastSince < HERE_QUIET_MS) return;
    const t0 = performance.now();
    try {
      if (!opts.here()) return;
    } catch (err) {
      warn(`WAL checkpoint: ${(err as Error).message}`);
    }
    seen = now;
    opts.onHere?.(performance.now() - t0, bytes);
  }, PERIOD_MS);
  poll.unref();

  return {
    close() {
      if (closed) return;
      closed = true;
      clearInterval(poll);
      if (!worker || Atomics.load(state, 0) === 1) return;
      worker.postMessage('close');
      // Synchronous, as the database's close is: the last connection to close checkpoints and
      // removes the WAL, so the worker's must be closed first.
      Atomics.wait(state, 0, 0, 2000);
    },
  };
}
