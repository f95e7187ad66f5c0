// Who waits on a container's exits and removal (POST /containers/{id}/wait, stop, kill): each waiter
// names a condition and is resolved by the first notification that includes it.
import type { WaitCondition } from '../../../types/container-api.ts';

export interface WaitResult {
  StatusCode: number;
  Error: { Message: string } | null;
}

interface Waiter {
  condition: WaitCondition;
  resolve: (r: WaitResult) => void;
}

export class ExitWaiters {
  private readonly byId = new Map<string, Waiter[]>();

  /** Resolves at the next notification of `id` that includes `condition`. */
  next(id: string, condition: WaitCondition): Promise<WaitResult> {
    return new Promise((resolve) => {
      const list = this.byId.get(id) ?? [];
      list.push({ condition, resolve });
      this.byId.set(id, list);
    });
  }

  /** Resolves once the next exit of `id` has been processed (state recorded, restart decided). */
  nextExit(id: string): Promise<void> {
    return this.next(id, 'next-exit').then(() => undefined);
  }

  /** Resolves (and forgets) every waiter of `id` whose condition is among `conditions`. */
  notify(id: string, conditions: WaitCondition[], result: WaitResult): void {
    const list = this.byId.get(id);
    if (!list) return;
    const keep = list.filter((w) => {
      if (!conditions.includes(w.condition)) return true;
      w.resolve(result);
      return false;
    });
    if (keep.length) this.byId.set(id, keep);
    else this.byId.delete(id);
  }

  /** How many waiters `id` has (tests, diagnostics). */
  count(id: string): number {
    return this.byId.get(id)?.length ?? 0;
  }
}
