// attachInput: a driver's synchronous input (LogInput) whatever the driver. Drivers that encode
// in-process offer open(); the others (none, plugins) still consume Readables: each write is copied
// into a PassThrough (the caller's bytes are a view into a reused read buffer) whose backpressure
// becomes write()'s answer.

import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { LogAttachment, LogDriver, LogStream } from './types.ts';

export function attachInput(driver: LogDriver, streams: { stdout: boolean; stderr: boolean }): LogAttachment {
  if (driver.open) return driver.open(streams);
  const pipes: Record<LogStream, PassThrough | null> = {
    stdout: streams.stdout ? new PassThrough({ highWaterMark: 64 << 10 }) : null,
    stderr: streams.stderr ? new PassThrough({ highWaterMark: 64 << 10 }) : null,
  };
  const done = driver.attach({ stdout: pipes.stdout, stderr: pipes.stderr });
  return {
    input: {
      write: (stream, data) => {
        const p = pipes[stream];
        return !p || p.writableEnded || p.destroyed ? true : p.write(Buffer.from(data));
      },
      writable: async (stream) => {
        const p = pipes[stream];
        if (!p || !p.writableNeedDrain || p.destroyed) return;
        await Promise.race([once(p, 'drain'), once(p, 'close')]).catch(() => {}); // 'close' too: a driver that stops reading (closed) must not leave the reader paused.
      },
      end: (stream) => {
        const p = pipes[stream];
        if (p && !p.writableEnded) p.end();
      },
    },
    done,
  };
}
