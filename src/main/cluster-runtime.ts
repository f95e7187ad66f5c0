// The agent's view of the local engine (cluster/task-runtime.ts) over the containers service: task
// containers are ordinary containers, created, started, stopped and removed as the API would. A
// task's secret and config files live in a tmpfs of its own under <exec-root>/cluster/tasks/<id>
// (never on disk), mode 0700, unmounted when the task's container ends or goes.
import type { OverlayHost } from '../network/overlay/contract.ts';
import type { TaskRuntime } from '../cluster/agent/task-runtime.ts';
import type { ContainerService } from '../daemon/containers/service.ts';
import type { ContainerRunEvents } from '../daemon/containers/run-events.ts';
import type { ContainerCreateBody } from '../types/container-api.ts';
import type { DistributionService } from '../images/distribution/service.ts';
import type { ImageStore } from '../images/image-store.ts';
import { decodeAuthHeaderLenient } from '../images/distribution/auth-config.ts';
import { chmod, chown, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMounted } from '../supervisor/mounts.ts';
import { API_VERSION } from '../util/api-version.ts';
import { runCommand } from '../util/helper-shell.ts';

/** Room for the files of one task (secrets < 500 KiB, configs < 1000 KiB each). */
const TMPFS_SIZE = 64 * 1024 * 1024;

export function clusterRuntime(
  containers: ContainerService,
  runs: ContainerRunEvents,
  execRoot: string,
  overlay: () => OverlayHost | undefined,
  images: { store: ImageStore; distribution: DistributionService },
): TaskRuntime {
  const dirOf = (taskId: string) => join(execRoot, 'cluster', 'tasks', taskId.replace(/[^a-zA-Z0-9]/g, ''));
  return {
    async writeFiles(taskId, files) {
      const dir = dirOf(taskId);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      if (!isMounted(dir))
        await runCommand('mount', ['-t', 'tmpfs', '-o', `mode=0700,nosuid,nodev,noexec,size=${TMPFS_SIZE}`, 'tmpfs', dir]);
      for (const f of files) {
        const path = join(dir, f.file);
        await writeFile(path, f.data, { mode: 0o600 });
        await chown(path, f.uid, f.gid);
        await chmod(path, f.mode);
      }
      return dir;
    },
    async removeFiles(taskId) {
      const dir = dirOf(taskId);
      if (isMounted(dir)) await runCommand('umount', ['-l', dir]).catch(() => undefined); // A failed unmount shows in the rm below (a busy mount point cannot be removed).
      await rm(dir, { recursive: true, force: true });
    },
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
    async hostPorts(id) {
      const view = await containers.inspect(id, false, API_VERSION);
      const out: Array<{ target: string; published: number }> = [];
      for (const [target, binds] of Object.entries(view.NetworkSettings?.Ports ?? {}))
        for (const b of binds ?? []) if (b.HostPort && !b.HostIp?.includes(':')) out.push({ target, published: Number(b.HostPort) });
      return out;
    },
    state(id) {
      let rec;
      try {
        rec = containers.find(id);
      } catch {
        // the container is gone: no state
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
      const all = await containers.list({
        all: true,
        size: false,
        objects: true, // the fields are read here, not sent
        filters: new Map([['label', ['com.docker.swarm.task.id']]]),
      });
      return all.map((c) => ({ id: c.Id ?? '', taskId: c.Labels?.['com.docker.swarm.task.id'] ?? '' })).filter((c) => c.taskId);
    },
    async hasImage(image) {
      return images.store.resolve(image).then(
        () => true,
        () => false,
      );
    },
    async pull(image, registryAuth, signal) {
      // Progress is not shown anywhere (the task's state says `preparing`); the pull event is published.
      await images.distribution.pull({ fromImage: image, auth: decodeAuthHeaderLenient(registryAuth) }, () => undefined, signal);
    },
    async resolveDigest(image, registryAuth) {
      return (await images.distribution.inspect(image, decodeAuthHeaderLenient(registryAuth))).Descriptor.digest;
    },
    logs: (id, req, signal) => containers.logs(id, req, signal),
    onExit: (fn) =>
      runs.subscribe((rec, change) => {
        if (change === 'stopped') fn(rec.Id);
      }),
  };
}
