// `npm run bench`: engined against Debian's dockerd 20.10 and the containerd / runc floors, in one
// run, printed side by side (medians, p90, ratios) and written to bench/results/latest.md.
//
//   bin/node dist/bench/run.js [--quick] [--only startup,memory,lifecycle,parallel,list,remove,logs,exec,cp,commit,pull,ping,network,client,storage,logdrivers,soak] [--no-dockerd] [--soak-count N] [--busy N]
//
// `soak` (10 000 sequential lifecycles by default) runs only when named in --only. Each group's
// code is in groups/, the report's in report/. Every daemon runs on its own temp dir with its own
// containerd; all are stopped, their leftovers killed and unmounted, and the dirs removed at the
// end, also after a failure or Ctrl-C (lib/tracked.ts).

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { loadAverage, rssMiB } from './lib/proc.ts';
import { api } from './lib/http.ts';
import { iterations, parseOptions, progress, type Scenario } from './lib/options.ts';
import { onSignalsTearDown, startTracked, teardownAll } from './lib/tracked.ts';
import { emptyResults, type MemoryReading } from './results.ts';
import { cpGroup, execGroup, listGroup, removeGroup, soakGroup } from './groups/containers.ts';
import type { GroupContext } from './groups/context.ts';
import { clientGroup, commitGroup, logsGroup, pingGroup, pullGroup } from './groups/io.ts';
import { lifecycleGroup, parallelGroup } from './groups/lifecycle.ts';
import { networkGroup, startupGroup } from './groups/own-daemons.ts';
import { logDriversGroup } from './groups/log-drivers.ts';
import { storageGroup } from './groups/storage.ts';
import { render } from './report/render.ts';
import type { DaemonUnderTest } from './targets/daemon.ts';
import { Dockerd, dockerdVersion, ensureDockerd } from './targets/dockerd.ts';
import { Engined } from './targets/engined.ts';

/** The groups on the two shared daemons, in the order they run (memory is read between them). */
const SHARED_GROUPS: [Scenario, (c: GroupContext) => Promise<void>][] = [
  ['lifecycle', lifecycleGroup],
  ['parallel', parallelGroup],
  ['list', listGroup],
  ['remove', removeGroup],
  ['logs', logsGroup],
  ['soak', soakGroup],
  ['exec', execGroup],
  ['cp', cpGroup],
  ['ping', pingGroup],
  ['commit', commitGroup],
  ['client', clientGroup],
  ['pull', pullGroup],
];

async function settleAndRead(when: string, daemons: DaemonUnderTest[]): Promise<MemoryReading> {
  await new Promise((r) => setTimeout(r, 3000)); // idle: let timers and GC settle
  const r: MemoryReading = { when };
  for (const d of daemons) r[d.kind] = { daemon: rssMiB(d.pid), containerd: rssMiB(d.containerdPid()) };
  return r;
}

async function componentVersion(d: DaemonUnderTest, name: string): Promise<string> {
  const v = (await api(d.socket, 'GET', '/version')).json();
  const containerd = v.Components?.find((c: { Name: string }) => c.Name === 'containerd')?.Version ?? '?';
  return `${name} (API ${v.ApiVersion}), containerd ${containerd}`;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const want = (s: Scenario) => opts.only.has(s);
  const it = iterations(opts.quick);
  const res = emptyResults();
  const started = new Date();
  const loadBefore = loadAverage();
  const versions: string[] = [];

  let useDockerd = opts.dockerd;
  if (useDockerd) {
    const why = await ensureDockerd(progress);
    if (why) {
      res.notes.push(`dockerd skipped: ${why}`);
      useDockerd = false;
    }
  } else res.notes.push('dockerd skipped (--no-dockerd)');

  try {
    if (want('startup')) await startupGroup(res, it, useDockerd);

    if (SHARED_GROUPS.some(([s]) => want(s)) || want('memory')) {
      progress('starting the daemons under test');
      const engined = (await startTracked(() => Engined.start())).daemon;
      const dockerd = useDockerd ? (await startTracked(() => Dockerd.start())).daemon : null;
      const daemons: DaemonUnderTest[] = dockerd ? [engined, dockerd] : [engined];
      versions.push(await componentVersion(engined, `engined ${(await api(engined.socket, 'GET', '/version')).json().Version}`));
      if (dockerd) versions.push(await componentVersion(dockerd, await dockerdVersion()));
      if (want('memory')) res.memory.push(await settleAndRead('after start-up', daemons));
      await engined.loadBusybox();
      if (dockerd) await dockerd.loadBusybox();

      const ctx: GroupContext = { opts, it, res, engined, dockerd };
      for (const [name, group] of SHARED_GROUPS) {
        if (want(name)) await group(ctx);
        if (want('memory') && name === 'parallel' && (want('lifecycle') || want('parallel')))
          res.memory.push(await settleAndRead('after the lifecycle runs', daemons));
        if (want('memory') && name === 'soak' && (want('list') || want('logs')))
          res.memory.push(await settleAndRead('at the end (after list and logs)', daemons));
      }
      // Issue 25's goal is read here: idle after every group, the pulls (which run last) included.
      if (want('memory') && want('pull')) res.memory.push(await settleAndRead('after every group (pulls included)', daemons));
    }

    // Daemons of their own: each with a bridge (the ones above may have none), stopped afterwards.
    if (want('network')) await networkGroup(res, it, useDockerd);
    if (want('storage')) await storageGroup(res, it, useDockerd);
    if (want('logdrivers')) await logDriversGroup(res, it, useDockerd);
  } finally {
    progress('stopping daemons, cleaning up');
    await teardownAll();
  }

  const report = render(res, { opts, it, started, loadBefore, loadAfter: loadAverage(), versions });
  process.stdout.write(report + '\n');
  await mkdir(dirname(opts.out), { recursive: true });
  await writeFile(opts.out, report + '\n');
  progress(`written to ${opts.out}`);
}

onSignalsTearDown();
main().catch(async (err) => {
  progress(`FAILED: ${(err as Error).stack ?? err}`);
  await teardownAll();
  process.exit(1);
});
