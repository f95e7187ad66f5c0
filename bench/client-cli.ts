// The `engine` CLI vs the docker CLI 28 on one engined, alone (the same measurement as
// `npm run bench -- --only client`, see scenarios/client-cli.ts). Not part of the test suite;
// nothing asserts. After a build:
//
//   bin/node dist/bench/client-cli.js [rounds=20] [warm-ups=3]
import { mkdtemp, rm } from 'node:fs/promises';
import { clientCli, clientSection } from './scenarios/client-cli.ts';
import { Engined } from './targets/engined.ts';

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20);
  const warmups = Number(process.argv[3] ?? 3);
  const scratch = await mkdtemp('/tmp/bench-client-');
  const { daemon } = await Engined.start();
  try {
    await daemon.loadBusybox();
    process.stderr.write(`client-cli: ${warmups} warm-ups + ${n} rounds, taking turns\n`);
    const r = await clientCli(daemon.socket, scratch, n, warmups);
    const out = [`# engine CLI vs docker CLI, same engined (${new Date().toISOString()})`, '', clientSection(r, n, warmups)].join('\n');
    process.stdout.write(`${out}\n`);
  } finally {
    await daemon.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
