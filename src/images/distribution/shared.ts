// Concurrency helpers for transfers: a counting semaphore (max-concurrent-downloads/uploads) that
// tells the caller when it has to wait, and a table of running operations that identical requests
// join (two `docker pull busybox` at once do the work once; both see the same progress).
import type { JsonMessage, ProgressSink } from '../../types/distribution.ts';

export class Semaphore {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limit: () => number) {}

  /** Resolves with a release function; calls onWait first when no slot is free right now. */
  async acquire(onWait?: () => void, signal?: AbortSignal): Promise<() => void> {
    if (this.active >= Math.max(1, this.limit())) {
      onWait?.();
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', cancel);
          resolve();
        };
        const cancel = () => {
          const i = this.queue.indexOf(go);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal!.reason ?? new Error('aborted'));
        };
        if (signal?.aborted) return cancel();
        signal?.addEventListener('abort', cancel, { once: true });
        this.queue.push(go);
      });
    }
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      if (this.active < Math.max(1, this.limit())) this.queue.shift()?.();
    };
  }
}

interface Running<R> {
  /** Messages so far, byte-progress updates collapsed to the latest per item. */
  history: JsonMessage[];
  sinks: Set<ProgressSink>;
  abort: AbortController;
  result: Promise<R>;
}

const isByteProgress = (m: JsonMessage) => m.progressDetail?.total !== undefined && !!m.id;

/** Operations keyed by what they do; a second identical request joins the first one. */
export class SharedOperations<R> {
  private readonly running = new Map<string, Running<R>>();

  get size(): number {
    return this.running.size;
  }

  /**
   * Runs `start` unless an operation with this key is running, in which case the caller joins it:
   * it first receives the progress so far, then live updates. The operation is cancelled when every
   * caller has gone (its `signal` aborted).
   */
  run(
    key: string,
    sink: ProgressSink,
    signal: AbortSignal | undefined,
    start: (sink: ProgressSink, signal: AbortSignal) => Promise<R>,
  ): Promise<R> {
    let op = this.running.get(key);
    // One whose callers all left is being cancelled: start afresh rather than join its failure.
    if (op?.abort.signal.aborted) op = undefined;
    if (!op) {
      const created: Running<R> = {
        history: [],
        sinks: new Set([sink]),
        abort: new AbortController(),
        result: undefined as unknown as Promise<R>,
      };
      const broadcast: ProgressSink = (m) => {
        const last = created.history[created.history.length - 1];
        if (isByteProgress(m) && last && isByteProgress(last) && last.id === m.id && last.status === m.status)
          created.history[created.history.length - 1] = m;
        else created.history.push(m);
        for (const s of created.sinks) s(m);
      };
      created.result = (async () => {
        try {
          return await start(broadcast, created.abort.signal);
        } finally {
          if (this.running.get(key) === created) this.running.delete(key);
        }
      })();
      this.running.set(key, created);
      op = created;
    } else {
      for (const m of op.history) sink(m);
    }
    const joined = op;
    joined.sinks.add(sink);
    const leave = () => {
      joined.sinks.delete(sink);
      if (joined.sinks.size === 0) joined.abort.abort(new Error('context canceled'));
    };
    if (signal?.aborted) leave();
    else signal?.addEventListener('abort', leave, { once: true });
    return joined.result.finally(() => {
      signal?.removeEventListener('abort', leave);
      joined.sinks.delete(sink);
    });
  }
}
