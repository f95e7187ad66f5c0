// The agent's view of the local engine (cluster/task-runtime.ts) over the containers service: task
// containers are ordinary containers, created, started, stopped and removed as the API would.
import type { OverlayHost } from '../network/overlay/contract.ts';
import type { TaskRuntime } from '../cluster/task-runtime.ts';
import type { ContainerService } from '../daemon/containers/service.ts';
import type { ContainerRunEvents } from '../daemon/containers/run-events.ts';
import type { ContainerCreateBody } from '../types/container-api.ts';
import { API_VERSION } from '../util/api-version.ts';

export function clusterRuntime(
  containers: ContainerService,
  runs: ContainerRunEvents,
  overlay: () => OverlayHost | undefined,
): TaskRuntime {
  return {
    async run(name, body, networks = []) {
      const { Id } = await containers.create(body as unknown as ContainerCreateBody, name, API_VERSION);
      try {
        for (const n of networks) overlay()?.attachTask(n, Id);
        await containers.start(Id);
      } catch (err) {
        // The container stays, as a task container dockerd could not start; its state says why.
        (err as Error & { containerId?: string }).containerId = Id;
        throw err;
      }
      return Id;
    },
    state(id) {
      let rec;
      try {
        rec = containers.find(id);
      } catch {
        return null;
      }
      const s = rec.State;
      return { running: s.Running, exited: s.Status === 'exited' || s.Status === 'dead', pid: s.Pid, exitCode: s.ExitCode, error: s.Error };
    },
    async stop(id, timeoutSeconds) {
      await containers.stop(id, { timeout: timeoutSeconds });
    },
    async remove(id) {
      await containers.remove(id, { force: true, volumes: false, link: false }).catch((err: Error) => {
        if (!/No such container/i.test(err.message)) throw err;
      });
    },
    async list() {
      const all = (await containers.list({
        all: true,
        size: false,
        filters: new Map([['label', ['com.docker.swarm.task.id']]]),
      })) as Array<{
        Id: string;
        Labels?: Record<string, string>;
      }>;
      return all.map((c) => ({ id: c.Id, taskId: c.Labels?.['com.docker.swarm.task.id'] ?? '' })).filter((c) => c.taskId);
    },
    logs: (id, req, signal) => containers.logs(id, req, signal),
    onExit: (fn) =>
      runs.subscribe((rec, change) => {
        if (change === 'stopped') fn(rec.Id);
      }),
  };
}
