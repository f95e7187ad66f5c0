// The little of RFC 6455 the websocket attach needs: the opening handshake's accept key, frames
// written by the server (never masked) and a parser for the client's frames (always masked),
// with fragmented messages reassembled and control frames passed through as they come.
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OP = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** A message larger than this (in one frame or reassembled) ends the connection. */
const MAX_MESSAGE = 16 * 1024 * 1024;

export function acceptKey(key: string): string {
  return createHash('sha1')
    .update(key + GUID)
    .digest('base64');
}

/** Whether the request is a usable websocket upgrade (RFC 6455 §4.2.1). */
export function isWebsocketRequest(headers: Record<string, string | string[] | undefined>): boolean {
  const upgrade = String(headers.upgrade ?? '').toLowerCase();
  const key = headers['sec-websocket-key'];
  return upgrade === 'websocket' && typeof key === 'string' && Buffer.from(key, 'base64').length === 16;
}

export function handshakeResponse(key: string): string {
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`;
}

/** One unmasked frame, FIN set. */
export function encodeFrame(opcode: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (len < 126) head[1] = len;
  else if (len < 65536) {
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([head, payload]);
}

export function closeFrame(code = 1000, reason = ''): Buffer {
  const body = Buffer.alloc(2 + Buffer.byteLength(reason));
  body.writeUInt16BE(code, 0);
  body.write(reason, 2);
  return encodeFrame(OP.close, body);
}

export interface Message {
  opcode: number;
  payload: Buffer;
}

export class ProtocolError extends Error {}

/** Push parser for client frames: feed chunks, get whole messages (data) and control frames. */
export class FrameParser {
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentOp = 0;
  private fragmentSize = 0;

  push(chunk: Buffer): Message[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Message[] = [];
    for (;;) {
      if (this.buf.length < 2) break;
      const b0 = this.buf[0]!;
      const b1 = this.buf[1]!;
      const fin = (b0 & 0x80) !== 0;
      const opcode = b0 & 0x0f;
      if (b0 & 0x70) throw new ProtocolError('reserved bits set');
      if (!(b1 & 0x80)) throw new ProtocolError('client frames must be masked');
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) break;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) break;
        const big = this.buf.readBigUInt64BE(2);
        if (big > BigInt(MAX_MESSAGE)) throw new ProtocolError('frame too large');
        len = Number(big);
        off = 10;
      }
      if (len > MAX_MESSAGE) throw new ProtocolError('frame too large');
      if (this.buf.length < off + 4 + len) break;
      const mask = this.buf.subarray(off, off + 4);
      const payload = Buffer.from(this.buf.subarray(off + 4, off + 4 + len));
      for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
      this.buf = this.buf.subarray(off + 4 + len);
      if (opcode >= 0x8) {
        if (!fin || len > 125) throw new ProtocolError('bad control frame');
        out.push({ opcode, payload });
        continue;
      }
      if (opcode === OP.continuation) {
        if (!this.fragmentOp) throw new ProtocolError('continuation without a message');
      } else {
        if (this.fragmentOp) throw new ProtocolError('new message inside a fragmented one');
        this.fragmentOp = opcode;
      }
      this.fragments.push(payload);
      this.fragmentSize += payload.length;
      if (this.fragmentSize > MAX_MESSAGE) throw new ProtocolError('message too large');
      if (fin) {
        out.push({ opcode: this.fragmentOp, payload: this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments) });
        this.fragments = [];
        this.fragmentOp = 0;
        this.fragmentSize = 0;
      }
    }
    return out;
  }
}

/** What a reader of a client's frames is told (readClientFrames). */
export interface ClientFrameHandlers {
  /** A whole text or binary message. */
  onMessage(payload: Buffer): void;
  /** The client's close frame (1000), or a frame the protocol refuses (1002: close with "protocol error"). */
  onClose(code: 1000 | 1002): void;
}

/**
 * Reads a client's frames from `socket` (`head`: bytes that came with the upgrade request): a ping is
 * answered with a pong while the socket is writable, a close frame or a refused frame ends the read
 * through `onClose`, messages go to `onMessage`. The one reading loop of the websocket bridges
 * (attach, the console's exec and stats).
 */
export function readClientFrames(socket: Duplex, head: Buffer, h: ClientFrameHandlers): void {
  const parser = new FrameParser();
  const onData = (chunk: Buffer) => {
    let messages;
    try {
      messages = parser.push(chunk);
    } catch {
      h.onClose(1002);
      return;
    }
    for (const m of messages) {
      if (m.opcode === OP.close) h.onClose(1000);
      else if (m.opcode === OP.ping) {
        if (socket.writable) socket.write(encodeFrame(OP.pong, m.payload));
      } else if (m.opcode === OP.text || m.opcode === OP.binary) h.onMessage(m.payload);
    }
  };
  if (head.length) onData(head);
  socket.on('data', onData);
}
