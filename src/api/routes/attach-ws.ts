// GET /containers/{id}/attach/ws: attach over a websocket. Output goes out as raw bytes (no
// multiplexing header) in binary frames (text frames before API 1.28, as dockerd); data frames from
// the client are the container's stdin. The connection closes when the container's run ends.
// Before API 1.42 every stream is attached whatever the query says (dockerd's rule).
import type { Socket } from 'node:net';
import { invalidParameter } from '../../errors.ts';
import type { Router } from '../router.ts';
import { versionLessThan } from '../../util/api-version.ts';
import { closeFrame, encodeFrame, handshakeResponse, isWebsocketRequest, OP, readClientFrames } from '../websocket.ts';
import type { AttachOptions } from '../../types/attach.ts';
import type { AttachBackend } from './attach.ts';

export function registerAttachWsRoutes(router: Router, backend: AttachBackend): void {
  router.get('/containers/{id}/attach/ws', async (ctx) => {
    const q = ctx.query;
    const socket: Socket | undefined = ctx.socket;
    if (!socket || !isWebsocketRequest(ctx.req.headers))
      throw invalidParameter('websocket: the client is not using the websocket protocol');
    const all = versionLessThan(ctx.version, '1.42');
    const opts: AttachOptions = {
      stream: q.bool('stream'),
      logs: q.bool('logs'),
      stdin: all || q.bool('stdin'),
      stdout: all || q.bool('stdout'),
      stderr: all || q.bool('stderr'),
      ...(q.string('detachKeys') ? { detachKeys: q.string('detachKeys')! } : {}),
    };
    const session = await backend.attach(ctx.params.id, opts);
    ctx.res.detachSocket?.(socket);
    socket.setNoDelay(true);
    socket.write(handshakeResponse(ctx.req.headers['sec-websocket-key'] as string));
    const dataOp = versionLessThan(ctx.version, '1.28') ? OP.text : OP.binary;

    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    let closing = false;
    const send = (data: Buffer) => {
      if (!closing && socket.writable && data.length) socket.write(encodeFrame(dataOp, data));
    };
    const close = (code = 1000) => {
      if (!closing && socket.writable) socket.write(closeFrame(code));
      closing = true;
      finish();
    };
    const write = (c: { stream: 'stdout' | 'stderr'; data: Buffer }) => {
      if ((c.stream === 'stdout' && opts.stdout) || (c.stream === 'stderr' && opts.stderr)) send(c.data);
    };
    const unsubscribe = opts.stream ? session.subscribe((c) => (c ? write(c) : close())) : () => undefined;
    if (session.history) for await (const m of session.history) write({ stream: m.stream, data: m.line });

    readClientFrames(socket, Buffer.alloc(0), {
      onMessage: (payload) => {
        const stdin = opts.stdin ? session.stdin?.() : undefined;
        if (stdin && !stdin.write(payload)) {
          socket.pause();
          stdin.once('drain', () => socket.resume());
        }
      },
      onClose: (code) => {
        if (code === 1000) void session.closeStdin().catch(() => undefined); // The client closed the websocket: a stdin that is already closed or gone needs nothing more.
        close(code);
      },
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', () => finish());
    if (!opts.stream) close();
    await finished;
    unsubscribe();
    if (socket.writable) socket.end();
  });
}
