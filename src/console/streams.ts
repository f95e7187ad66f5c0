// Incremental parsers of the API's streams as the browser receives them: JSON messages one per line
// (events, stats, pull and build progress) and the 8-byte-header frames of logs without a TTY.
// Pure: unit-tested in node, bundled into the page.

/** Splits a text stream into JSON values, one per line; a partial line waits for the next chunk. */
export class JsonLines<T = unknown> {
  private rest = '';
  push(text: string): T[] {
    const out: T[] = [];
    const all = this.rest + text;
    let start = 0;
    for (;;) {
      const nl = all.indexOf('\n', start);
      if (nl < 0) break;
      const line = all.slice(start, nl).trim();
      start = nl + 1;
      if (line) out.push(JSON.parse(line) as T);
    }
    this.rest = all.slice(start);
    return out;
  }
}

export interface Frame {
  stream: 'stdin' | 'stdout' | 'stderr';
  data: Uint8Array;
}
const STREAMS = ['stdin', 'stdout', 'stderr'] as const;

/** The multiplexed stream of logs/attach without a TTY: [stream, 0, 0, 0, size32be] + payload. */
export class FrameDemux {
  private buf = new Uint8Array(0);
  push(chunk: Uint8Array): Frame[] {
    let buf = chunk;
    if (this.buf.length) {
      buf = new Uint8Array(this.buf.length + chunk.length);
      buf.set(this.buf);
      buf.set(chunk, this.buf.length);
    }
    const out: Frame[] = [];
    let off = 0;
    while (buf.length - off >= 8) {
      const size = ((buf[off + 4]! << 24) >>> 0) + (buf[off + 5]! << 16) + (buf[off + 6]! << 8) + buf[off + 7]!;
      if (buf.length - off < 8 + size) break;
      out.push({ stream: STREAMS[buf[off]!] ?? 'stdout', data: buf.slice(off + 8, off + 8 + size) });
      off += 8 + size;
    }
    this.buf = buf.slice(off);
    return out;
  }
}

/** Cuts decoded text into whole lines per stream; the unfinished tail of each stream waits. */
export class LineSplitter {
  private tails = new Map<string, string>();
  push(stream: string, text: string): string[] {
    const all = (this.tails.get(stream) ?? '') + text;
    const parts = all.split('\n');
    this.tails.set(stream, parts.pop()!);
    return parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  }
}
