// Throughput check for the file drivers: pushes N MiB of short lines through a driver from an
// in-memory stream (the way a container floods stdout), then reads everything back.
//   bin/node dist/bench/log-throughput.js [json-file|local] [MiB] [line-bytes] [log-opt=value …]

import { mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { execFileSync } from 'node:child_process';
import { createLogDriver } from '../src/logging/index.ts';

async function main(): Promise<void> {
  const [kind = 'json-file', mibText = '256', lineText = '100', ...optArgs] = process.argv.slice(2);
  const total = Number(mibText) * 1024 * 1024;
  const lineLen = Number(lineText);
  const options = Object.fromEntries(optArgs.map((a) => a.split('=', 2) as [string, string]));

  // 1 MiB of printable lines plus one spare line, sliced into 64 KiB reads at drifting offsets.
  const pattern = Buffer.alloc(1024 * 1024 + lineLen);
  for (let i = 0; i < pattern.length; i++) pattern[i] = i % lineLen === lineLen - 1 ? 10 : 0x21 + ((i * 7) % 90);
  for (let i = 0; i < pattern.length; i++)
    if (pattern[i] === 0x22 || pattern[i] === 0x5c || pattern[i] === 0x3c || pattern[i] === 0x3e || pattern[i] === 0x26) pattern[i] = 0x61;
  const CHUNK = 64 * 1024;
  function* chunks(): Generator<Buffer> {
    let sent = 0;
    let off = 0;
    while (sent < total) {
      const n = Math.min(CHUNK, total - sent);
      yield pattern.subarray(off, off + n);
      sent += n;
      off = (off + n) % (1024 * 1024);
    }
  }

  const dir = await mkdtemp(join(tmpdir(), 'logbench-'));
  try {
    const driver = createLogDriver(kind, { containerId: 'bench', dir, options, attrs: {} });
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    await driver.attach({ stdout: Readable.from(chunks(), { objectMode: false, highWaterMark: CHUNK }) });
    const writeSec = (performance.now() - t0) / 1000;
    const peakWrite = process.resourceUsage().maxRSS * 1024;

    const files = await readdir(driver.logPath.slice(0, driver.logPath.lastIndexOf('/')));
    let onDisk = 0;
    for (const f of files) onDisk += (await stat(join(driver.logPath, '..', f))).size;

    // What the disk alone needs for the same bytes: plain 1 MiB writes of the same total size,
    // after our dirty pages have been flushed so that both start from an idle disk.
    execFileSync('sync');
    const block = Buffer.alloc(1024 * 1024, 0x61);
    const raw = await open(join(dir, 'raw-write-baseline'), 'w');
    const tr = performance.now();
    for (let done = 0; done < onDisk; done += block.length) await raw.write(block, 0, Math.min(block.length, onDisk - done));
    await raw.close();
    const rawSec = (performance.now() - tr) / 1000;
    await rm(join(dir, 'raw-write-baseline'));

    const t1 = performance.now();
    let lines = 0;
    let bytes = 0;
    for await (const m of driver.read({ follow: false, stdout: true, stderr: true })) {
      lines++;
      bytes += m.line.length;
    }
    const readSec = (performance.now() - t1) / 1000;
    await driver.close();
    const mb = total / 1e6;
    console.log(`${kind} ${Object.keys(options).length ? JSON.stringify(options) : ''}`);
    console.log(
      `  write: ${mb.toFixed(0)} MB of ${lineLen}-byte lines in ${writeSec.toFixed(2)} s = ${(mb / writeSec).toFixed(0)} MB/s; ${(onDisk / 1e6).toFixed(0)} MB on disk in ${files.length} file(s)`,
    );
    console.log(`  disk alone: the same ${(onDisk / 1e6).toFixed(0)} MB as plain 1 MiB writes take ${rawSec.toFixed(2)} s`);
    console.log(
      `  read:  ${lines} entries, ${(bytes / 1e6).toFixed(0)} MB in ${readSec.toFixed(2)} s = ${(bytes / 1e6 / readSec).toFixed(0)} MB/s`,
    );
    console.log(
      `  rss: ${(rss0 / 2 ** 20).toFixed(0)} MiB before, peak ${(peakWrite / 2 ** 20).toFixed(0)} MiB while writing, peak ${((process.resourceUsage().maxRSS * 1024) / 2 ** 20).toFixed(0)} MiB overall`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
