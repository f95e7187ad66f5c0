// Starting a task's container on the local engine: dockerd's image pull before it (skipped for an
// image ID or a digest held here), the container made from the task (body, secret and config files
// mounted, networks) and run, and the node ports a task with host-mode ports got.
import type { Logger } from '../../util/log.ts';
import { taskPullAuth } from '../manager/pull-options.ts';
import type { TaskPayloads } from '../manager/secrets-api.ts';
import { containerName, type TaskRecord, type TaskStatus } from '../manager/tasks.ts';
import { nodeFacts } from '../node/node-helpers.ts';
import { containerBody, taskNetworks } from './container-body.ts';
import { fileMounts, taskFiles } from './task-files.ts';
import type { TaskRuntime } from './task-runtime.ts';

/**
 * dockerd's pull before a task's container (executor's pullImage): skipped for an image ID or a
 * digest reference the engine holds, otherwise always tried (a tag may have moved), with the
 * credentials the task carries. A failed pull is only logged: the create then says "No such
 * image" (the task is rejected) unless an older copy is here, which runs, as with dockerd.
 */
export async function pullTaskImage(rt: TaskRuntime, t: TaskRecord, image: string, stopped: () => boolean, log: Logger): Promise<void> {
  if (/^(sha256:)?[a-f0-9]{64}$/.test(image)) return;
  if (image.includes('@') && (await rt.hasImage(image))) return;
  const abort = new AbortController();
  const stop = setInterval(() => stopped() && abort.abort(new Error('the agent stopped')), 500);
  try {
    await rt.pull(image, taskPullAuth(t.Spec), abort.signal);
  } catch (err) {
    log.warn('pulling the image of a task failed', { task: t.ID, image, error: (err as Error).message });
  } finally {
    clearInterval(stop);
  }
}

/**
 * Makes and runs the task's container; returns its ID. `withFiles` is called before its secret and
 * config files are written (they are then on this node until the container ends).
 */
export async function runTaskContainer(
  rt: TaskRuntime,
  t: TaskRecord,
  payloads: TaskPayloads | undefined,
  withFiles: () => void,
): Promise<string> {
  const node = nodeFacts();
  const body = containerBody(t, node);
  const files = taskFiles(t, payloads, node);
  if (files.length) {
    withFiles();
    const dir = await rt.writeFiles(t.ID, files);
    const host = body.HostConfig as Record<string, unknown>;
    host.Mounts = [...((host.Mounts as unknown[]) ?? []), ...fileMounts(dir, files)];
  }
  return rt.run(
    containerName(t),
    body,
    taskNetworks(t).map((n) => n.target),
  );
}

/** Status.PortStatus of a task with ports of mode host: the node ports its container got. */
export async function hostPortStatus(rt: TaskRuntime, t: TaskRecord, cid: string): Promise<Partial<TaskStatus>> {
  const host = (t.Ports ?? []).filter((p) => (p as { PublishMode?: string }).PublishMode === 'host') as Array<{
    Protocol?: string;
    TargetPort: number;
  }>;
  if (!host.length || !rt.hostPorts) return {};
  const bound = await rt.hostPorts(cid).catch(() => []); // the container is gone already: no ports to report
  const Ports = host.flatMap((p) => {
    const proto = p.Protocol || 'tcp';
    return bound
      .filter((b) => b.target === `${p.TargetPort}/${proto}`)
      .slice(0, 1)
      .map((b) => ({ Protocol: proto, TargetPort: p.TargetPort, PublishedPort: b.published, PublishMode: 'host' }));
  });
  return Ports.length ? { PortStatus: { Ports } } : {};
}
