// What one helper process costs a Node daemon here: execFile of /bin/true, start to exit. The unit
// for reading the lifecycle phases (engined runs unshare/ip, mkfifo and umount per container).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export async function spawnTrue(): Promise<number> {
  const t0 = performance.now();
  await execFileP('true');
  return performance.now() - t0;
}
