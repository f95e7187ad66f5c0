// Child process of src/store/crash.test.ts: runs the crash-model workload against engine.db until killed.
//   crash-writer.js <db> loop     — steps forever, printing "committed <i>" after each commit
//   crash-writer.js <db> hang     — opens a transaction, writes a pair, prints "inside", spins
// stdout to a pipe is synchronous on Linux, so "committed i" is only printed after step i committed
// and before step i+1 starts.

import { ContainerStore } from '../../src/store/containers.ts';
import { FILLER, fillerKey, runStep, pairRecord, type PairRecord, type StepOps } from './crash-model.ts';
import { openDatabase } from '../../src/store/database.ts';
import { EventLog } from '../../src/store/events.ts';
import { RecordTable } from '../../src/store/kv.ts';

const [dbPath, mode] = process.argv.slice(2);
if (!dbPath) throw new Error('usage: crash-writer <db> loop|hang');

const db = openDatabase(dbPath);
// A tiny page cache makes SQLite spill dirty pages of open transactions to disk mid-transaction, so
// a kill finds uncommitted data in the files far more often than with the default 2 MB cache.
db.exec('PRAGMA cache_size = 8');
const containers = new ContainerStore<PairRecord>(db);
const events = new EventLog(db, { maxEvents: 10_000_000 });
const meta = new RecordTable<number>(db, 'meta');
const filler = new RecordTable<string>(db, 'filler');

if (mode === 'hang') {
  db.transaction(() => {
    containers.put(pairRecord('hang-a', 'hang-a', 0));
    containers.put(pairRecord('hang-b', 'hang-b', 0));
    process.stdout.write('inside\n');
    for (;;);
  });
}

const ops: StepOps = {
  put: (rec) => containers.put(rec),
  rename: (id, name) => void containers.rename(id, name),
  delete: (id) => void containers.delete(id),
  exists: (id) => containers.get(id) !== undefined,
  failingNested: (fn) => {
    try {
      db.transaction(fn);
    } catch (err) {
      if ((err as { code?: string }).code !== 'CONFLICT') throw err;
    }
  },
};

let step = meta.get('progress') ?? 0;
process.stdout.write(`ready ${step}\n`);
for (;;) {
  step++;
  db.transaction(() => {
    runStep(step, ops);
    // Bulk that makes the transaction outgrow the page cache (see FILLER in crash-model.ts).
    for (let k = 0; k < FILLER.rows; k++) filler.put(fillerKey(step, k), FILLER.value(step, k));
    for (let k = 0; k < FILLER.rows; k++) filler.delete(fillerKey(step - FILLER.keepSteps, k));
    events.append({ Type: 'container', Action: 'step', Actor: { ID: `step${step}`, Attributes: { step: String(step) } } });
    meta.put('progress', step);
  });
  process.stdout.write(`committed ${step}\n`);
  // Also get killed in the middle of checkpoints now and then.
  if (step % 25 === 0) db.checkpoint();
}
