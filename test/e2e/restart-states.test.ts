// Issue 23 §5: after a restart, every container's state is true at once. The daemon is killed -9
// while containers start and exit (half of them long-running, half exiting by themselves with a
// code of their own), started again, and every container inspected from the first /_ping on: each
// answer must be the host's truth (test/helpers/restart-fleet.ts: running ones running with their
// live pid, the others without any process, short ones started in the round exited with their own
// code) and all of them must come within a bound from /_ping (generous for a loaded 2-core machine;
// the measured figures are ~0.2–0.6 s for 200 containers, see bench/restart-reconcile.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { createFleet, inspectAll, restartToPing, startAndKill, wrongStates, type FleetMember } from '../helpers/restart-fleet.ts';

const CONTAINERS = 60;
const BOUND_MS = 5000;

for (const liveRestore of [true, false]) {
  describe(`kill -9 while containers start and exit, ${liveRestore ? 'with' : 'without'} live-restore`, () => {
    let d: TestDaemon;
    let fleet: FleetMember[];
    before(async () => {
      d = await startDaemon({ config: { 'live-restore': liveRestore } });
      await loadBusybox(d);
      // Without live-restore the long ones are stopped at the start-up: 5 s of stop timeout keep
      // them running (true to the host) while they are inspected.
      fleet = await createFleet(d, CONTAINERS, { stopTimeoutS: liveRestore ? 1 : 5 });
    });
    after(async () => d?.cleanup());

    for (const round of [1, 2]) {
      test(`round ${round}: every state is true within ${BOUND_MS / 1000} s of the first /_ping`, async () => {
        const roundStart = new Date().toISOString();
        // Killed once a sixth of the fleet's starts have been answered: more are in flight, and
        // short ones started earlier are exiting.
        const { started } = await startAndKill(d, fleet, { starts: Math.ceil(CONTAINERS / 6) });
        assert.ok(started > 0, 'some containers were started before the kill');
        // The short ones (up to 0.9 s) end while the daemon is down: their exits are the restart's.
        await new Promise((r) => setTimeout(r, 1500));
        const { pingAt } = await restartToPing(d);
        const wrong: string[] = [];
        const states = await inspectAll(d, fleet, wrong);
        const ms = performance.now() - pingAt;
        wrong.push(...(await wrongStates(fleet, states, roundStart)));
        const running = states.filter((s) => s.Running).length;
        console.log(
          `round ${round}: ${started} started before the kill, ${running} running after; all states in ${Math.round(ms)} ms from /_ping`,
        );
        assert.deepEqual(wrong, [], 'every answer is the host truth');
        assert.ok(running > 0, 'some containers were running at the restart');
        assert.ok(ms < BOUND_MS, `every container's state took ${Math.round(ms)} ms from /_ping`);
        if (!liveRestore) {
          // The stop at start-up goes on after the answers: then nothing runs.
          const list = await d.request('GET', '/containers/json', { timeoutMs: 60_000 });
          assert.equal(list.status, 200);
          for (const m of fleet.filter((_m, i) => states[i]!.Running)) {
            const w = await d.request('POST', `/containers/${m.id}/wait`, { timeoutMs: 60_000 });
            assert.equal(w.status, 200, w.text());
            assert.equal(w.json<{ StatusCode: number }>().StatusCode, 137, 'sleep ignores SIGTERM: killed after its stop timeout');
          }
        }
      });
    }
  });
}
