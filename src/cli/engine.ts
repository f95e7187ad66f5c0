// The entry of the `engine` executable: runs main() on the process's arguments and exits with its
// status. Both builds start here: the Node bundle (dist/bundle/engine.cjs, for development) and the
// compiled executable (dist/bin/engine, `bun build --compile`, scripts/build-cli.mjs). dispatch.ts
// itself only exports, so tests import it without running anything. dispatch.ts (and through it
// the command's own file, command-index.ts) is imported on use: `engine --version` evaluates none
// of it (in the compiled CLI, 31 → 26 MiB of peak RSS; a compiled "hello world" peaks at 25).
import { ENGINE_VERSION } from '../version.ts';
import { flushOutput } from './out.ts';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // `engine --version` alone prints through console.log: under Bun, process.stdout is a stream
  // built on first use (~3 ms of CPU and 1.5 MiB here), for one line.
  console.log(`Engine version ${ENGINE_VERSION}`);
  process.exit(0);
}
import('./dispatch.ts')
  .then(({ main }) => main(argv))
  .then(
    (code) => {
      process.exitCode = code;
      // The process ends by itself once its output is written: under Bun a pipe read slowly still holds
      // output after writableLength reads 0 (and write callbacks have run), and process.exit would drop
      // it (measured: 200 kB of 1 MB reached a reader that paused 1.5 s). A handle left open by
      // mistake must not hang the command: 3 s after the output sinks are flushed (out.ts), the
      // exit is forced.
      void flushOutput().then(() => setTimeout(() => process.exit(code), 3000).unref());
    },
    (e) => {
      process.stderr.write(`${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
