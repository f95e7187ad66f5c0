// The body of a request whose connection is taken over (attach, exec start with Upgrade: tcp):
// Node hands the socket over with the body still unread on it, so it is read here, by
// Content-Length or chunked, and what follows it (the client's stdin) is left on the socket.
import type { Socket } from 'node:net';
import { invalidParameter } from '../errors.ts';

const MAX_START_BODY = 64 * 1024;

/** Reads the request body off an upgraded socket (Content-Length or chunked); leaves the rest unread. */
export async function readUpgradeBody(socket: Socket, headers: Record<string, string | string[] | undefined>): Promise<Buffer> {
  const reader = new SocketReader(socket);
  try {
    if (/chunked/i.test(String(headers['transfer-encoding'] ?? ''))) {
      const parts: Buffer[] = [];
      let total = 0;
      for (;;) {
        const line = (await reader.line()).toString('latin1');
        const size = parseInt(line.split(';')[0]!.trim(), 16);
        if (!Number.isFinite(size)) throw invalidParameter('invalid chunked request body');
        if (size === 0) {
          while ((await reader.line()).length > 0) {
            /* trailers */
          }
          break;
        }
        total += size;
        if (total > MAX_START_BODY) throw invalidParameter('request body is too large');
        parts.push(await reader.exact(size));
        await reader.line();
      }
      return Buffer.concat(parts);
    }
    const n = Number(headers['content-length'] ?? 0);
    if (!Number.isInteger(n) || n < 0 || n > MAX_START_BODY) throw invalidParameter('invalid request body length');
    return await reader.exact(n);
  } finally {
    reader.done();
  }
}

/** Pull-style reads from a paused socket; what is read past the need goes back with unshift. */
class SocketReader {
  private buf = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private ended = false;
  private readonly onReadable = () => this.wake?.();
  private readonly onEnd = () => {
    this.ended = true;
    this.wake?.();
  };

  constructor(private readonly socket: Socket) {
    socket.on('readable', this.onReadable);
    socket.on('end', this.onEnd);
  }

  private async fill(): Promise<void> {
    for (;;) {
      const c = this.socket.read() as Buffer | null;
      if (c) {
        this.buf = Buffer.concat([this.buf, c]);
        return;
      }
      if (this.ended) throw invalidParameter('unexpected end of request body');
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }

  async exact(n: number): Promise<Buffer> {
    while (this.buf.length < n) await this.fill();
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  async line(): Promise<Buffer> {
    for (;;) {
      const i = this.buf.indexOf('\r\n');
      if (i >= 0) {
        const out = this.buf.subarray(0, i);
        this.buf = this.buf.subarray(i + 2);
        return out;
      }
      if (this.buf.length > 8192) throw invalidParameter('invalid chunked request body');
      await this.fill();
    }
  }

  done(): void {
    this.socket.off('readable', this.onReadable);
    this.socket.off('end', this.onEnd);
    if (this.buf.length) this.socket.unshift(this.buf);
    this.buf = Buffer.alloc(0);
  }
}
