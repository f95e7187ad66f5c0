// Reads a stream ahead of its consumer, up to `limit` bytes: while the tar extractor waits on the
// filesystem, the sender keeps sending instead of stalling on a full socket buffer (that stall,
// once per file, made an upload several times slower than the disk).
import type { Readable } from 'node:stream';

export async function* readAhead(src: Readable, limit = 16 << 20): AsyncGenerator<Buffer> {
  const queue: Buffer[] = [];
  let queued = 0;
  let done = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= limit) src.pause();
    notify();
  };
  const onEnd = () => {
    done = true;
    notify();
  };
  const onError = (err: Error) => {
    failure = err;
    notify();
  };
  src.on('data', onData);
  src.once('end', onEnd);
  src.once('error', onError);
  src.once('close', onEnd);
  try {
    for (;;) {
      if (queue.length) {
        const chunk = queue.shift()!;
        queued -= chunk.length;
        if (queued < limit / 2 && src.isPaused()) src.resume();
        yield chunk;
        continue;
      }
      if (failure) throw failure;
      if (done) return;
      await new Promise<void>((r) => (wake = r));
    }
  } finally {
    src.off('data', onData);
    src.off('end', onEnd);
    src.off('error', onError);
    src.off('close', onEnd);
  }
}
