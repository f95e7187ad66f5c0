// The benchmark's command line: which scenario groups run, how many iterations each, where the
// report goes. `soak` runs only when named in --only.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SCENARIOS = [
  'startup',
  'memory',
  'lifecycle',
  'parallel',
  'list',
  'remove',
  'logs',
  'exec',
  'cp',
  'commit',
  'pull',
  'ping',
  'network',
  'client',
  'storage',
  'logdrivers',
  'soak',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface Options {
  quick: boolean;
  only: Set<Scenario>;
  dockerd: boolean;
  out: string;
  soakCount: number;
  /** `--busy N`: N CPU burners spin during the pull group (lib/burners.ts); 0: none. */
  busy: number;
}

/** Iterations per group: `--quick` keeps the whole run to a couple of minutes. */
export function iterations(quick: boolean) {
  return quick
    ? {
        startups: 2,
        n: 5,
        warmups: 1,
        parallelRuns: 1,
        listContainers: 500,
        listScaleTo: 0,
        listN: 5,
        listWarmups: 1,
        logsRuns: 1,
        execN: 20,
        execWarmups: 3,
        cpRuns: 2,
        commitN: 5,
        commitWarmups: 1,
        pullN: 3,
        pullWarmups: 1,
        netN: 5,
        netWarmups: 1,
        clientN: 5,
        clientWarmups: 1,
        logDriverRuns: 1,
        logDriverMiB: 32,
      }
    : {
        startups: 5,
        n: 20,
        warmups: 3,
        parallelRuns: 3,
        listContainers: 500,
        listScaleTo: 2000,
        listN: 20,
        listWarmups: 3,
        logsRuns: 2,
        execN: 20,
        execWarmups: 3,
        cpRuns: 5,
        commitN: 10,
        commitWarmups: 2,
        pullN: 7,
        pullWarmups: 1,
        netN: 20,
        netWarmups: 3,
        clientN: 20,
        clientWarmups: 3,
        logDriverRuns: 2,
        logDriverMiB: 64,
      };
}
export type Iterations = ReturnType<typeof iterations>;

const BENCH_DIR = dirname(fileURLToPath(import.meta.url)).replace(/\/(dist\/)?bench\/lib$/, '/bench');

export function parseOptions(argv: string[]): Options {
  const o: Options = {
    quick: false,
    only: new Set(SCENARIOS.filter((s) => s !== 'soak')),
    dockerd: true,
    out: join(BENCH_DIR, 'results', 'latest.md'),
    soakCount: 10_000,
    busy: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') o.quick = true;
    else if (a === '--no-dockerd') o.dockerd = false;
    else if (a === '--only' || a.startsWith('--only=')) {
      const list = a.includes('=') ? a.slice(a.indexOf('=') + 1) : (argv[++i] ?? '');
      const names = list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const n of names)
        if (!SCENARIOS.includes(n as Scenario)) throw new Error(`unknown scenario ${n} (have: ${SCENARIOS.join(', ')})`);
      o.only = new Set(names as Scenario[]);
    } else if (a === '--out') o.out = argv[++i] ?? o.out;
    else if (a === '--soak-count') {
      o.soakCount = Number(argv[++i]);
      if (!Number.isInteger(o.soakCount) || o.soakCount < 10) throw new Error('--soak-count needs a whole number ≥ 10');
    } else if (a === '--busy' || a.startsWith('--busy=')) {
      o.busy = Number(a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(o.busy) || o.busy < 0) throw new Error('--busy needs a whole number of CPU burners');
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(
        `usage: npm run bench -- [--quick] [--only ${SCENARIOS.join(',')}] [--no-dockerd] [--out file.md] [--soak-count N] [--busy N]\n`,
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

export const progress = (s: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
