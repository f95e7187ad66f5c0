// Runs hostile cases against a daemon's unix socket over raw connections and classifies what came
// back: an answer (status, JSON error body or not), a hang (no status line in time), a 5xx, or a
// dead daemon. Between cases it checks that /_ping still answers quickly, so a request that holds
// the event loop shows up as a stall even when it eventually answers.
import { connect } from 'node:net';
import type { ConsoleTarget } from './hostile-console.ts';
import { hostileCase, type HostileCase } from './hostile-gen.ts';

export interface Outcome {
  status?: number;
  contentType?: string;
  body: string;
  /** No status line before the timeout. */
  hang: boolean;
  /** The server closed without any answer. */
  closedSilently: boolean;
  ms: number;
}

export interface Finding {
  index: number;
  name: string;
  problem: 'hang' | '5xx' | 'non-JSON error' | 'crash' | 'stall';
  detail: string;
}

export interface RunReport {
  seed: number;
  requests: number;
  byStatus: Record<string, number>;
  findings: Finding[];
  counts: Record<Finding['problem'], number>;
  /** The slowest /_ping seen between cases (ms). */
  worstPingMs: number;
  durationMs: number;
  /** 501/503 answers of the error table, and registries out of reach (not daemon failures). */
  notes: { intended: number; upstream: number };
}

const UPSTREAM = /dial tcp|no such host|connection refused|i\/o timeout|network is unreachable/;

/** Sends one case (to a unix socket, or host and port); reads until the server closes, the answer is complete, or the timeout. */
export function sendCase(to: string | { host: string; port: number }, c: HostileCase, timeoutMs: number): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const sock = typeof to === 'string' ? connect(to) : connect(to.port, to.host);
    const finish = (hang: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(cut);
      sock.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
      const headers = m?.[2] ?? '';
      const contentType = /^content-type:\s*([^\r\n]*)/im.exec(headers)?.[1];
      let body = m?.[3] ?? '';
      if (/^transfer-encoding:\s*chunked/im.test(headers)) body = dechunk(body);
      // A pipelined or garbage-led second answer after this one is not part of its body.
      const length = /^content-length:\s*(\d+)/im.exec(headers)?.[1];
      if (length !== undefined) body = Buffer.from(body, 'latin1').subarray(0, Number(length)).toString('latin1');
      resolve({
        ...(m ? { status: Number(m[1]) } : {}),
        ...(contentType ? { contentType } : {}),
        body,
        hang: hang && !m,
        closedSilently: !hang && text.length === 0,
        ms: Date.now() - started,
      });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    sock.on('error', () => finish(false));
    sock.on('close', () => finish(false));
    let cut: NodeJS.Timeout | undefined;
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (!/^HTTP\/1\.[01] (\d{3})/.test(text) || end < 0) return;
      // An answer with a length is read whole (a long error message must not be cut); streaming
      // answers (events, logs, stats) never end by themselves: their status line is enough.
      const length = /^content-length:\s*(\d+)/im.exec(text.slice(0, end))?.[1];
      if (length !== undefined) {
        if (Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length)) finish(false);
      } else if (!cut && Date.now() - started > 50) {
        cut = setTimeout(() => finish(false), 300);
      }
    });
    sock.on('connect', () => {
      sock.write(c.bytes);
      if (c.halfClose) sock.end();
      if (c.abortAfterMs !== undefined)
        setTimeout(() => {
          // A reset exists on TCP only: on the unix socket the case ends with a close.
          if (c.reset && !done && typeof to !== 'string') sock.resetAndDestroy();
          finish(false);
        }, c.abortAfterMs);
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) break;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 4 + size);
  }
  return out;
}

/**
 * dockerd answers a client older than API 1.24 in plain text (such clients cannot read its JSON
 * errors): a 400 `client version … is too old` as text/plain is that answer, not a failure.
 */
function isOldClientError(o: { status?: number; contentType?: string; body: string }): boolean {
  return o.status === 400 && /^text\/plain/.test(o.contentType ?? '') && /^client version [^ ]+ is too old\. /.test(o.body);
}
function isJsonError(o: Outcome): boolean {
  if (!o.contentType?.includes('application/json')) return false;
  try {
    const j = JSON.parse(o.body) as { message?: unknown };
    return typeof j.message === 'string' && j.message.length > 0;
  } catch {
    return false;
  }
}

async function ping(socketPath: string, console?: ConsoleTarget): Promise<number | undefined> {
  const o = await sendCase(
    socketPath,
    { name: 'ping', bytes: Buffer.from('GET /_ping HTTP/1.1\r\nHost: e\r\nConnection: close\r\n\r\n') },
    10_000,
  );
  if (o.status !== 200 || !console) return o.status === 200 ? o.ms : undefined;
  // The console's listener and its passthrough answer too.
  const c = await sendCase(
    console,
    {
      name: 'console ping',
      bytes: Buffer.from(
        `GET /api/_ping HTTP/1.1\r\nHost: ${console.host}:${console.port}\r\nCookie: ${console.cookie}\r\nConnection: close\r\n\r\n`,
      ),
    },
    10_000,
  );
  return c.status === 200 ? Math.max(o.ms, c.ms) : undefined;
}

export interface RunOptions {
  socketPath: string;
  seed: number;
  count: number;
  /** Cases in flight at once (pipelines several connections, as busy clients do). */
  concurrency?: number;
  timeoutMs?: number;
  /** A /_ping slower than this between cases is a stall. */
  stallMs?: number;
  /** Whether the daemon process is still alive (a crash otherwise). */
  alive?: () => boolean;
  /** Replay only these case numbers of the seed (count is then ignored). */
  only?: number[];
  /** Never send `swarm leave` (a run inside a cluster stays in it). */
  keepCluster?: boolean;
  /** The daemon's web console listener: about a quarter of the cases go there (hostile-console.ts). */
  console?: ConsoleTarget;
  /** Called with every case's outcome (for replaying findings by hand). */
  onOutcome?: (index: number, c: HostileCase, o: Outcome) => void;
  onProgress?: (done: number) => void;
}

export async function runHostile(opts: RunOptions): Promise<RunReport> {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const stallMs = opts.stallMs ?? 1000;
  const findings: Finding[] = [];
  const byStatus: Record<string, number> = {};
  let worstPingMs = 0;
  let next = 0;
  let crashed = false;
  const notes = { intended: 0, upstream: 0 };
  const total = opts.only ? opts.only.length : opts.count;
  const worker = async () => {
    while (!crashed && next < total) {
      const n = next++;
      const index = opts.only ? opts.only[n]! : n;
      const c = hostileCase(opts.seed, index, opts.keepCluster, opts.console);
      const o = await sendCase(c.console && opts.console ? opts.console : opts.socketPath, c, timeoutMs);
      opts.onOutcome?.(index, c, o);
      const key = o.hang ? 'hang' : o.status !== undefined ? String(o.status) : 'closed';
      byStatus[key] = (byStatus[key] ?? 0) + 1;
      const add = (problem: Finding['problem'], detail: string) => findings.push({ index, name: c.name, problem, detail });
      if (o.hang) add('hang', `no answer in ${timeoutMs} ms`);
      // 501 and 503 are answers of the error table (a part not built; not in a cluster, as dockerd
      // says), and a registry this offline machine cannot reach is the network's failure, not the
      // daemon's: both are counted apart. Any other 5xx means the daemon failed.
      else if (o.status !== undefined && (o.status === 501 || o.status === 503)) notes.intended++;
      else if (o.status !== undefined && o.status >= 500 && UPSTREAM.test(o.body)) notes.upstream++;
      else if (o.status !== undefined && o.status >= 500) add('5xx', `${o.status} ${o.body.slice(0, 200)}`);
      // A HEAD answer has no body by definition: its status is the whole answer.
      else if (
        o.status !== undefined &&
        o.status >= 400 &&
        !c.bytes.subarray(0, 5).equals(Buffer.from('HEAD ')) &&
        !isJsonError(o) &&
        !isOldClientError(o)
      ) {
        add('non-JSON error', `${o.status} ${o.contentType ?? '(no content type)'} ${JSON.stringify(o.body.slice(0, 120))}`);
      } else if (o.status === undefined && o.closedSilently && c.abortAfterMs === undefined && !c.mayCloseSilently)
        add('non-JSON error', 'closed without an answer');
      if (n % 25 === 0) {
        const ms = await ping(opts.socketPath, opts.console);
        if (ms === undefined) {
          if (opts.alive && !opts.alive()) {
            add('crash', 'the daemon exited');
            crashed = true;
          } else {
            add('stall', '/_ping did not answer');
          }
        } else {
          worstPingMs = Math.max(worstPingMs, ms);
          if (ms > stallMs) add('stall', `/_ping took ${ms} ms`);
        }
      }
      opts.onProgress?.(n + 1);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
  const counts = { hang: 0, '5xx': 0, 'non-JSON error': 0, crash: 0, stall: 0 };
  for (const f of findings) counts[f.problem]++;
  return {
    seed: opts.seed,
    requests: Math.min(next, total),
    byStatus,
    findings,
    counts,
    worstPingMs,
    durationMs: Date.now() - started,
    notes,
  };
}
