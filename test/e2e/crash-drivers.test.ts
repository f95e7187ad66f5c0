// Issue 26 with issue 12's SIGKILL harness: a few rounds of the mixed workload killed -9 at random
// moments (fixed seed) on each storage driver besides overlay2 (crash-short.test.ts) — btrfs on a
// loop filesystem made at the data root, fuse-overlayfs with the daemon serving the snapshotter
// (a kill -9 takes the snapshotter down with the daemon; containerd reaches the new one), with
// commits and removals of committed images in the workload (layers made and removed in the
// driver's snapshotter when the kill comes); a committed image must still run after it. Nothing
// acknowledged may be lost or corrupt, every start must succeed, no shim may outlive its container.
// The long run: `npm run crash -- --storage-driver <driver> --rounds 200 --seed <n>`.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { findOnPath } from '../../src/supervisor/containerd-process.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { loopFsUnavailable } from '../helpers/loop-fs.ts';
import { CrashWorkload, crashRound, startOnDriver } from '../robustness/crash-harness.ts';
import { Rng } from '../robustness/hostile-gen.ts';

const ROUNDS = 3;
const MAX_ROUNDS = 6;
const SEED = 26;

const DRIVERS: Array<{ driver: string; unavailable: () => Promise<string | undefined> }> = [
  { driver: 'btrfs', unavailable: () => loopFsUnavailable('btrfs') },
  {
    driver: 'fuse-overlayfs',
    unavailable: async () =>
      !findOnPath('fuse-overlayfs', `${process.env.PATH}:/usr/bin`) || !findOnPath('mount.fuse3', `${process.env.PATH}:/usr/sbin:/sbin`)
        ? 'fuse-overlayfs or mount.fuse3 is not installed (Debian packages fuse-overlayfs, fuse3)'
        : existsSync('/dev/fuse')
          ? undefined
          : 'no /dev/fuse',
  },
];

for (const c of DRIVERS) {
  describe(`SIGKILL during a mixed workload on ${c.driver} (short run)`, async () => {
    const skip = await c.unavailable();
    let d: TestDaemon;
    let release: (() => Promise<void>) | undefined;
    before(async () => {
      if (skip) return;
      ({ daemon: d, release } = await startOnDriver(c.driver));
      await loadBusybox(d);
    });
    after(async () => {
      await d?.cleanup();
      await release?.();
    });

    test(`${ROUNDS} rounds, seed ${SEED}: 0 lost, 0 corrupt, 0 failed starts, 0 orphan shims`, { skip, timeout: 180_000 }, async () => {
      assert.equal((await d.request('GET', '/info')).json().Driver, c.driver);
      const rng = new Rng(SEED);
      const w = new CrashWorkload(d, rng, 'd', { commits: true });
      let acknowledged = 0;
      // At least ROUNDS rounds, more (up to MAX_ROUNDS) until a commit was acknowledged before a kill.
      for (let round = 1; round <= ROUNDS || (w.committed === 0 && round <= MAX_ROUNDS); round++) {
        const r = await crashRound(d, w, rng, round, { workers: 4, maxRunMs: 1500, minAcks: 1 });
        assert.equal(r.failedStart, undefined, `round ${round}: the daemon did not start again`);
        assert.deepEqual(r.lost, [], `round ${round}: acknowledged objects lost`);
        assert.deepEqual(r.corrupt, [], `round ${round}: objects that do not read back`);
        assert.equal(r.orphanShims, 0, `round ${round}: shims of containers the daemon does not know`);
        acknowledged = r.acknowledged;
      }
      assert.ok(acknowledged >= ROUNDS, `only ${acknowledged} acknowledged operations`);
      assert.ok(w.committed > 0, 'no commit was acknowledged');
      // And the driver still serves a new container after the kills.
      const fresh = await d.docker(['run', '--rm', 'busybox', 'sh', '-c', 'echo ok > /f && cat /f']);
      assert.equal(fresh.stdout, 'ok\n', fresh.stderr);
    });
  });
}
