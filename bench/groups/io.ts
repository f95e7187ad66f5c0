// Groups that move data or answer small requests: logs, commit, pull, /_ping and the client CLIs.

import { mkdtemp } from 'node:fs/promises';
import { progress } from '../lib/options.ts';
import { startBurners } from '../lib/burners.ts';
import { cpuMeter, loadAverage, meanByThread, threadText } from '../lib/proc.ts';
import { interleave } from '../lib/stats.ts';
import { startTracked, stopTracked, workDirs } from '../lib/tracked.ts';
import { clientCli } from '../scenarios/client-cli.ts';
import { commitOnce } from '../scenarios/commit.ts';
import { logsOnce } from '../scenarios/logs.ts';
import { curlTime, PING_PATHS } from '../scenarios/ping.ts';
import { PULL_LAYERS, pullOnce, startPullRegistry } from '../scenarios/pull.ts';
import { Engined } from '../targets/engined.ts';
import { andDockerd, bothKinds, type GroupContext } from './context.ts';

export async function logsGroup(c: GroupContext): Promise<void> {
  progress(`logs: 256 MiB, ${c.it.logsRuns}× engined${andDockerd(c)}`);
  c.res.logs = await interleave(c.it.logsRuns, 0, bothKinds(c, logsOnce));
}

export async function pingGroup(c: GroupContext): Promise<void> {
  const { engined, dockerd } = c;
  progress(`/_ping and GET /containers/json (no containers): curl time_total, 10 warm-ups + 100 each, taking turns`);
  for (const [name, path] of Object.entries(PING_PATHS)) {
    const r = await interleave(
      100,
      10,
      bothKinds(c, (d) => curlTime(d, path)),
    );
    for (const [kind, xs] of Object.entries(r)) c.res.ping[`${kind}-${name}`] = xs;
    // Daemon CPU per request (load-independent): 200 sequential requests, one daemon at a time.
    for (const d of dockerd ? [engined, dockerd] : [engined]) {
      const cpu = cpuMeter({ daemon: d.pid, containerd: d.containerdPid() });
      for (let i = 0; i < 200; i++) await curlTime(d, path);
      c.res.ping[`${d.kind}-${name}-cpu`] = [(cpu().daemon / 200) * 1000];
    }
  }
}

export async function commitGroup(c: GroupContext): Promise<void> {
  const { it } = c;
  progress(`commit of a stopped container that wrote 10 MiB: ${it.commitWarmups} warm-ups + ${it.commitN}, engined${andDockerd(c)}`);
  // A second engined kept on containerd's diff service (the path before the overlay fast path)
  // takes turns too: before and after in one run.
  const service = (await startTracked(() => Engined.start({ ...process.env, ENGINE_COMMIT_DIFF: 'service' }))).daemon;
  try {
    await service.loadBusybox();
    c.res.commit = await interleave(it.commitN, it.commitWarmups, {
      ...bothKinds(c, commitOnce),
      service: () => commitOnce(service),
    });
  } finally {
    await stopTracked(service);
  }
}

export async function clientGroup(c: GroupContext): Promise<void> {
  const work = await mkdtemp('/tmp/bench-client-');
  workDirs.add(work);
  progress(`client: engine CLI vs docker CLI at engined, ${c.it.clientWarmups} warm-ups + ${c.it.clientN} rounds, taking turns`);
  c.res.client = await clientCli(c.engined.socket, work, c.it.clientN, c.it.clientWarmups);
}

export async function pullGroup(c: GroupContext): Promise<void> {
  const { it } = c;
  progress(`pull: pushing ${PULL_LAYERS} layers of 50 MiB to a local registry`);
  const img = await startPullRegistry();
  progress(`pull of ${img.mb.toFixed(0)} MB: ${it.pullWarmups} warm-ups + ${it.pullN}, taking turns`);
  // A second engined on containerd's diff service (the unpack before staged-unpack.ts became the
  // default) takes turns too: before and after in one run.
  const service = (await startTracked(() => Engined.start({ ...process.env, ENGINE_PULL_UNPACK: 'service' }))).daemon;
  // --busy N: a reproducibly busy machine (N spinning processes) for the whole group.
  const burners = startBurners(c.opts.busy);
  const loadBefore = loadAverage();
  if (c.opts.busy) progress(`pull: ${c.opts.busy} CPU burners spinning (--busy); load ${loadBefore}`);
  try {
    const r = await interleave(it.pullN, it.pullWarmups, {
      ...bothKinds(c, (d) => pullOnce(d, img)),
      service: () => pullOnce(service, img),
    });
    c.res.pull = { ...r, mb: img.mb };
    c.res.notes.push(
      `pull group: ${c.opts.busy ? `${c.opts.busy} CPU burners (--busy)` : 'no CPU burners'}, load average before ${loadBefore}, after ${loadAverage()}`,
    );
    // Where each daemon's CPU went: a slower pull shows which thread grew.
    const byThread = Object.entries(r).map(([kind, runs]) => `${kind}: ${threadText(meanByThread(runs.map((x) => x.threads)), 10)}`);
    c.res.notes.push(`pull, the daemon's CPU per pull by thread (mean ms): ${byThread.join('; ')}`);
  } finally {
    await burners.stop();
    await stopTracked(service);
    await img.registry.cleanup().catch((e) => progress(`stopping the registry: ${(e as Error).message}`));
  }
}
