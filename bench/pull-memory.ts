// A pull's memory (issue 25), variant against variant and against dockerd: each round starts every
// daemon fresh (the order rotates), reads its idle RSS, pulls the bench image (bench/scenarios/pull.ts,
// default 4 × 50 MiB random layers, ~210 MB) `--pulls` times in a row, the image removed between
// pulls, sampling the daemon's and its containerd's RSS every 20 ms, then reads both again at
// fixed delays after the last pull ends (bench/lib/burst.ts). With --busy N, N CPU burners spin
// during the pulls. Per daemon: idle RSS before, peak RSS during the pulls, RSS right after and at
// each delay (daemon alone and + containerd), threads, wall time per pull; medians over the rounds.
// --smaps prints engined's mappings by kind (lib/proc.ts smapsGroups) right after and at the last
// delay; --debug runs engined with --debug and prints its heap-trim and pull-timeline lines.
//   bin/node dist/bench/pull-memory.js [--rounds 2] [--pulls 3] [--after 0,1,5,15,60] [--busy N]
//     [--layers 4 --layer-mib 50] [--smaps] [--debug] [--dockerd] label=root[:K=V,K=V] …

import { measureBurst, parseBurstArgs, printTable, rounds } from './lib/burst.ts';
import { pullOnce, startPullRegistry } from './scenarios/pull.ts';

const {
  rounds: nRounds,
  after,
  busy,
  smaps,
  debug,
  variants,
  own,
} = parseBurstArgs(process.argv.slice(2), { rounds: 2, after: [0, 1, 5, 15, 60] }, ['--pulls', '--layers', '--layer-mib']);
const pulls = Number(own.get('--pulls') ?? 3);
const layers = Number(own.get('--layers') ?? 4);
const layerMiB = Number(own.get('--layer-mib') ?? 50);

const img = await startPullRegistry({ layers, layerBytes: layerMiB << 20 });
try {
  const results = await rounds(variants, nRounds, (v) =>
    measureBurst(
      v,
      { after, busy, smaps, debug, grep: process.env.PM_LOG_GREP ?? 'heap trimmed|pull timeline' },
      async () => undefined,
      async (d) => {
        const ms: number[] = [];
        for (let i = 0; i < pulls; i++) ms.push((await pullOnce(d as never, img)).ms);
        return ms;
      },
    ),
  );
  printTable(
    `${pulls} pulls of ${img.mb.toFixed(0)} MB (${layers} layers)${busy ? `, ${busy} burners` : ''}, medians of ${nRounds} rounds (RSS MiB; burst ms: one pull)`,
    results,
  );
} finally {
  await img.registry.cleanup();
}
