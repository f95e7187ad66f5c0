// A fake service manager's end of the notify protocol (sd_notify(3)): a unix datagram socket bound
// by the test (a path or an @abstract name) through the daemon's own native helper, collecting the
// datagrams a daemon started with NOTIFY_SOCKET sends.
import { errnoError, unixgramHelper } from '../../src/logging/remote/unixgram.ts';

export class NotifyReceiver {
  readonly messages: string[] = [];
  private readonly buf = Buffer.alloc(64 * 1024);

  private constructor(
    readonly address: string,
    private fd: number,
  ) {}

  /** Binds `address` (a socket path, or '@name' in the abstract namespace). */
  static open(address: string): NotifyReceiver {
    const h = unixgramHelper();
    if (!h) throw new Error('build/native/unixgram.node is missing (npm run build with a C compiler)');
    const fd = h.open(address, true);
    if (fd < 0) throw errnoError(fd, `bind ${address}`);
    return new NotifyReceiver(address, fd);
  }

  /** Reads every datagram queued so far into `messages`. */
  drain(): string[] {
    const h = unixgramHelper()!;
    for (;;) {
      const n = h.recv(this.fd, this.buf);
      if (n < 0) break; // -EAGAIN: nothing more queued
      this.messages.push(this.buf.subarray(0, n).toString());
    }
    return this.messages;
  }

  /** Waits for a datagram matching `pattern` after the first `from` ones; returns its index. */
  async waitFor(pattern: RegExp, from = 0, timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.drain().findIndex((m, k) => k >= from && pattern.test(m));
      if (i >= 0) return i;
      if (Date.now() > deadline)
        throw new Error(`no notification matching ${pattern} in ${timeoutMs} ms: ${JSON.stringify(this.messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    if (this.fd >= 0) unixgramHelper()!.close(this.fd);
    this.fd = -1;
  }
}
