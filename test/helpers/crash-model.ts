// The workload of the store's crash test (src/store/crash.test.ts, crash-writer.ts): step i is a
// fixed mix of puts, renames, deletes and a failing nested savepoint, so the test can recompute
// exactly what the database must hold after any number of committed steps.

export interface PairRecord {
  Id: string;
  Name: string;
  Created: string;
  Step: number;
  Blob: string;
}

/** The operations a step performs; implemented by the real stores and by an in-memory model. */
export interface StepOps {
  put(rec: PairRecord): void;
  rename(id: string, newName: string): void;
  delete(id: string): void;
  exists(id: string): boolean;
  /** Runs fn as a nested transaction whose failure is expected and swallowed. */
  failingNested(fn: () => void): void;
}

export const idA = (i: number) => `a${i.toString(16).padStart(8, '0')}`;
export const idB = (i: number) => `b${i.toString(16).padStart(8, '0')}`;

export function pairRecord(id: string, name: string, step: number): PairRecord {
  // Varying sizes make rows spill to overflow pages and pages split, so more of SQLite is exercised.
  const size = 50 + ((step * 7919) % 6000);
  return { Id: id, Name: `/${name}`, Created: new Date(1_700_000_000_000 + step).toISOString(), Step: step, Blob: 'x'.repeat(size) };
}

/** Step i (1-based). Every step writes a pair of records that must be all-or-nothing. */
export function runStep(i: number, ops: StepOps): void {
  ops.put(pairRecord(idA(i), `pa${i}`, i));
  ops.put(pairRecord(idB(i), `pb${i}`, i));
  if (i % 3 === 0 && i > 5 && ops.exists(idA(i - 5))) {
    ops.rename(idA(i - 5), `ra${i - 5}`);
    ops.rename(idB(i - 5), `rb${i - 5}`);
  }
  if (i % 4 === 0 && i > 8) {
    ops.delete(idA(i - 8));
    ops.delete(idB(i - 8));
  }
  // A nested savepoint that writes and then hits a name conflict: none of it may survive.
  ops.failingNested(() => {
    ops.put(pairRecord(`c${i}`, `pc${i}`, i));
    ops.rename(idA(i), `pb${i}`);
  });
}

/** Expected container id → bare name after steps 1..n. */
export function expectedAfter(n: number): Map<string, string> {
  const names = new Map<string, string>();
  const ops: StepOps = {
    put: (rec) => void names.set(rec.Id, rec.Name.slice(1)),
    rename: (id, newName) => void names.set(id, newName),
    delete: (id) => void names.delete(id),
    exists: (id) => names.has(id),
    failingNested: () => {},
  };
  for (let i = 1; i <= n; i++) runStep(i, ops);
  return names;
}

/**
 * Each step also writes FILLER.rows values of a few KB into kv_filler and deletes those of step
 * i - keepSteps, so a transaction spans many pages and SQLite spends real time writing them.
 */
export const FILLER = {
  rows: 16,
  keepSteps: 3,
  value: (step: number, k: number) => `${step}:${k}:`.padEnd(2000 + ((step * 31 + k * 977) % 3000), '#'),
};
export const fillerKey = (step: number, k: number) => `${String(step).padStart(8, '0')}/${String(k).padStart(2, '0')}`;

/** Expected kv_filler keys after steps 1..n. */
export function expectedFillerKeys(n: number): string[] {
  const keys: string[] = [];
  for (let i = Math.max(1, n - FILLER.keepSteps + 1); i <= n; i++) {
    for (let k = 0; k < FILLER.rows; k++) keys.push(fillerKey(i, k));
  }
  return keys;
}
