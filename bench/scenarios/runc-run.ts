// The lowest floor: `runc run` of `true` on a bundle with the same busybox rootfs, spawned from Node
// (foreground: runc creates, starts, waits and deletes), its own state root under the bench dir.

import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../../test/helpers/daemon.ts';
import { buildBusyboxLayer } from '../../test/fixtures/busybox-image.ts';
import { floorSpec } from './floor-spec.ts';

export class RuncRun {
  private seq = 0;
  private constructor(
    private readonly bundle: string,
    private readonly root: string,
  ) {}

  static async prepare(workDir: string): Promise<RuncRun> {
    const bundle = join(workDir, 'bundle');
    const rootfs = join(bundle, 'rootfs');
    await mkdir(rootfs, { recursive: true });
    const { tar } = await buildBusyboxLayer();
    const r = await run('tar', ['-x', '-C', rootfs, '-f', '-'], { input: tar });
    if (r.code !== 0) throw new Error(`extracting busybox: ${r.stderr}`);
    await writeFile(join(bundle, 'config.json'), JSON.stringify(floorSpec('bench-runc', ['true'], '/bench-runc/run')));
    return new RuncRun(bundle, join(workDir, 'runc-root'));
  }

  once(): Promise<number> {
    const id = `runc-${process.pid}-${this.seq++}`;
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      const child = spawn('runc', ['--root', this.root, 'run', '--bundle', this.bundle, id], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('close', (code) => {
        const ms = performance.now() - t0;
        if (code !== 0) reject(new Error(`runc run exited ${code}: ${err}`));
        else resolve(ms);
      });
    });
  }
}
