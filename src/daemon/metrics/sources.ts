// What the metrics read from the rest of the daemon: its info labels, the containers and their
// stats samples, and the event stream.
import type { EngineEvent } from '../../types/events.ts';
import type { Sample } from '../stats/wire.ts';

export interface MetricsContainer {
  id: string;
  /** Without the leading slash. */
  name: string;
  state: 'running' | 'paused' | 'stopped';
}

export interface MetricsSources {
  info: Record<string, string>;
  containers(): MetricsContainer[];
  /** A reading of a running container's counters, or undefined. */
  sample(id: string): Sample | undefined;
  subscribeEvents(fn: (ev: EngineEvent) => void): () => void;
}
