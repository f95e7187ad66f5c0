// Waiting for a service to converge after create/update/scale/rollback, as the docker CLI does
// unless --detach: progress lines ("overall progress: 1 out of 2 tasks", "verify: Service …
// converged"; only the changes, as on a pipe), the update's pause turned into an error, and the
// monitor period waited out before a converged service is reported.
import type { Cli } from '../../cli.ts';

// The API's open records (cluster objects, disk usage), read field by field.
type Obj = Record<string, any>;

const TERMINAL = new Set(['complete', 'shutdown', 'failed', 'rejected', 'remove', 'orphaned']);

export async function waitOnService(cli: Cli, serviceId: string, opts: { quiet?: boolean; rollback?: boolean } = {}): Promise<void> {
  const say = (s: string) => {
    if (!opts.quiet) cli.out(`${s}\n`);
  };
  let last = '';
  let convergedAt = 0;
  let sawRollbackMessage = false;
  const seenErrors = new Set<string>();
  for (;;) {
    const svc = (await cli.api.cluster.get('services', serviceId)) as Obj;
    const us = svc.UpdateStatus as Obj | undefined;
    if (us?.State === 'paused') throw new Error(`service update paused: ${us.Message}`);
    if (us?.State === 'rollback_paused') throw new Error(`service rollback paused: ${us.Message}`);
    if (us?.Message && (opts.rollback || String(us.State).startsWith('rollback')) && !sawRollbackMessage) {
      say(`rollback: ${us.Message}`);
      sawRollbackMessage = true;
    }
    const mode = svc.Spec?.Mode ?? {};
    const tasks = (await cli.api.cluster.list('tasks', {
      filters: { service: [String(svc.ID)], '_up-to-date': ['true'] },
    })) as Obj[];
    const live = tasks.filter((t) => t.DesiredState === 'running' || t.DesiredState === 'complete');
    let done: number;
    let want: number;
    if (mode.Replicated) {
      want = Number(mode.Replicated.Replicas ?? 0);
      done = live.filter((t) => t.Status?.State === 'running').length;
    } else if (mode.ReplicatedJob || mode.GlobalJob) {
      // Jobs: done when every task of this version has finished.
      want = mode.ReplicatedJob ? Number(mode.ReplicatedJob.TotalCompletions ?? 0) : live.length;
      done = tasks.filter((t) => t.Status?.State === 'complete').length;
    } else {
      const nodes = (await cli.api.cluster.list('nodes')) as Obj[];
      want = nodes.filter((n) => n.Status?.State !== 'down' && n.Spec?.Availability === 'active').length;
      done = live.filter((t) => t.Status?.State === 'running').length;
    }
    // A task's error on its own line, as the docker CLI's progress shows it under its slot.
    for (const t of tasks)
      if (t.Status?.Err && !seenErrors.has(String(t.ID))) {
        seenErrors.add(String(t.ID));
        say(`${t.Slot ?? ''}/${want}: ${String(t.Status.Err).replace(/\n/g, ' ')}`);
      }
    const line = `overall progress: ${done} out of ${want} tasks`;
    if (line !== last) say(line);
    last = line;
    const failed = tasks.some((t) => t.DesiredState === 'running' && TERMINAL.has(String(t.Status?.State)));
    if (done >= want && !failed) {
      if (mode.ReplicatedJob || mode.GlobalJob) {
        say('job complete');
        return;
      }
      const monitorNs = Number(svc.Spec?.UpdateConfig?.Monitor ?? 5e9);
      if (!convergedAt) {
        convergedAt = Date.now();
        say(`verify: Waiting ${Math.floor(monitorNs / 1e9) + 1} seconds to verify that tasks are stable...`);
      }
      if (Date.now() - convergedAt >= monitorNs / 1e6) {
        say(`verify: Service ${serviceId} converged`);
        return;
      }
    } else if (convergedAt) {
      convergedAt = 0;
      say('verify: Detected task failure');
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
