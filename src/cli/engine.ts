// The entry of the `engine` executable: runs main() on the process's arguments and exits with its
// status. Both builds start here: the Node bundle (dist/bundle/engine.cjs, for development) and the
// compiled executable (dist/bin/engine, `bun build --compile`, scripts/build-cli.mjs). main.ts
// itself only exports, so tests import it without running anything.
import { main } from './main.ts';
import { ENGINE_VERSION } from '../version.ts';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // `engine --version` alone prints through console.log: under Bun, process.stdout is a stream
  // built on first use (~3 ms of CPU and 1.5 MiB here), for one line.
  console.log(`Engine version ${ENGINE_VERSION}`);
  process.exit(0);
}
main(argv).then(
  (code) => {
    process.exitCode = code;
    // Flush stdout before leaving: a pipe may still hold output.
    if (process.stdout.writableLength === 0) process.exit(code);
    else process.stdout.once('drain', () => process.exit(code));
  },
  (e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
