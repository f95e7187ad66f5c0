// Exec endpoints: create, start (a hijacked stream like attach: 101 UPGRADED, 8-byte multiplexed
// framing without a TTY, raw bytes with one; stdin flows back, a half-close ends it), resize, and
// inspect (the CLI reads ExitCode there once the stream ends).
import { frame } from '../stream-framing.ts';
import type { Socket } from 'node:net';
import { invalidParameter, messageOf } from '../../errors.ts';
import { parseBodyJson, readJsonObject, sendJson } from '../http.ts';
import { readUpgradeBody } from '../upgrade-body.ts';
import { EXEC_OPTIONS, EXEC_START_OPTIONS, decodeBody } from '../body-schemas.ts';
import type { Router } from '../router.ts';
import type { ExecCreateBody, ExecInspectResponse, ExecStartOptions, OutputSink, RunningExec } from '../../types/exec.ts';
import { versionLessThan } from '../../util/api-version.ts';

export interface ExecBackend {
  /** May wait (a container still being reconciled after a daemon restart). */
  create(ref: string, body: ExecCreateBody): { Id: string } | Promise<{ Id: string }>;
  checkStartable(id: string): { tty: boolean; openStdin: boolean };
  start(id: string, opts: ExecStartOptions, sink: OutputSink | null): Promise<RunningExec>;
  resize(id: string, height: number, width: number): Promise<void>;
  inspect(id: string): ExecInspectResponse;
}

/** Watches a TTY session's stdin for the detach sequence (see daemon/exec/detach-keys.ts). */
export interface DetachWatcher {
  push(chunk: Buffer): { forward: Buffer; detach: boolean };
}

export interface ExecRouteOptions {
  detachWatcher(keys: Buffer): DetachWatcher;
}

export function registerExecRoutes(router: Router, backend: ExecBackend, opts: ExecRouteOptions): void {
  router.post('/containers/{id}/exec', async (ctx) => {
    const body = decodeBody<ExecCreateBody>(await readJsonObject(ctx.req), EXEC_OPTIONS, 'ExecOptions');
    // ConsoleSize exists from API 1.42.
    if (versionLessThan(ctx.version, '1.42')) delete body.ConsoleSize;
    sendJson(ctx.res, 201, await backend.create(ctx.params.id, body));
  });

  router.get('/exec/{id}/json', (ctx) => sendJson(ctx.res, 200, backend.inspect(ctx.params.id)));

  router.post('/exec/{id}/resize', async (ctx) => {
    // dockerd's words: `invalid resize height "abc": invalid syntax`; both are required.
    const h = ctx.query.uint32('h');
    if (typeof h === 'string') throw invalidParameter(`invalid resize height ${JSON.stringify(ctx.query.string('h') ?? '')}: ${h}`);
    const w = ctx.query.uint32('w');
    if (typeof w === 'string') throw invalidParameter(`invalid resize width ${JSON.stringify(ctx.query.string('w') ?? '')}: ${w}`);
    await backend.resize(ctx.params.id, h, w);
    ctx.res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 0 });
    ctx.res.end();
  });

  router.post('/exec/{id}/start', async (ctx) => {
    const id = ctx.params.id;
    const upgraded = ctx.socket !== undefined;
    const socket: Socket = ctx.socket ?? (ctx.req.socket as Socket);
    // On an upgrade request node hands over the socket with the body still unread on it.
    const raw = upgraded ? await readUpgradeBody(socket, ctx.req.headers) : undefined;
    const parsed = raw !== undefined ? await parseBody(raw) : await readJsonObject<Record<string, unknown>>(ctx.req, true);
    const body = decodeBody<{ Detach?: boolean; Tty?: boolean; ConsoleSize?: number[] }>(parsed, EXEC_START_OPTIONS, 'ExecStartOptions');
    // ConsoleSize exists from API 1.42.
    const consoleSize = versionLessThan(ctx.version, '1.42') ? undefined : body.ConsoleSize;
    // As dockerd: the start request's Tty decides the framing, whatever the exec was created with
    // (the process's terminal is still the exec's own).
    const tty = body.Tty === true;

    if (body.Detach === true) {
      const run = await backend.start(id, { consoleSize }, null);
      void run.done.catch(() => undefined); // A detached exec's outcome is recorded by the exec service (ExitCode in inspect); nobody waits here.
      ctx.res.writeHead(200, { 'Content-Length': 0 });
      ctx.res.end();
      return;
    }

    backend.checkStartable(id);
    const contentType =
      tty || versionLessThan(ctx.version, '1.42') ? 'application/vnd.docker.raw-stream' : 'application/vnd.docker.multiplexed-stream';
    // From here on the connection is a raw stream; the status line goes out by hand.
    ctx.res.detachSocket?.(socket);
    socket.write(
      upgraded
        ? `HTTP/1.1 101 UPGRADED\r\nContent-Type: ${contentType}\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n`
        : 'HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n',
    );
    const write: OutputSink = (stream, data) => {
      if (socket.writable) socket.write(tty ? data : frame(stream, data));
    };

    let run: RunningExec;
    try {
      run = await backend.start(id, { consoleSize }, write);
    } catch (err) {
      write('stdout', Buffer.from(`${messageOf(err)}\r\n`));
      socket.end();
      return;
    }

    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    socket.on('close', () => release());
    socket.on('error', () => release());
    const stdin = run.stdin;
    if (stdin && upgraded) {
      const watcher = run.tty ? opts.detachWatcher(run.detachKeys) : undefined;
      let detached = false;
      const forward = (b: Buffer) => {
        if (b.length && !detached && !stdin.destroyed && !stdin.write(b)) {
          socket.pause();
          stdin.once('drain', () => socket.resume());
        }
      };
      socket.on('data', (b: Buffer) => {
        if (!watcher) return forward(b);
        const r = watcher.push(b);
        forward(r.forward);
        if (r.detach) {
          detached = true; // the process keeps running; only this session ends
          release();
        }
      });
      // As dockerd: the end of the client's stdin closes the process's stdin without a TTY only (a
      // terminal's EOF is a ^D the user types, and a detached shell must survive).
      // The half-close may have come in while the process was being started (the client sends it
      // right after the 101 when it has no input): its 'end' is then already past.
      if (!run.tty) {
        if (socket.readableEnded) void run.closeStdin();
        else socket.on('end', () => void run.closeStdin());
        socket.on('close', () => void run.closeStdin());
      }
    } else if (upgraded) {
      socket.on('data', () => undefined); // nothing reads stdin: drop it
    }
    if (upgraded) socket.resume();

    await Promise.race([run.done.catch(() => undefined), released]); // The exec service records a failed run; here it only means the stream is over.
    if (!socket.destroyed) socket.end();
  });
}

async function parseBody(raw: Buffer): Promise<Record<string, unknown>> {
  if (raw.length === 0) return {};
  const v = await parseBodyJson(raw);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidParameter('invalid JSON: expected an object');
  return v as Record<string, unknown>;
}
