// What every scenario needs from a daemon under test, whichever it is.

import { httpOverUnix } from '../../test/helpers/daemon.ts';

export interface DaemonUnderTest {
  kind: 'engined' | 'dockerd';
  dir: string;
  socket: string;
  pid: number;
  /** The containerd this daemon started for itself. */
  containerdPid(): number | null;
  /** Graceful stop, then kill leftovers, unmount and remove the temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

/** Polls /_ping every `everyMs` until it answers 200; throws if `exited()` or on timeout. */
export async function waitForPing(socket: string, exited: () => string | null, timeoutMs = 60_000, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gone = exited();
    if (gone !== null) throw new Error(gone);
    try {
      const r = await httpOverUnix(socket, 'GET', '/_ping', { timeoutMs: 2000 });
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no /_ping answer on ${socket} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Keeps the last `max` characters of a child's output for error messages. */
export class Tail {
  private text = '';
  constructor(private readonly max = 8000) {}
  push(chunk: Buffer | string): void {
    this.text += chunk;
    if (this.text.length > this.max * 2) this.text = this.text.slice(-this.max);
  }
  toString(): string {
    return this.text.slice(-this.max);
  }
}
