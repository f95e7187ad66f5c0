import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundHeapGrowth, collectingEvery, onHeapTrim, releaseCaches, requestHeapTrim, startHeapTrimmer } from './heap-trim.ts';
import { Logger } from './log.ts';

/** Event loop utilisation the test scripts: each check() sees the next interval's active ms. */
function scripted(intervals: Array<{ active: number; utilization: number }>) {
  let i = -1;
  return (since?: unknown) => {
    if (!since) return { idle: 0, active: 0, utilization: 0 }; // a cumulative reading
    i += 1;
    const x = intervals[i] ?? { active: 0, utilization: 0 };
    return { idle: 5000 - x.active, ...x };
  };
}

describe('heap trimmer', () => {
  const log = new Logger({ level: 'error', format: 'text', raw: false });

  it('collects once after busy intervals are followed by a quiet one, then waits for more work', () => {
    const calls: unknown[] = [];
    const t = startHeapTrimmer({
      log,
      intervalMs: 60_000,
      startBusy: false,
      gc: (o) => calls.push(o),
      utilization: scripted([
        { active: 2000, utilization: 0.4 }, // busy: no collection while working
        { active: 1000, utilization: 0.2 },
        { active: 10, utilization: 0.002 }, // quiet after 3 s of work: collect
        { active: 5, utilization: 0.001 }, // quiet, but nothing done since: no second collection
        { active: 20, utilization: 0.004 },
      ]),
    });
    try {
      assert.deepEqual([t.check(), t.check(), t.check(), t.check(), t.check()], [false, false, true, false, false]);
      assert.deepEqual(calls, [{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    } finally {
      t.stop();
    }
  });

  it('small amounts of work add up until they are worth a collection', () => {
    let collected = 0;
    const t = startHeapTrimmer({
      log,
      intervalMs: 60_000,
      minBusyMs: 300,
      startBusy: false,
      gc: () => collected++,
      utilization: scripted(Array.from({ length: 10 }, () => ({ active: 40, utilization: 0.008 }))),
    });
    try {
      const results = Array.from({ length: 10 }, () => t.check());
      assert.deepEqual(
        results.map((r, i) => (r ? i : -1)).filter((i) => i >= 0),
        [7],
        'the eighth 40 ms interval reaches 300 ms',
      );
      assert.equal(collected, 1);
    } finally {
      t.stop();
    }
  });

  it('runs the registered releasers before each collection, and no longer one unregistered', () => {
    const order: string[] = [];
    const t = startHeapTrimmer({
      log,
      intervalMs: 60_000,
      startBusy: false,
      gc: () => order.push('gc'),
      utilization: scripted([
        { active: 1000, utilization: 0.2 },
        { active: 0, utilization: 0 }, // quiet after work: trim
        { active: 1000, utilization: 0.2 },
        { active: 0, utilization: 0 }, // and again, the releaser gone
      ]),
    });
    const off = onHeapTrim(() => order.push('release'));
    try {
      assert.deepEqual([t.check(), t.check()], [false, true]);
      off();
      assert.deepEqual([t.check(), t.check()], [false, true]);
      assert.deepEqual(order, ['release', 'gc', 'gc']);
    } finally {
      off();
      t.stop();
    }
  });

  it('a releaser that throws is reported, and the others still run', () => {
    const ran: string[] = [];
    const offA = onHeapTrim(() => {
      throw new Error('SQLITE_BUSY');
    });
    const offB = onHeapTrim(() => ran.push('b'));
    try {
      const failures: string[] = [];
      releaseCaches((err) => failures.push((err as Error).message));
      assert.deepEqual(ran, ['b']);
      assert.deepEqual(failures, ['SQLITE_BUSY']);
      assert.doesNotThrow(() => releaseCaches());
    } finally {
      offA();
      offB();
    }
  });

  it('a requested trim needs no work of its own, only a quiet interval, and comes at most every 10 s', () => {
    let collected = 0;
    let trimmed = 0;
    const t = startHeapTrimmer({
      log,
      intervalMs: 60_000,
      startBusy: false,
      gc: () => collected++,
      trim: () => Boolean(trimmed++),
      utilization: scripted([
        { active: 0, utilization: 0 }, // quiet, nothing asked: no collection
        { active: 100, utilization: 0.5 }, // asked during a busy interval: waits for a quiet one
        { active: 0, utilization: 0 },
        { active: 0, utilization: 0 }, // asked again at once: too soon after the last
      ]),
    });
    try {
      assert.equal(t.check(), false);
      requestHeapTrim();
      assert.equal(t.check(), false);
      assert.equal(t.check(), true);
      requestHeapTrim();
      assert.equal(t.check(), false);
      assert.equal(collected, 1);
    } finally {
      t.stop();
    }
  });

  it('the real collector is reachable without --expose-gc and gives memory back', () => {
    const t = startHeapTrimmer({ log, intervalMs: 60_000, minBusyMs: 0, quietBelow: 1.01 });
    try {
      let junk: object[] | null = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `x${i}` }));
      assert.ok(junk.length > 0);
      junk = null;
      const before = process.memoryUsage().heapUsed;
      assert.equal(t.check(), true);
      assert.ok(process.memoryUsage().heapUsed < before, 'the garbage was collected');
    } finally {
      t.stop();
    }
  });
});

describe('heap trimmer at start-up', () => {
  it('counts the work before it started, so the first quiet interval collects', () => {
    let collected = 0;
    const log = new Logger({ level: 'error', format: 'text', raw: false });
    const t = startHeapTrimmer({
      log,
      intervalMs: 60_000,
      gc: () => collected++,
      utilization: scripted([
        { active: 500, utilization: 0.25 },
        { active: 1, utilization: 0.0005 },
      ]),
    });
    try {
      assert.deepEqual([t.check(), t.check()], [false, true]);
      assert.equal(collected, 1);
    } finally {
      t.stop();
    }
  });
});

describe('collectingEvery', () => {
  it('passes every chunk on, in order, collecting on the way', async () => {
    async function* source() {
      for (let i = 0; i < 50; i++) yield Buffer.alloc(1000, i);
    }
    const got: number[] = [];
    for await (const c of collectingEvery(source(), 4096)) got.push(c[0]!, c.length);
    assert.deepEqual(got, Array.from({ length: 50 }, (_, i) => [i, 1000]).flat());
  });
});

describe('boundHeapGrowth', () => {
  it('asks for a collection each time the heap grows a step past its lowest reading', () => {
    let used = 100;
    let gcs = 0;
    const b = boundHeapGrowth({ stepBytes: 10, everyMs: 60_000, used: () => used, gc: () => gcs++ });
    try {
      used = 105;
      assert.equal(b.check(), false);
      used = 111; // 11 past 100
      assert.equal(b.check(), true);
      used = 118; // 7 past the reading that asked
      assert.equal(b.check(), false);
      used = 90; // the collection ran: the base drops with it
      assert.equal(b.check(), false);
      used = 99;
      assert.equal(b.check(), false);
      used = 101; // 11 past 90
      assert.equal(b.check(), true);
      assert.equal(gcs, 2);
    } finally {
      b.stop();
    }
  });
});
