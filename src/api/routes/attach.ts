// POST /containers/{id}/attach: the hijacked stream `docker run` and `docker attach` use. With
// `Upgrade: tcp` the response is 101 and the connection becomes raw; output is framed with the
// 8-byte multiplexing header unless the container has a TTY; stdin flows the other way.
import { frame } from '../stream-framing.ts';
import type { Socket } from 'node:net';
import type { Router } from '../router.ts';
import { DEFAULT_DETACH_KEYS, EscapeMatcher, parseDetachKeys } from '../../daemon/exec/detach-keys.ts';
import type { AttachOptions, AttachSession } from '../../types/attach.ts';
import { readUpgradeBody } from '../upgrade-body.ts';
import { versionLessThan } from '../../util/api-version.ts';

export interface AttachBackend {
  attach(ref: string, opts: AttachOptions): Promise<AttachSession>;
}

export function registerAttachRoutes(router: Router, backend: AttachBackend): void {
  router.post('/containers/{id}/attach', async (ctx) => {
    const q = ctx.query;
    const opts: AttachOptions = {
      stream: q.bool('stream'),
      stdin: q.bool('stdin'),
      stdout: q.bool('stdout'),
      stderr: q.bool('stderr'),
      logs: q.bool('logs'),
      ...(q.string('detachKeys') ? { detachKeys: q.string('detachKeys')! } : {}),
    };
    // Parsed before the hijack, so a bad sequence is still a plain 400.
    const escape = new EscapeMatcher(parseDetachKeys(opts.detachKeys ?? DEFAULT_DETACH_KEYS));
    // A body sent with the request (dockerode sends its options as JSON) belongs to the request,
    // not to stdin: dockerd never hands it to the container either.
    const h = ctx.req.headers;
    const withBody =
      ctx.socket !== undefined && (Number(h['content-length'] ?? 0) > 0 || /chunked/i.test(String(h['transfer-encoding'] ?? '')));
    if (withBody) await readUpgradeBody(ctx.socket!, h);
    const session = await backend.attach(ctx.params.id, opts);
    const socket: Socket = ctx.socket ?? (ctx.req.socket as Socket);
    const upgrade = (ctx.req.headers.upgrade ?? '').toLowerCase() === 'tcp';
    // As dockerd: the multiplexed media type only on an upgraded connection and from API 1.42.
    const muxed = upgrade && !session.tty && !versionLessThan(ctx.version, '1.42');
    const contentType = muxed ? 'application/vnd.docker.multiplexed-stream' : 'application/vnd.docker.raw-stream';
    // The status line goes out by hand: from here on the connection is a raw stream, not HTTP.
    ctx.res.detachSocket?.(socket);
    socket.write(
      upgrade
        ? `HTTP/1.1 101 UPGRADED\r\nContent-Type: ${contentType}\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n`
        : `HTTP/1.1 200 OK\r\nContent-Type: ${contentType}\r\n\r\n`,
    );
    const write = (c: { stream: 'stdout' | 'stderr'; data: Buffer }) => {
      if ((c.stream === 'stdout' && !opts.stdout) || (c.stream === 'stderr' && !opts.stderr)) return;
      if (!socket.writable) return;
      socket.write(session.tty ? c.data : frame(c.stream, c.data));
    };
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const unsubscribe = opts.stream ? session.subscribe((c) => (c ? write(c) : finish())) : () => undefined;
    if (session.history) for await (const m of session.history) write({ stream: m.stream, data: m.line });
    if (opts.stdin && session.stdin) {
      socket.on('data', (raw: Buffer) => {
        // The detach sequence (default ctrl-p ctrl-q) ends this attachment; the container runs on.
        const { forward: b, detach } = escape.push(raw);
        if (detach) {
          finish();
          return;
        }
        if (b.length === 0) return;
        const stdin = session.stdin?.();
        // Backpressure: a process that does not read its input slows the client down.
        if (stdin && !stdin.write(b)) {
          socket.pause();
          stdin.once('drain', () => socket.resume());
        }
      });
      socket.on(
        'end',
        () =>
          void session.closeStdin().then(
            (closed) => {
              if (closed === false) finish();
            },
            () => finish(),
          ),
      );
    }
    socket.on('close', () => finish());
    if (withBody) socket.resume(); // reading the body paused it
    if (!opts.stream) finish();
    else if (!session.running() && !opts.logs) {
      // Attached to a stopped container: the stream stays until it runs and exits (docker start -a).
    }
    await finished;
    unsubscribe();
    if (socket.writable) socket.end();
  });
}
