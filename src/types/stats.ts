// Docker Engine API wire types for GET /containers/{id}/stats: the query's options and where the
// JSON frames go.

export interface StatsOptions {
  stream: boolean;
  oneShot: boolean;
}

export interface StatsSink {
  send(text: string): void;
  end(): void;
}
