// GET /services/{id}/logs and /tasks/{id}/logs: the logs of the tasks, wherever they run — read
// from the local engine for this node's tasks and asked of each other node that runs some
// (log-forward.ts) — merged as they come, framed as the container logs endpoint frames them, each
// line prefixed (with `details`) by the swarm context the docker CLI parses:
// com.docker.swarm.node.id=…,com.docker.swarm.service.id=…,com.docker.swarm.task.id=….
import { invalidParameter } from '../../errors.ts';
import type { ClusterLogOptions } from '../../types/cluster.ts';
import type { LogsRequest } from '../../types/logs.ts';
import { parseTimeValue, rfc3339NanoFixed } from '../../util/time.ts';
import { encodeFrame } from '../../wire/stream-frame.ts';
import { merge, type TaskLogLine } from './log-forward.ts';
import type { TaskRecord } from '../manager/tasks.ts';

/** Where the lines come from: this node's containers, and each other node by its ID. */
export interface TaskLogSources {
  localNode: string;
  local(taskIds: string[], req: LogsRequest, signal: AbortSignal): Promise<AsyncIterable<TaskLogLine>>;
  /** Rejects when the node cannot be asked (the stream then goes on without it; the reason is logged). */
  remote(nodeId: string, taskIds: string[], req: LogsRequest, signal: AbortSignal): Promise<AsyncIterable<TaskLogLine>>;
  warn(message: string, fields: Record<string, unknown>): void;
}

export function logsRequest(opts: ClusterLogOptions): LogsRequest {
  if (!opts.stdout && !opts.stderr) throw invalidParameter('Bad parameters: you must choose at least one stream');
  const tailRaw = opts.tail ?? 'all';
  const tail = tailRaw === 'all' || tailRaw === '' ? -1 : Number(tailRaw);
  if (!Number.isInteger(tail)) throw invalidParameter(`invalid value for tail: ${JSON.stringify(tailRaw)}`);
  let since: bigint | undefined;
  if (opts.since !== undefined && opts.since !== '' && opts.since !== '0') {
    since = parseTimeValue(opts.since);
    if (since === undefined) throw invalidParameter(`invalid value for since: ${JSON.stringify(opts.since)}`);
  }
  return {
    follow: opts.follow,
    stdout: opts.stdout,
    stderr: opts.stderr,
    timestamps: opts.timestamps,
    tail: tail < 0 ? -1 : tail,
    ...(since !== undefined ? { since } : {}),
  };
}

export async function serviceLogs(tasks: TaskRecord[], sources: TaskLogSources, opts: ClusterLogOptions): Promise<AsyncIterable<Buffer>> {
  const req = logsRequest(opts);
  const signal = opts.signal ?? new AbortController().signal;
  const byNode = new Map<string, string[]>();
  for (const t of tasks) if (t.NodeID) byNode.set(t.NodeID, [...(byNode.get(t.NodeID) ?? []), t.ID]);
  const byId = new Map(tasks.map((t) => [t.ID, t]));
  const unavailable: string[] = [];
  const streams = await Promise.all(
    [...byNode].map(([node, ids]) =>
      (node === sources.localNode ? sources.local(ids, req, signal) : sources.remote(node, ids, req, signal)).catch((err: Error) => {
        sources.warn('cannot read the logs of tasks on a node', { node, error: err.message });
        unavailable.push(node);
        return (async function* (): AsyncIterable<TaskLogLine> {})();
      }),
    ),
  );
  const tty = tasks.some((t) => (t.Spec.ContainerSpec as { TTY?: boolean } | undefined)?.TTY === true);
  return (async function* () {
    for await (const { chunk, taskId, tty } of merge(streams)) {
      const t = byId.get(taskId);
      if (!t) continue;
      const parts: Buffer[] = [];
      if (opts.timestamps) parts.push(Buffer.from(rfc3339NanoFixed(chunk.timeNano) + ' '));
      if (opts.details)
        parts.push(
          Buffer.from(
            `com.docker.swarm.node.id=${t.NodeID ?? ''},com.docker.swarm.service.id=${t.ServiceID},com.docker.swarm.task.id=${t.ID} `,
          ),
        );
      parts.push(chunk.line);
      const payload = Buffer.concat(parts);
      yield tty ? payload : encodeFrame(chunk.stream, payload);
      if (signal.aborted) return;
    }
    // As dockerd (swarmkit's log broker, written on the system-error stream the CLI reports).
    if (unavailable.length) {
      const text = `Error grabbing logs: warning: incomplete log stream. some logs could not be retrieved for the following reasons: ${unavailable.map((n) => `node ${n} is not available`).join(', ')}\n`;
      yield tty ? Buffer.from(text) : encodeFrame('systemerr', Buffer.from(text));
    }
  })();
}
