// `npm run crash`: the SIGKILL harness by hand. Starts a daemon of this tree on temporary roots,
// runs the mixed workload, kills the daemon with -9 at random moments and starts it again, for
// --rounds rounds; prints lost/corrupt objects, failed starts, restart times and orphan shims.
//   npm run crash -- --rounds 200 --seed 7 [--workers 6] [--max-run-ms 3000] [--log-dir DIR] [--storage-driver D] [--commits]
// --storage-driver (or ENGINE_CRASH_STORAGE_DRIVER): overlay2 (default), btrfs (on a loop filesystem
// made for the run, released at the end: test/helpers/loop-fs.ts) or fuse-overlayfs. --commits adds
// commits of containers and removals of the committed images to the workload (layers made and
// removed in the driver's snapshotter while the daemon may die).
// Ctrl-C stops after the current round and prints the summary so far.
// With --log-dir, each round's daemon output (the start after the kill) goes to DIR/round-N.log.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadBusybox } from '../helpers/images.ts';
import { CrashWorkload, crashRound, shimsOf, startOnDriver, type RoundResult } from './crash-harness.ts';
import { Rng } from './hostile-gen.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    seed: { type: 'string', default: String(Date.now() % 100_000) },
    workers: { type: 'string', default: '6' },
    'max-run-ms': { type: 'string', default: '3000' },
    'log-dir': { type: 'string' },
    commits: { type: 'boolean', default: false },
    'storage-driver': { type: 'string', default: process.env.ENGINE_CRASH_STORAGE_DRIVER ?? 'overlay2' },
  },
});

// Ctrl-C (SIGINT) ends the run after the current round, with the summary of the rounds done.
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  process.stderr.write('stopping after this round (Ctrl-C again to quit at once)\n');
});

const { daemon: d, release } = await startOnDriver(values['storage-driver']!);
const results: RoundResult[] = [];
try {
  process.stderr.write(`storage driver ${(await d.request('GET', '/info')).json<{ Driver: string }>().Driver}\n`);
  await loadBusybox(d);
  const rng = new Rng(Number(values.seed));
  const w = new CrashWorkload(d, rng, 'k', { commits: values.commits });
  for (let round = 1; round <= Number(values.rounds) && !interrupted; round++) {
    const r = await crashRound(d, w, rng, round, { workers: Number(values.workers), maxRunMs: Number(values['max-run-ms']) });
    results.push(r);
    if (values['log-dir']) {
      mkdirSync(values['log-dir'], { recursive: true });
      writeFileSync(join(values['log-dir'], `round-${round}.log`), d.output);
    }
    process.stderr.write(
      `round ${round}: ${r.failedStart ? 'FAILED START' : `restart ${r.restartMs} ms`}, ${r.runningAtKill} running at the kill, lost ${r.lost.length}, corrupt ${r.corrupt.length}, orphan shims ${r.orphanShims}\n`,
    );
    for (const x of [...r.lost, ...r.corrupt]) process.stderr.write(`  ${x}\n`);
    if (r.failedStart) {
      process.stderr.write(`${r.failedStart}\n`);
      break;
    }
  }
  await d.stop();
  const leftAfterStop = (await shimsOf(d.execRoot)).length;
  const ms = results
    .filter((r) => !r.failedStart)
    .map((r) => r.restartMs)
    .sort((a, b) => a - b);
  const summary = {
    seed: Number(values.seed),
    rounds: results.length,
    interrupted,
    acknowledged: results.at(-1)?.acknowledged ?? 0,
    committed: w.committed,
    lost: results.reduce((n, r) => n + r.lost.length, 0),
    corrupt: results.reduce((n, r) => n + r.corrupt.length, 0),
    failedStarts: results.filter((r) => r.failedStart).length,
    restartMs: { median: ms[Math.floor(ms.length / 2)] ?? null, max: ms.at(-1) ?? null },
    maxRunningAtKill: Math.max(0, ...results.map((r) => r.runningAtKill)),
    orphanShimsAfterRestarts: results.reduce((n, r) => n + r.orphanShims, 0),
    shimsLeftAfterGracefulStop: leftAfterStop,
  };
  console.log(JSON.stringify(summary, null, 2));
  process.exitCode = summary.lost + summary.corrupt + summary.failedStarts + summary.orphanShimsAfterRestarts + leftAfterStop > 0 ? 1 : 0;
} finally {
  await d.cleanup();
  await release();
}
