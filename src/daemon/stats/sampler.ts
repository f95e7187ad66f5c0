// The one stats sampler of the daemon. A single timer reads, once a second, every container that
// has at least one open stats request (and, for a few more ticks, ones that just had one, so a
// repeated `docker stats --no-stream` answers at once), and fans each reading out to all of that
// container's requests. 100 `docker stats` streams cost 100 cgroup readings a second from files
// kept open, in a few batches that share a /proc/stat read — no gRPC round trip through containerd
// and a shim per container per second, as dockerd makes.
//
// precpu_stats is never empty for a running container: a request's first frame pairs a reading
// with an earlier one of the same container (the cached one from the last tick, or one taken when
// the request arrived), at least `minGapMs` apart so the CLI's CPU % has a usable interval.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { DirCache, SampleTarget, SystemCpu } from './collector.ts';
import { emptyFrame, encodeStats, statsFrame, type Sample } from './wire.ts';

export interface ContainerFacts {
  id: string;
  /** With the leading slash. */
  name: string;
  pid: number;
  running: boolean;
  restarting: boolean;
  /** Whether its network namespace's interfaces are reported (not for host networking / NetworkDisabled). */
  networks: boolean;
}

export interface StatsSink {
  /** One frame, JSON text without the newline. Sinks that cannot keep up drop frames; nothing queues. */
  send(text: string): void;
  /** No more frames: the request is answered (stream=false) or the container is gone. */
  end(): void;
}

export interface SampleSource {
  systemCpu(): SystemCpu | undefined;
  sample(target: SampleTarget, sys: SystemCpu | undefined, cache: DirCache): Sample | undefined;
  /** Lets go of what a container's cache holds (open files) once it is not read any more. */
  release?(cache: DirCache): void;
}

export interface SamplerOptions {
  source: SampleSource;
  /** The container by full ID, or undefined once it is removed. */
  facts(id: string): ContainerFacts | undefined;
  intervalMs?: number;
  /** Smallest spacing between a frame's reading and its precpu reading. */
  minGapMs?: number;
  /** Ticks a container stays sampled after its last request ended. */
  lingerTicks?: number;
  /** Containers read between two yields to the event loop. */
  batchSize?: number;
}

interface Subscriber {
  stream: boolean;
  sink: StatsSink;
  prev?: Sample | undefined;
  done: boolean;
}

interface Entry {
  id: string;
  subs: Set<Subscriber>;
  last?: Sample | undefined;
  /** The reading before `last` (a tick earlier). */
  older?: Sample | undefined;
  cache: DirCache;
  idleTicks: number;
}

export interface SamplerCounters {
  ticks: number;
  /** Container readings taken (ticks and request-time readings). */
  samples: number;
  /** /proc/stat readings. */
  systemReads: number;
  entries: number;
  subscribers: number;
}

export class StatsSampler {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private closed = false;
  private readonly intervalMs: number;
  private readonly minGapMs: number;
  private readonly lingerTicks: number;
  private readonly batchSize: number;
  private readonly counters = { ticks: 0, samples: 0, systemReads: 0 };

  constructor(private readonly o: SamplerOptions) {
    this.intervalMs = o.intervalMs ?? 1000;
    this.minGapMs = o.minGapMs ?? 300;
    this.lingerTicks = o.lingerTicks ?? 3;
    this.batchSize = o.batchSize ?? 32;
  }

  /** Follows a container; frames go to `sink` from the next tick on (or at once, see above). Returns the unsubscribe. */
  subscribe(facts: ContainerFacts, stream: boolean, sink: StatsSink): () => void {
    if (this.closed) {
      setImmediate(() => sink.end());
      return () => undefined;
    }
    let e = this.entries.get(facts.id);
    if (!e) {
      e = { id: facts.id, subs: new Set(), cache: {}, idleTicks: 0 };
      this.entries.set(facts.id, e);
    }
    const entry = e;
    const sub: Subscriber = { stream, sink, done: false };
    entry.subs.add(sub);
    if (facts.running && !facts.restarting) {
      // A followed container answers at once: a reading now, paired with the newest cached one
      // that is old enough.
      const now = performance.now();
      const base = [entry.last, entry.older].find((s) => s && now - s.mono >= this.minGapMs);
      if (base) {
        const fresh = this.readOne(entry, facts, this.systemCpu());
        if (fresh) {
          const text = encodeStats(statsFrame(facts, fresh, base));
          sub.prev = fresh;
          setImmediate(() => this.deliver(entry, sub, text));
        }
      } else if (entry.last) {
        sub.prev = entry.last;
      } else {
        entry.last = this.readOne(entry, facts, this.systemCpu());
        sub.prev = entry.last;
      }
    }
    this.ensureTimer();
    return () => {
      sub.done = true;
      entry.subs.delete(sub);
    };
  }

  /** One reading now, outside the ticks (one-shot requests). */
  sampleNow(facts: ContainerFacts): Sample | undefined {
    const followed = this.entries.get(facts.id);
    const e = followed ?? { id: facts.id, subs: new Set<Subscriber>(), cache: {}, idleTicks: 0 };
    const s = this.readOne(e, facts, this.systemCpu());
    if (!followed) this.o.source.release?.(e.cache);
    return s;
  }

  snapshot(): SamplerCounters {
    let subscribers = 0;
    for (const e of this.entries.values()) subscribers += e.subs.size;
    return { ...this.counters, entries: this.entries.size, subscribers };
  }

  /** Ends every open request (daemon shutdown). */
  close(): void {
    this.closed = true;
    this.stopTimer();
    for (const e of this.entries.values()) {
      for (const sub of [...e.subs]) this.finish(e, sub);
      this.o.source.release?.(e.cache);
    }
    this.entries.clear();
  }

  private systemCpu(): SystemCpu | undefined {
    this.counters.systemReads++;
    return this.o.source.systemCpu();
  }

  private readOne(e: Entry, facts: ContainerFacts, sys: SystemCpu | undefined): Sample | undefined {
    if (!facts.running || facts.restarting) return undefined;
    this.counters.samples++;
    try {
      return this.o.source.sample({ pid: facts.pid, networks: facts.networks }, sys, e.cache);
    } catch {
      // the process exited while sampled: no sample this round
      return undefined;
    }
  }

  private deliver(e: Entry, sub: Subscriber, text: string): void {
    if (sub.done) return;
    sub.sink.send(text);
    if (!sub.stream) this.finish(e, sub);
  }

  private finish(e: Entry, sub: Subscriber): void {
    if (sub.done) return;
    sub.done = true;
    e.subs.delete(sub);
    sub.sink.end();
  }

  private drop(e: Entry): void {
    this.entries.delete(e.id);
    this.o.source.release?.(e.cache);
  }

  private ensureTimer(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round over all followed containers, in batches that each share one /proc/stat reading. */
  async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      this.counters.ticks++;
      const list = [...this.entries.values()];
      for (let i = 0; i < list.length; i += this.batchSize) {
        if (i > 0) await yieldToLoop();
        if (this.closed) return;
        const sys = this.systemCpu();
        for (const e of list.slice(i, i + this.batchSize)) this.visit(e, sys);
      }
      if (this.entries.size === 0) this.stopTimer();
    } finally {
      this.ticking = false;
    }
  }

  private visit(e: Entry, sys: SystemCpu | undefined): void {
    if (this.entries.get(e.id) !== e) return;
    if (e.subs.size === 0) {
      if (++e.idleTicks > this.lingerTicks) {
        this.drop(e);
        return;
      }
    } else {
      e.idleTicks = 0;
    }
    const facts = this.o.facts(e.id);
    if (!facts) {
      // Removed: its streams end (as dockerd's do on container removal).
      for (const sub of [...e.subs]) this.finish(e, sub);
      this.drop(e);
      return;
    }
    const s = this.readOne(e, facts, sys);
    e.older = s ? e.last : undefined;
    e.last = s;
    if (!s) {
      this.o.source.release?.(e.cache);
      // Not running (or just stopped): dockerd keeps streaming name and id with zero values.
      if (e.subs.size === 0) return;
      const text = encodeStats(emptyFrame(facts));
      for (const sub of [...e.subs]) {
        sub.prev = undefined;
        this.deliver(e, sub, text);
      }
      return;
    }
    // Subscribers that share a predecessor get the same bytes: encode once per distinct one.
    const encoded = new Map<Sample, string>();
    for (const sub of [...e.subs]) {
      const prev = sub.prev;
      if (!prev) {
        sub.prev = s; // (re)started while followed: this reading becomes the next frame's precpu
        continue;
      }
      if (s.mono - prev.mono < this.minGapMs) continue;
      let text = encoded.get(prev);
      if (text === undefined) {
        text = encodeStats(statsFrame(facts, s, prev));
        encoded.set(prev, text);
      }
      sub.prev = s;
      this.deliver(e, sub, text);
    }
  }
}
