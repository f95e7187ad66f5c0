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

import { resolve } from 'node:path';
import { measureBurst, printTable, rounds, variantArg, type Variant } from './lib/burst.ts';
import { pullOnce, startPullRegistry } from './scenarios/pull.ts';

const argv = process.argv.slice(2);
let nRounds = 2;
let pulls = 3;
let busy = 0;
let after = [0, 1, 5, 15, 60];
let layers = 4;
let layerMiB = 50;
let smaps = false;
let debug = false;
const variants: Variant[] = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  if (a === '--rounds') nRounds = Number(argv[++i]);
  else if (a === '--pulls') pulls = Number(argv[++i]);
  else if (a === '--busy') busy = Number(argv[++i]);
  else if (a === '--after') after = argv[++i]!.split(',').map(Number);
  else if (a === '--layers') layers = Number(argv[++i]);
  else if (a === '--layer-mib') layerMiB = Number(argv[++i]);
  else if (a === '--smaps') smaps = true;
  else if (a === '--debug') debug = true;
  else {
    const v = variantArg(a);
    if (!v) throw new Error(`unknown argument ${a}`);
    variants.push(v);
  }
}
if (!variants.some((v) => v.root)) variants.unshift({ label: 'this', root: resolve('.'), env: {} });

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
