// Containers and exec in the SDK: create/inspect/list/lifecycle, logs (demultiplexed), stats
// (a stream or one sample), attach and exec start as hijacked duplex streams, archives (docker cp),
// top, changes, export, wait, prune. Shapes come from src/types/ and the generated src/types/api/.
import type { Duplex, Readable } from 'node:stream';
import type { ContainerCreateBody, ContainerUpdateBody, WaitCondition } from '../types/container-api.ts';
import type { ExecCreateBody, ExecInspectResponse } from '../types/exec.ts';
import type {
  ContainerInspectResponse,
  ContainerStatsResponse,
  ContainerSummary,
  ContainerTopResponse,
  ContainerUpdateResponse,
  ContainerWaitResponse,
  FilesystemChange,
} from '../types/api/index.ts';
import type { ContainerPathStat } from '../types/archive.ts';
import type { HttpTransport, Query } from './http.ts';
import { demux, jsonLines, rawFrames, type Frame } from './streams.ts';
import type { HijackStream } from './bun-hijack.ts';

export type Filters = Record<string, string[]>;
type Sig = { signal?: AbortSignal };
const enc = encodeURIComponent;

export interface LogsOptions extends Sig {
  stdout?: boolean;
  stderr?: boolean;
  follow?: boolean;
  timestamps?: boolean;
  tail?: number | 'all';
  since?: string | number;
  until?: string | number;
  /** The container has a TTY: the stream is raw, not framed (inspect tells; the CLI passes it). */
  tty?: boolean;
}

export interface AttachStreamOptions extends Sig {
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
  stream?: boolean;
  logs?: boolean;
  detachKeys?: string;
}

/** A hijacked attach or exec: write stdin to `stream`, end() it for EOF, read output from `output()`. */
export interface HijackedConn<S extends HijackStream = HijackStream> {
  stream: S;
  /** True when the output is framed (no TTY): output() demultiplexes. */
  multiplexed: boolean;
  output(): AsyncGenerator<Frame>;
}
/** attach() and exec start: the connection is a node:stream Duplex. */
export type Hijacked = HijackedConn<Duplex>;

function hijacked<S extends HijackStream>(h: { stream: S; contentType: string }): HijackedConn<S> {
  const multiplexed = h.contentType.includes('multiplexed');
  return { stream: h.stream, multiplexed, output: () => (multiplexed ? demux(h.stream) : rawFrames(h.stream)) };
}

function attachQuery(opts: AttachStreamOptions): Query {
  return {
    stdin: opts.stdin,
    stdout: opts.stdout ?? true,
    stderr: opts.stderr ?? true,
    stream: opts.stream ?? true,
    logs: opts.logs,
    detachKeys: opts.detachKeys,
  };
}

export class ContainersApi {
  constructor(private readonly t: HttpTransport) {}

  list(opts: Sig & { all?: boolean; limit?: number; size?: boolean; filters?: Filters } = {}): Promise<ContainerSummary[]> {
    return this.t.json('GET', '/containers/json', {
      query: { all: opts.all, limit: opts.limit, size: opts.size, filters: opts.filters },
      signal: opts.signal,
    });
  }
  create(body: ContainerCreateBody, opts: Sig & { name?: string; platform?: string } = {}): Promise<{ Id: string; Warnings: string[] }> {
    return this.t.json('POST', '/containers/create', { query: { name: opts.name, platform: opts.platform }, body, signal: opts.signal });
  }
  inspect(id: string, opts: Sig & { size?: boolean } = {}): Promise<ContainerInspectResponse> {
    return this.t.json('GET', `/containers/${enc(id)}/json`, { query: { size: opts.size }, signal: opts.signal });
  }
  start(id: string, opts: Sig & { detachKeys?: string } = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/start`, { query: { detachKeys: opts.detachKeys }, signal: opts.signal });
  }
  /** timeout in seconds (0: kill at once); signal overrides the stop signal. */
  stop(id: string, opts: Sig & { timeout?: number; stopSignal?: string } = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/stop`, { query: { t: opts.timeout, signal: opts.stopSignal }, signal: opts.signal });
  }
  restart(id: string, opts: Sig & { timeout?: number; stopSignal?: string } = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/restart`, {
      query: { t: opts.timeout, signal: opts.stopSignal },
      signal: opts.signal,
    });
  }
  kill(id: string, opts: Sig & { killSignal?: string } = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/kill`, { query: { signal: opts.killSignal }, signal: opts.signal });
  }
  remove(id: string, opts: Sig & { force?: boolean; volumes?: boolean; link?: boolean } = {}): Promise<void> {
    return this.t.call('DELETE', `/containers/${enc(id)}`, {
      query: { force: opts.force, v: opts.volumes, link: opts.link },
      signal: opts.signal,
    });
  }
  pause(id: string, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/pause`, opts);
  }
  unpause(id: string, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/unpause`, opts);
  }
  rename(id: string, name: string, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/rename`, { query: { name }, signal: opts.signal });
  }
  update(id: string, body: ContainerUpdateBody, opts: Sig = {}): Promise<ContainerUpdateResponse> {
    return this.t.json('POST', `/containers/${enc(id)}/update`, { body, signal: opts.signal });
  }
  resize(id: string, h: number, w: number, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/containers/${enc(id)}/resize`, { query: { h, w }, signal: opts.signal });
  }
  wait(id: string, opts: Sig & { condition?: WaitCondition } = {}): Promise<ContainerWaitResponse> {
    return this.t.json('POST', `/containers/${enc(id)}/wait`, { query: { condition: opts.condition }, signal: opts.signal });
  }
  /**
   * Registers a wait and resolves once the daemon has (its headers come at registration), with the
   * result to come (wrapped: a promise returned from an async function would be awaited): run and
   * start register before starting so that a quick exit is not missed.
   */
  async waitRegistered(id: string, opts: Sig & { condition?: WaitCondition } = {}): Promise<{ result: Promise<ContainerWaitResponse> }> {
    const { result } = await this.t.bodyLater('POST', `/containers/${enc(id)}/wait`, {
      query: { condition: opts.condition },
      signal: opts.signal,
    });
    return { result: result.then((b) => JSON.parse(b.toString('utf8')) as ContainerWaitResponse) };
  }
  top(id: string, opts: Sig & { psArgs?: string } = {}): Promise<ContainerTopResponse> {
    return this.t.json('GET', `/containers/${enc(id)}/top`, { query: { ps_args: opts.psArgs }, signal: opts.signal });
  }
  changes(id: string, opts: Sig = {}): Promise<FilesystemChange[] | null> {
    return this.t.json('GET', `/containers/${enc(id)}/changes`, opts);
  }
  prune(opts: Sig & { filters?: Filters } = {}): Promise<{ ContainersDeleted: string[] | null; SpaceReclaimed: number }> {
    return this.t.json('POST', '/containers/prune', { query: { filters: opts.filters }, signal: opts.signal });
  }

  /** The container's logs, demultiplexed (raw chunks as stdout for a TTY container). */
  async *logs(id: string, opts: LogsOptions = {}): AsyncGenerator<Frame> {
    const q: Query = {
      stdout: opts.stdout ?? true,
      stderr: opts.stderr ?? true,
      follow: opts.follow,
      timestamps: opts.timestamps,
      tail: opts.tail,
      since: opts.since,
      until: opts.until,
    };
    const res = await this.t.request('GET', `/containers/${enc(id)}/logs`, { query: q, signal: opts.signal });
    const framed = opts.tty === undefined ? !String(res.headers['content-type'] ?? '').includes('raw-stream') : !opts.tty;
    yield* framed ? demux(res) : rawFrames(res);
  }

  /** Stats: a stream of samples (stream: true, the default) or one sample. */
  async *stats(id: string, opts: Sig & { stream?: boolean; oneShot?: boolean } = {}): AsyncGenerator<ContainerStatsResponse> {
    const res = await this.t.request('GET', `/containers/${enc(id)}/stats`, {
      query: { stream: opts.stream ?? true, 'one-shot': opts.oneShot },
      signal: opts.signal,
    });
    yield* jsonLines<ContainerStatsResponse>(res);
  }

  async attach(id: string, opts: AttachStreamOptions = {}): Promise<Hijacked> {
    return hijacked(await this.t.hijack('POST', `/containers/${enc(id)}/attach`, { query: attachQuery(opts), signal: opts.signal }));
  }

  /**
   * An attach without stdin, for its output alone: its connection is not a node:stream (under Bun,
   * Bun's own socket: bun-hijack.ts), what `engine run` without -i uses.
   */
  async attachOutput(id: string, opts: Omit<AttachStreamOptions, 'stdin'> = {}): Promise<HijackedConn> {
    const query = attachQuery({ ...opts, stdin: false });
    return hijacked(await this.t.hijackLight('POST', `/containers/${enc(id)}/attach`, { query, signal: opts.signal }));
  }

  // ---- archives (docker cp) ----
  async statPath(id: string, path: string, opts: Sig = {}): Promise<ContainerPathStat> {
    const res = await this.t.request('HEAD', `/containers/${enc(id)}/archive`, { query: { path }, signal: opts.signal });
    res.resume();
    const h = String(res.headers['x-docker-container-path-stat'] ?? '');
    return JSON.parse(Buffer.from(h, 'base64').toString('utf8')) as ContainerPathStat;
  }
  /** A tar stream of path in the container. */
  getArchive(id: string, path: string, opts: Sig = {}): Promise<Readable> {
    return this.t.request('GET', `/containers/${enc(id)}/archive`, { query: { path }, signal: opts.signal });
  }
  putArchive(
    id: string,
    path: string,
    tar: Readable | Buffer,
    opts: Sig & { noOverwriteDirNonDir?: boolean; copyUIDGID?: boolean } = {},
  ): Promise<void> {
    return this.t.call('PUT', `/containers/${enc(id)}/archive`, {
      query: { path, noOverwriteDirNonDir: opts.noOverwriteDirNonDir, copyUIDGID: opts.copyUIDGID },
      body: tar,
      headers: { 'Content-Type': 'application/x-tar' },
      signal: opts.signal,
    });
  }
  export(id: string, opts: Sig = {}): Promise<Readable> {
    return this.t.request('GET', `/containers/${enc(id)}/export`, opts);
  }
}

type ExecStartOptions = Sig & { tty?: boolean; consoleSize?: [number, number] };
const execStartBody = (opts: ExecStartOptions) => ({
  Detach: false,
  Tty: !!opts.tty,
  ...(opts.consoleSize ? { ConsoleSize: opts.consoleSize } : {}),
});

export class ExecApi {
  constructor(private readonly t: HttpTransport) {}

  create(container: string, body: ExecCreateBody, opts: Sig = {}): Promise<{ Id: string }> {
    return this.t.json('POST', `/containers/${enc(container)}/exec`, { body, signal: opts.signal });
  }
  /** Starts the exec hijacked: stdin goes to `stream`, output comes from output(). */
  async start(id: string, opts: ExecStartOptions = {}): Promise<Hijacked> {
    return hijacked(await this.t.hijack('POST', `/exec/${enc(id)}/start`, { body: execStartBody(opts), signal: opts.signal }));
  }
  /** start() for an exec created without AttachStdin: its connection is not a node:stream (attachOutput()). */
  async startOutput(id: string, opts: ExecStartOptions = {}): Promise<HijackedConn> {
    return hijacked(await this.t.hijackLight('POST', `/exec/${enc(id)}/start`, { body: execStartBody(opts), signal: opts.signal }));
  }
  startDetached(id: string, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/exec/${enc(id)}/start`, { body: { Detach: true }, signal: opts.signal });
  }
  inspect(id: string, opts: Sig = {}): Promise<ExecInspectResponse> {
    return this.t.json('GET', `/exec/${enc(id)}/json`, opts);
  }
  resize(id: string, h: number, w: number, opts: Sig = {}): Promise<void> {
    return this.t.call('POST', `/exec/${enc(id)}/resize`, { query: { h, w }, signal: opts.signal });
  }
}
