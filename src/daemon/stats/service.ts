// GET /containers/{id}/stats behind the route: dockerd's three modes on top of the shared sampler.
//   stream (default)         a frame per second until the container is removed or the client leaves;
//   stream=false             one frame whose precpu is a reading at least a moment older;
//   stream=false&one-shot    one reading at once, precpu and preread zero.
// A container that is not running answers stream=false with name, id and zeros (read = zero time).
import { invalidParameter } from '../../errors.ts';
import type { StatsOptions, StatsSink } from '../../types/stats.ts';
import { CgroupCollector } from './collector.ts';
import { StatsSampler, type ContainerFacts, type SampleSource, type SamplerCounters } from './sampler.ts';
import { emptyFrame, encodeStats, statsFrame, type Sample } from './wire.ts';

/** The container facts the stats need, as the container service knows them. */
export interface StatsContainers {
  /** By full ID, unique prefix or name; throws the 404 for unknown ones. */
  find(ref: string): ContainerFacts;
  /** By full ID; undefined once removed. */
  byId(id: string): ContainerFacts | undefined;
}

export interface StatsServiceOptions {
  containers: StatsContainers;
  source?: SampleSource;
  intervalMs?: number;
  minGapMs?: number;
}

export class StatsService {
  private readonly sampler: StatsSampler;

  constructor(private readonly o: StatsServiceOptions) {
    this.sampler = new StatsSampler({
      source: o.source ?? new CgroupCollector(),
      facts: (id) => o.containers.byId(id),
      ...(o.intervalMs !== undefined ? { intervalMs: o.intervalMs } : {}),
      ...(o.minGapMs !== undefined ? { minGapMs: o.minGapMs } : {}),
    });
  }

  open(ref: string, opts: StatsOptions, sink: StatsSink): () => void {
    const facts = this.o.containers.find(ref);
    if (opts.stream && opts.oneShot) throw invalidParameter('cannot have stream=true and one-shot=true');
    const live = facts.running && !facts.restarting;
    if (!opts.stream && (!live || opts.oneShot)) {
      const s = live ? this.sampler.sampleNow(facts) : undefined;
      const text = encodeStats(s ? statsFrame(facts, s, undefined) : emptyFrame(facts));
      let cancelled = false;
      // The route writes its headers after open() returns; frames never arrive before that.
      setImmediate(() => {
        if (cancelled) return;
        sink.send(text);
        sink.end();
      });
      return () => {
        cancelled = true;
      };
    }
    return this.sampler.subscribe(facts, opts.stream, sink);
  }

  /** One reading of a running container's counters now (metrics scrapes), or undefined. */
  sample(id: string): Sample | undefined {
    const facts = this.o.containers.byId(id);
    return facts && facts.running && !facts.restarting ? this.sampler.sampleNow(facts) : undefined;
  }

  counters(): SamplerCounters {
    return this.sampler.snapshot();
  }

  close(): void {
    this.sampler.close();
  }
}

/** ContainerFacts from a container record (State, HostConfig.NetworkMode, Config.NetworkDisabled). */
export function factsOf(rec: {
  Id: string;
  Name: string;
  State: { Pid: number; Running: boolean; Restarting: boolean };
  HostConfig: { NetworkMode?: string };
  Config: { NetworkDisabled?: boolean };
}): ContainerFacts {
  return {
    id: rec.Id,
    name: rec.Name,
    pid: rec.State.Pid,
    running: rec.State.Running,
    restarting: rec.State.Restarting,
    networks: rec.HostConfig.NetworkMode !== 'host' && rec.Config.NetworkDisabled !== true,
  };
}
