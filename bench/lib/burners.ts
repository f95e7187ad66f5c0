// A reproducible busy machine (bench --busy N): N child processes spinning on the CPU, started
// before a group and stopped after it, so "busy" figures compare across runs whatever else runs.
// Each burner also ends itself once its parent is gone (a bench killed by SIGKILL leaves none).

import { spawn, type ChildProcess } from 'node:child_process';

const SPIN = `const p = process.ppid; for (;;) { for (let i = 0; i < 5e7; i++); if (process.ppid !== p) process.exit(0); }`;

export interface Burners {
  count: number;
  stop(): Promise<void>;
}

export function startBurners(n: number): Burners {
  const kids: ChildProcess[] = [];
  for (let i = 0; i < n; i++) kids.push(spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' }));
  return {
    count: n,
    async stop() {
      await Promise.all(
        kids.map(
          (k) =>
            new Promise<void>((resolve) => {
              if (k.exitCode !== null || k.signalCode !== null) return resolve();
              k.once('exit', () => resolve());
              k.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}
