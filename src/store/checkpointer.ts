// WAL checkpoints on a thread of their own. A checkpoint copies the WAL's pages into engine.db and
// fsyncs both files: SQLite runs one inside the COMMIT that takes the WAL past 1 000 pages, so a
// 4 MiB record's write held the event loop for the copy and the fsyncs too (25–80 ms on a busy
// disk). Here the writing connection never checkpoints (wal_autocheckpoint = 0); a worker with a
// connection of its own runs PASSIVE checkpoints whenever the WAL changed. A passive checkpoint
// takes no lock a writer or reader waits for, and a kill -9 in the middle of one loses nothing
// (it is SQLite's own recovery that makes the WAL and engine.db whole again at the next open).
import { Worker } from 'node:worker_threads';

/** How often the worker looks at the WAL's size. */
const PERIOD_MS = 100;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const { DatabaseSync } = require('node:sqlite');
const { path, period, flag } = workerData;
const state = new Int32Array(flag);
const db = new DatabaseSync(path, { timeout: 5000 });
let seen = '';
const timer = setInterval(() => {
  let now;
  try {
    const st = statSync(path + '-wal');
    now = st.size + ':' + st.mtimeMs;
  } catch {
    return; // no WAL (yet): nothing to copy
  }
  if (now === seen) return;
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    seen = now;
  } catch (err) {
    parentPort.postMessage(String(err && err.message));
  }
}, period);
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  try { db.close(); } catch {}
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the worker after its current checkpoint and closes its connection (waits up to 2 s). */
  close(): void;
}

/**
 * Starts the checkpoint worker for the database at path; `warn` gets its failures, and `stopped`
 * runs if the worker ends before close() (the writer must then checkpoint again itself).
 */
export function startCheckpointer(path: string, warn: (message: string) => void, stopped: () => void): Checkpointer {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, period: PERIOD_MS, flag } });
  let closed = false;
  worker.on('message', (m) => warn(`WAL checkpoint: ${String(m)}`));
  worker.on('error', (err) => warn(`WAL checkpoint worker: ${err.message}`));
  worker.on('exit', () => {
    if (!closed) stopped();
  });
  worker.unref();
  return {
    close() {
      if (closed) return;
      closed = true;
      worker.postMessage('close');
      // Synchronous, as the database's close is: the last connection to close checkpoints and
      // removes the WAL, so the worker's must be closed first.
      Atomics.wait(new Int32Array(flag), 0, 0, 2000);
    },
  };
}
