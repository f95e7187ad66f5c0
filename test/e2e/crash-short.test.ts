// Issue 12: the SIGKILL harness, short and bounded, in the normal test command. A mixed workload
// runs against the daemon, which is killed -9 at random moments (fixed seed) and started again;
// nothing acknowledged may be lost or corrupt, every start must succeed, no shim may outlive its
// container, and after a graceful stop no shim of the daemon's containerd is left.
// The long run is `npm run crash -- --rounds 200 --seed <n>`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { CrashWorkload, crashRound, shimsOf, type RoundResult } from '../robustness/crash-harness.ts';
import { Rng } from '../robustness/hostile-gen.ts';

const ROUNDS = 8;
const SEED = 12;

describe('SIGKILL at random moments during a mixed workload (short run)', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
  });

  test(`${ROUNDS} rounds, seed ${SEED}: 0 lost, 0 corrupt, 0 failed starts, 0 orphan shims`, { timeout: 240_000 }, async () => {
    const rng = new Rng(SEED);
    const w = new CrashWorkload(d, rng, 's');
    const results: RoundResult[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const r = await crashRound(d, w, rng, round, { workers: 4, maxRunMs: 1500, minAcks: 1 });
      results.push(r);
      assert.equal(r.failedStart, undefined, `round ${round}: the daemon did not start again`);
      assert.deepEqual(r.lost, [], `round ${round}: acknowledged objects lost`);
      assert.deepEqual(r.corrupt, [], `round ${round}: objects that do not read back`);
      assert.equal(r.orphanShims, 0, `round ${round}: shims of containers the daemon does not know`);
    }
    // The workload did something worth checking: objects were acknowledged before the kills.
    assert.ok(results.at(-1)!.acknowledged >= ROUNDS, `only ${results.at(-1)!.acknowledged} acknowledged operations`);
    assert.equal(await d.stop(), 0);
    // Shims of tasks stopped at shutdown exit as containerd deletes the tasks: allow them a moment.
    await until(
      'no shim left after the graceful stop',
      async () => ((await shimsOf(d.execRoot)).length === 0 ? true : undefined),
      10_000,
    ).catch(async () => {
      assert.deepEqual(await shimsOf(d.execRoot), [], 'shims left after a graceful stop');
    });
  });
});
