// Compiles the `engine` CLI into one native executable, dist/bin/engine, with Bun's compiler
// (`bun build --compile`; Bun comes from npm, pinned in the lockfile like Node): a CLI is started
// for every command, and the executable starts in about a third of Node's time with half its
// memory. Its input is the CommonJS bundle scripts/bundle.mjs makes (dist/bundle/engine.cjs), so
// both runtimes run the same code; bin/engine runs the executable when it is at least as new as
// the bundle, else the bundle on Node. --bytecode stores JavaScriptCore's bytecode beside the
// source: nothing is parsed at start-up (measured: 2 MiB less peak RSS). --compile-jit-policy=100
// raises the JIT's tier-up thresholds a hundredfold: a command runs for milliseconds, where the
// interpreter is as fast and compiling touches the JIT's code and memory (4 MiB of peak RSS).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dropFromPageCache } from './page-cache.mjs';

const BUN = 'node_modules/bun/bin/bun.exe';
const OUT = 'dist/bin/engine';

if (!existsSync(BUN)) {
  // The rest of the build stands: bin/engine runs the Node bundle.
  console.error(`build-cli: ${BUN} is missing (npm ci installs it): no dist/bin/engine; bin/engine runs dist/bundle/engine.cjs on Node`);
} else compile();

function compile() {
  mkdirSync('dist/bin', { recursive: true });
  // Written beside and renamed: a running `engine` keeps its old file, a failed build leaves none half-written.
  const tmp = `${OUT}.tmp-${process.pid}`;
  const r = spawnSync(
    BUN,
    ['build', '--compile', '--minify', '--bytecode', '--compile-jit-policy=100', 'dist/bundle/engine.cjs', '--outfile', tmp],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  if (r.status !== 0) {
    rmSync(tmp, { force: true });
    console.error(`build-cli: bun build --compile failed (${r.error?.message ?? `status ${r.status}`})`);
    process.exit(1);
  }
  renameSync(tmp, OUT);
  // The tests and the benchmark then run it as it runs after an install or a reboot (page-cache.mjs).
  dropFromPageCache(OUT);
}
