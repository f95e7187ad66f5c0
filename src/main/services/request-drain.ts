// Shutdown's wait for requests in flight: the listeners stop accepting first (closing()), the
// containers stop (ending log followers and attach streams), the event streams end, and then this
// waits for what is left, cutting the connections after a grace period.
import type { OpenListener } from '../../api/listeners.ts';

export class RequestDrain {
  private closing: Promise<unknown> = Promise.resolve();
  private cut = () => {};

  /** Stops accepting on the listeners; their connections finish or are cut by wait(). */
  close(listeners: readonly OpenListener[]): void {
    this.cut = () => listeners.forEach((l) => l.closeAllConnections());
    this.closing = Promise.all(listeners.map((l) => l.close()));
  }

  async wait(graceMs: number): Promise<void> {
    const timer = setTimeout(this.cut, graceMs);
    try {
      await this.closing;
    } finally {
      clearTimeout(timer);
    }
  }
}
