// GET /services/{id}/logs and /tasks/{id}/logs: the logs of the tasks whose containers run on the
// node that answers, framed as the container logs endpoint frames them, each line prefixed (with
// `details`) by the swarm context the docker CLI parses: com.docker.swarm.node.id=…,
// com.docker.swarm.service.id=…,com.docker.swarm.task.id=…. Tasks on other nodes are not read
// (forwarding logs between nodes is not built): a request that names only such tasks gets a 501
// saying so, and a service with tasks here and elsewhere shows only the ones here.
import { invalidParameter, notImplemented } from '../errors.ts';
import type { ClusterLogOptions } from '../types/cluster.ts';
import type { LogChunk, LogsRequest } from '../types/logs.ts';
import type { TaskRuntime } from './task-runtime.ts';
import type { TaskRecord } from './tasks.ts';

function frame(stream: 'stdout' | 'stderr', payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h[0] = stream === 'stdout' ? 1 : 2;
  h.writeUInt32BE(payload.length, 4);
  return Buffer.concat([h, payload]);
}

function rfc3339Nano(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, `.${frac}Z`);
}

/** Runs several iterators at once, yielding whatever comes first (follow on many tasks). */
async function* merge<T>(sources: AsyncIterable<T>[]): AsyncIterable<T> {
  const its = sources.map((s) => s[Symbol.asyncIterator]());
  const next = new Map<number, Promise<{ i: number; r: IteratorResult<T> }>>();
  its.forEach((it, i) =>
    next.set(
      i,
      it.next().then((r) => ({ i, r })),
    ),
  );
  while (next.size) {
    const { i, r } = await Promise.race(next.values());
    if (r.done) next.delete(i);
    else {
      next.set(
        i,
        its[i]!.next().then((x) => ({ i, r: x })),
      );
      yield r.value;
    }
  }
}

export async function serviceLogs(
  tasks: TaskRecord[],
  containerOf: ((t: TaskRecord) => string | undefined) & { isLocal: (t: TaskRecord) => boolean },
  rt: TaskRuntime,
  opts: ClusterLogOptions,
): Promise<AsyncIterable<Buffer>> {
  if (!opts.stdout && !opts.stderr) throw invalidParameter('Bad parameters: you must choose at least one stream');
  const tailRaw = opts.tail ?? 'all';
  const tail = tailRaw === 'all' || tailRaw === '' ? -1 : Number(tailRaw);
  if (!Number.isInteger(tail)) throw invalidParameter(`invalid value for tail: ${JSON.stringify(tailRaw)}`);
  const local = tasks.flatMap((t) => {
    const cid = containerOf(t);
    return cid ? [{ t, cid }] : [];
  });
  if (!local.length && tasks.some((t) => t.NodeID && !containerOf.isLocal(t)))
    throw notImplemented(
      "the logs of tasks on other nodes are not built yet in this engine's cluster mode: ask a manager that runs the tasks, or read the container logs on their node",
    );
  const req: LogsRequest = {
    follow: opts.follow,
    stdout: opts.stdout,
    stderr: opts.stderr,
    timestamps: opts.timestamps,
    tail: tail < 0 ? -1 : tail,
  };
  const signal = opts.signal ?? new AbortController().signal;
  const streams: AsyncIterable<{ chunk: LogChunk; t: TaskRecord; tty: boolean }>[] = [];
  for (const { t, cid } of local) {
    try {
      const { tty, lines } = await rt.logs(cid, req, signal);
      streams.push(
        (async function* () {
          for await (const chunk of lines) yield { chunk, t, tty };
        })(),
      );
    } catch {
      // The container went meanwhile (its task was replaced): nothing to show for it.
    }
  }
  return (async function* () {
    for await (const { chunk, t, tty } of merge(streams)) {
      const parts: Buffer[] = [];
      if (opts.timestamps) parts.push(Buffer.from(rfc3339Nano(chunk.timeNano) + ' '));
      if (opts.details)
        parts.push(
          Buffer.from(
            `com.docker.swarm.node.id=${t.NodeID ?? ''},com.docker.swarm.service.id=${t.ServiceID},com.docker.swarm.task.id=${t.ID} `,
          ),
        );
      parts.push(chunk.line);
      const payload = Buffer.concat(parts);
      yield tty ? payload : frame(chunk.stream, payload);
      if (signal.aborted) return;
    }
  })();
}
