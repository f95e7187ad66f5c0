// The none driver: drains the container's output (so the writer never blocks) and keeps nothing.

import { notImplemented } from '../errors.ts';
import type { LogDriver, LogMessage, LogStreams } from './types.ts';

/** dockerd's ErrReadLogsNotSupported, a NotImplemented error (HTTP 501). */
export const READ_NOT_SUPPORTED = 'configured logging driver does not support reading';

export class NoneLogDriver implements LogDriver {
  readonly name = 'none';
  readonly logPath = '';
  private readonly active = new Set<NodeJS.ReadableStream>();

  async attach(streams: LogStreams): Promise<void> {
    const drain = async (s: NodeJS.ReadableStream): Promise<void> => {
      this.active.add(s);
      try {
        for await (const _ of s as AsyncIterable<unknown>) void _;
      } catch {
        // a destroyed stream ends the drain
      } finally {
        this.active.delete(s);
      }
    };
    await Promise.all([streams.stdout, streams.stderr].filter((s) => s != null).map((s) => drain(s)));
  }

  read(): AsyncIterable<LogMessage> {
    throw notImplemented(READ_NOT_SUPPORTED);
  }

  async close(): Promise<void> {
    for (const s of this.active) (s as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  }
}
