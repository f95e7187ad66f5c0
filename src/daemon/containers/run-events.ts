// Container runs as other modules follow them: 'started' (also a task adopted after a daemon
// restart) and 'stopped' (the exit is recorded). The composition root creates this emitter first
// and hands it to the containers service, which emits, and to the exec service and the health
// monitor, which subscribe when they are built: so the containers service needs neither of them.
import type { Logger } from '../../util/log.ts';
import type { ContainerRecord } from './record.ts';

export type RunChange = 'started' | 'stopped';
export type RunListener = (rec: ContainerRecord, change: RunChange) => void;

export class ContainerRunEvents {
  private readonly listeners: RunListener[] = [];

  constructor(private readonly log?: Logger) {}

  /** Returns the unsubscribe. */
  subscribe(fn: RunListener): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /**
   * Synchronous, in subscription order: a listener may update the record in place (the health
   * monitor resets State.Health) before the caller persists it. A failing listener is logged and
   * does not keep the others from running.
   */
  emit(rec: ContainerRecord, change: RunChange): void {
    for (const fn of [...this.listeners]) {
      try {
        fn(rec, change);
      } catch (err) {
        this.log?.warn(`run listener failed: ${(err as Error).message}`, { id: rec.Id });
      }
    }
  }
}
