// Logs of tasks on other nodes: the manager answering GET /services/{id}/logs asks each node that
// runs some of the tasks with `POST /logs` on that node's endpoint (mutual TLS, only a manager's
// certificate is served) and the node streams its containers' log lines back as JSON lines
// ({t: task, tty, s: stream, n: time in ns, l: base64 line}); the manager frames them with the
// timestamps and `details` context as for its own tasks (service-logs.ts). A follow stream lasts
// until the manager drops the request (its client went). Workers serve a small endpoint of their
// own for this (workerEndpoint: only /ca and /logs); managers serve /logs on their manager endpoint.
import { request } from 'node:https';
import { EngineError, invalidParameter, notFound, unauthorized, unavailable } from '../../errors.ts';
import type { LogChunk, LogsRequest } from '../../types/logs.ts';
import type { CertIdentity } from '../ca/ca.ts';
import type { EndpointHandler } from '../node/endpoint.ts';
import type { NodeCerts } from '../node/local-state.ts';
import type { TaskRuntime } from './task-runtime.ts';

/** How long a manager waits for a node to start answering a log request. */
const ANSWER_TIMEOUT_MS = 10_000;

/** One line of a task's log, from wherever the task runs. */
export interface TaskLogLine {
  taskId: string;
  tty: boolean;
  chunk: LogChunk;
}

export interface RemoteLogsRequest {
  tasks: string[];
  follow: boolean;
  stdout: boolean;
  stderr: boolean;
  /** Nanoseconds, as a decimal string. */
  since?: string;
  tail: number;
}

export function toRemote(taskIds: string[], req: LogsRequest): RemoteLogsRequest {
  return {
    tasks: taskIds,
    follow: req.follow,
    stdout: req.stdout,
    stderr: req.stderr,
    ...(req.since !== undefined ? { since: req.since.toString() } : {}),
    tail: req.tail,
  };
}

function fromRemote(body: unknown): { tasks: string[]; req: LogsRequest } {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Partial<RemoteLogsRequest>;
  if (!Array.isArray(b.tasks) || b.tasks.some((t) => typeof t !== 'string')) throw invalidParameter('invalid logs request: tasks');
  if (b.since !== undefined && !/^\d+$/.test(String(b.since))) throw invalidParameter('invalid logs request: since');
  return {
    tasks: b.tasks,
    req: {
      follow: b.follow === true,
      stdout: b.stdout === true,
      stderr: b.stderr === true,
      timestamps: false,
      tail: typeof b.tail === 'number' && Number.isInteger(b.tail) ? b.tail : -1,
      ...(b.since !== undefined ? { since: BigInt(b.since) } : {}),
    },
  };
}

/** Runs several iterators at once, yielding whatever comes first (follow on many tasks). */
export async function* merge<T>(sources: AsyncIterable<T>[]): AsyncIterable<T> {
  const its = sources.map((s) => s[Symbol.asyncIterator]());
  const next = new Map<number, Promise<{ i: number; r: IteratorResult<T> }>>();
  its.forEach((it, i) =>
    next.set(
      i,
      it.next().then((r) => ({ i, r })),
    ),
  );
  try {
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
  } finally {
    for (const i of next.keys()) void its[i]!.return?.().catch(() => undefined); // The reader stopped early (client gone): the sources still open end too.
  }
}

/** The log lines of tasks whose containers run on this node (`containerOf` from the agent). */
export async function localTaskLogs(
  taskIds: string[],
  containerOf: (taskId: string) => string | undefined,
  rt: TaskRuntime,
  req: LogsRequest,
  signal: AbortSignal,
): Promise<AsyncIterable<TaskLogLine>> {
  const streams: AsyncIterable<TaskLogLine>[] = [];
  for (const taskId of taskIds) {
    const cid = containerOf(taskId);
    if (!cid) continue;
    try {
      const { tty, lines } = await rt.logs(cid, req, signal);
      streams.push(
        (async function* () {
          for await (const chunk of lines) yield { taskId, tty, chunk };
        })(),
      );
    } catch {
      // The container went meanwhile (its task was replaced): nothing to show for it.
    }
  }
  return merge(streams);
}

/** The endpoint side (any node): a manager's request for the logs of tasks this node runs. */
export async function serveLogs(
  node: CertIdentity,
  body: unknown,
  signal: AbortSignal,
  local: (taskIds: string[], req: LogsRequest, signal: AbortSignal) => Promise<AsyncIterable<TaskLogLine>>,
): Promise<AsyncIterable<Buffer>> {
  if (node.role !== 'manager') throw unauthorized('only managers read the logs of other nodes');
  const { tasks, req } = fromRemote(body);
  const lines = await local(tasks, req, signal);
  return (async function* () {
    for await (const { taskId, tty, chunk } of lines) {
      yield Buffer.from(
        JSON.stringify({ t: taskId, tty, s: chunk.stream, n: chunk.timeNano.toString(), l: chunk.line.toString('base64') }) + '\n',
      );
    }
  })();
}

/** A worker's endpoint: it answers only /ca and the managers' /logs (everything else is a manager's). */
export function workerEndpoint(caPem: string, logs: NonNullable<EndpointHandler['logs']>): EndpointHandler {
  const notHere = () => Promise.reject(notFound('this node is a worker: ask a manager'));
  return {
    caPem: () => caPem,
    join: notHere,
    heartbeat: notHere,
    promote: notHere,
    leave: notHere,
    overlay: notHere,
    agentSync: notHere,
    unlockKey: notHere,
    logs,
  };
}

/** The manager side: the log lines of `taskIds` from the node whose endpoint is at `addr`. */
export function remoteTaskLogs(
  addr: string,
  certs: NodeCerts,
  body: RemoteLogsRequest,
  signal: AbortSignal,
): Promise<AsyncIterable<TaskLogLine>> {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(addr);
  if (!m) return Promise.reject(invalidParameter(`invalid node address ${JSON.stringify(addr)}`));
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: m[1] ?? m[2],
        port: Number(m[3]),
        method: 'POST',
        path: '/logs',
        ca: certs.caPem,
        cert: certs.certPem,
        key: certs.keyPem,
        checkServerIdentity: () => undefined, // the chain is checked against the cluster CA
        servername: '',
        signal,
        headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length },
      },
      (res) => {
        clearTimeout(answerTimer);
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let message = `node ${addr} answered ${res.statusCode}`;
            try {
              message = (JSON.parse(Buffer.concat(chunks).toString()) as { message?: string }).message ?? message;
            } catch {
              // not JSON: the status says enough
            }
            reject(new EngineError('UNAVAILABLE', message));
          });
          return;
        }
        resolve(
          (async function* () {
            let rest = '';
            try {
              for await (const c of res as AsyncIterable<Buffer>) {
                rest += c.toString('utf8');
                let nl;
                while ((nl = rest.indexOf('\n')) >= 0) {
                  const line = rest.slice(0, nl);
                  rest = rest.slice(nl + 1);
                  const o = JSON.parse(line) as { t: string; tty: boolean; s: 'stdout' | 'stderr'; n: string; l: string };
                  yield { taskId: o.t, tty: o.tty, chunk: { stream: o.s, timeNano: BigInt(o.n), line: Buffer.from(o.l, 'base64') } };
                }
              }
            } catch (err) {
              if (!signal.aborted) throw err;
            } finally {
              req.destroy();
            }
          })(),
        );
      },
    );
    // A node that is down may not even refuse the connection: its part is given up after a while
    // (no socket timeout: a follow stream may be idle for long once answered).
    const answerTimer = setTimeout(() => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)), ANSWER_TIMEOUT_MS);
    answerTimer.unref();
    req.on('error', (err) => {
      clearTimeout(answerTimer);
      reject(err instanceof EngineError ? err : unavailable(`cannot reach the node at ${addr} for its logs: ${err.message}`, err));
    });
    req.end(payload);
  });
}
