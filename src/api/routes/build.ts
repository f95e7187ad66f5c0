// POST /build (the classic builder: a tar context streamed from the body, or remote=) and
// POST /build/cancel. The JSON stream starts with the first message: an error before it is an HTTP
// status with {"message"}, after it an errorDetail line (with the exit code of a failed RUN). With
// q=1 the step output is held back and only the image ID is sent (the held output goes out before
// an error, so the user sees why). A client hang-up cancels the build.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidParameter, messageOf } from '../../errors.ts';
import type { BuildMessage, BuildOptions, BuildSink, Ulimit } from '../../types/build.ts';
import { atoi, sendJson } from '../http.ts';
import type { Query } from '../http.ts';
import type { Router } from '../router.ts';
import { goUnmarshalError } from '../../util/go-json.ts';
import { API_VERSION, versionLessThan } from '../../util/api-version.ts';

export interface BuildBackend {
  build(opts: BuildOptions, body: AsyncIterable<Uint8Array> | null, sink: BuildSink, signal: AbortSignal): Promise<void>;
  cancel(id: string): boolean;
}

/** How dockerd heads a JSON query parameter it cannot read. */
const JSON_PARAM_HEADINGS: Record<string, string> = {
  cachefrom: 'error reading cache-from',
  ulimits: 'error reading ulimit settings',
  buildargs: 'error reading build args',
  labels: 'error reading labels',
};

function jsonParam<T>(q: Query, name: string, check: (v: unknown) => v is T, dflt: T): T {
  const raw = q.string(name);
  if (raw === undefined || raw === '') return dflt;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    // dockerd's words: its json.Unmarshal error under the parameter's own heading.
    throw invalidParameter(`${JSON_PARAM_HEADINGS[name] ?? `invalid ${name} value`}: ${goUnmarshalError(raw) ?? (err as Error).message}`);
  }
  if (v === null) return dflt;
  if (!check(v)) throw invalidParameter(`invalid ${name} value: ${raw}`);
  return v;
}

const isStringMap = (v: unknown): v is Record<string, string> =>
  !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const isArgMap = (v: unknown): v is Record<string, string | null> =>
  !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => x === null || typeof x === 'string');
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isUlimits = (v: unknown): v is Ulimit[] =>
  Array.isArray(v) &&
  v.every((u) => u && typeof u === 'object' && typeof u.Name === 'string' && Number.isInteger(u.Soft) && Number.isInteger(u.Hard));

function registryConfig(header: string | string[] | undefined): BuildOptions['registryAuth'] {
  const h = Array.isArray(header) ? header[0] : header;
  if (!h) return {};
  try {
    const v = JSON.parse(Buffer.from(h, 'base64').toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as BuildOptions['registryAuth'];
  } catch {
    // dockerd ignores an unreadable X-Registry-Config and builds without credentials; so do we,
    // but say so in the answer's error if a pull then fails for want of them.
  }
  return {};
}

/** The query of POST /build as BuildOptions; refuses what this builder does not do. */
export function parseBuildQuery(
  q: Query,
  headers: IncomingMessage['headers'],
  experimental: boolean,
  apiVersion = API_VERSION,
): BuildOptions {
  const version = q.string('version');
  if (version === '2')
    throw invalidParameter('BuildKit (version=2) is not available on this daemon: use the classic builder (DOCKER_BUILDKIT=0)');
  // outputs exist from API 1.40 (an older client's are ignored), platform from 1.32.
  if (q.string('outputs') && !versionLessThan(apiVersion, '1.40'))
    throw invalidParameter('outputs are not supported by the classic builder (they need BuildKit)');
  if (q.bool('squash') && !experimental) throw invalidParameter('squash is only supported with experimental mode');
  if (q.bool('squash')) throw invalidParameter('squash is not implemented by this builder');
  // dockerd's Int64ValueOrZero: a value that is no integer counts as not given.
  const num = (name: string) => {
    const raw = q.string(name);
    const parsed = raw ? atoi(raw) : undefined;
    const n = typeof parsed === 'number' ? parsed : undefined;
    if (n !== undefined && n < (name === 'memswap' || name === 'cpuquota' ? -1 : 0)) throw invalidParameter(`invalid ${name}: ${n}`);
    return n || undefined;
  };
  const extraHosts = q
    .strings('extrahosts')
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const h of extraHosts)
    if (!/^[^:=\s]+[:=].+$/.test(h)) throw invalidParameter(`invalid IP address in add-host: ${JSON.stringify(h)}`);
  const opts: BuildOptions = {
    dockerfile: q.string('dockerfile') || 'Dockerfile',
    tags: q.strings('t').filter(Boolean),
    quiet: q.bool('q'),
    noCache: q.bool('nocache'),
    cacheFrom: jsonParam(q, 'cachefrom', isStringList, []),
    pull: q.bool('pull'),
    remove: q.bool('rm', true),
    forceRemove: q.bool('forcerm'),
    ulimits: jsonParam(q, 'ulimits', isUlimits, []),
    buildArgs: jsonParam(q, 'buildargs', isArgMap, {}),
    labels: jsonParam(q, 'labels', isStringMap, {}),
    networkMode: q.string('networkmode') || 'default',
    extraHosts,
    registryAuth: registryConfig(headers['x-registry-config']),
  };
  const set = <K extends keyof BuildOptions>(k: K, v: BuildOptions[K] | undefined) => {
    if (v !== undefined && v !== '') opts[k] = v;
  };
  set('memory', num('memory'));
  set('memorySwap', num('memswap'));
  set('cpuShares', num('cpushares'));
  set('cpusetCpus', q.string('cpusetcpus'));
  set('cpuPeriod', num('cpuperiod'));
  set('cpuQuota', num('cpuquota'));
  set('shmSize', num('shmsize'));
  if (!versionLessThan(apiVersion, '1.32')) set('platform', q.string('platform'));
  set('target', q.string('target'));
  set('remote', q.string('remote'));
  set('buildId', q.string('buildid'));
  return opts;
}

/** The build's JSON stream: lazily started, quiet mode held back. */
class BuildStream {
  started = false;
  readonly abort = new AbortController();
  private held: BuildMessage[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly quiet: boolean,
    /** The image ID as an aux message: from API 1.30. */
    private readonly wantAux = true,
  ) {
    res.on('close', () => {
      if (!res.writableFinished) this.abort.abort(new Error('the client hung up'));
    });
  }

  private write(m: BuildMessage): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (!this.started) {
      this.started = true;
      this.res.writeHead(200, { 'Content-Type': 'application/json' });
    }
    this.res.write(`${JSON.stringify(m)}\r\n`);
  }

  /** The last image ID the build announced (one per stage): quiet mode's answer. */
  private lastId: string | undefined;

  // Quiet mode holds everything back, as dockerd's buffer: on success only the final image ID is
  // written (one stream line), on failure what was held and the error.
  readonly sink: BuildSink = (m) => {
    if (!this.quiet) return m.aux && !this.wantAux ? undefined : this.write(m);
    if (m.aux?.ID) this.lastId = m.aux.ID;
    this.held.push(m);
  };

  async run(fn: (sink: BuildSink, signal: AbortSignal) => Promise<void>): Promise<void> {
    try {
      await fn(this.sink, this.abort.signal);
      if (this.quiet && this.lastId) this.write({ stream: `${this.lastId}\n` });
    } catch (err) {
      if (!this.started && !this.held.length) throw err;
      for (const m of this.held.splice(0)) this.write(m);
      const message = messageOf(err);
      const code = (err as { exitCode?: unknown }).exitCode;
      this.write({ errorDetail: { ...(typeof code === 'number' ? { code } : {}), message }, error: message });
    }
    if (!this.started) this.res.writeHead(200, { 'Content-Type': 'application/json' });
    this.res.end();
  }
}

export function registerBuildRoutes(router: Router, backend: BuildBackend, opts: { experimental: () => boolean }): void {
  router.post('/build', async (ctx) => {
    const options = parseBuildQuery(ctx.query, ctx.req.headers, opts.experimental(), ctx.version);
    const stream = new BuildStream(ctx.res, options.quiet, !versionLessThan(ctx.version, '1.30'));
    const body = options.remote ? null : ctx.req;
    await stream.run((sink, signal) => backend.build(options, body, sink, signal));
  });

  router.post('/build/cancel', async (ctx) => {
    const id = ctx.query.string('id');
    if (!id) throw invalidParameter('build ID not provided');
    backend.cancel(id);
    sendJson(ctx.res, 200, {});
  });
}
