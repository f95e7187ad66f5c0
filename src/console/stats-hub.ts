// Live stats for the page: one GET /containers/{id}/stats stream per container that some view
// shows, shared by every view showing it and closed when the last one goes. A browser gives one
// origin six HTTP/1.1 connections (the events stream holds one), so the table's sparklines take
// at most MAX_TABLE_STREAMS streams, for the first visible running rows; a container's own page
// always gets its stream.
import { streamJson } from './api.ts';
import { blockTotals, cpuPercent, memoryUsed, networkTotals, type StatsSample } from './format.ts';

export const MAX_TABLE_STREAMS = 3;
const KEEP = 300; // samples kept: five minutes at one a second

export interface Point {
  t: number; // unix seconds
  cpu: number; // %
  mem: number; // bytes
  limit: number;
  rx: number; // bytes/s
  tx: number;
  read: number; // bytes/s
  write: number;
}

interface Feed {
  points: Point[];
  users: Set<() => void>;
  abort: AbortController;
  last?: { t: number; rx: number; tx: number; read: number; write: number };
}

const feeds = new Map<string, Feed>();

export function watchStats(id: string, fn: () => void): () => void {
  let feed = feeds.get(id);
  if (!feed) {
    const f: Feed = { points: [], users: new Set(), abort: new AbortController() };
    feed = f;
    feeds.set(id, f);
    streamJson<StatsSample>(
      'GET',
      `/containers/${id}/stats?stream=1`,
      (s) => {
        const t = s.read ? Date.parse(s.read) / 1000 : Date.now() / 1000;
        const net = networkTotals(s);
        const blk = blockTotals(s);
        const prev = f.last;
        const dt = prev ? Math.max(0.001, t - prev.t) : 1;
        f.points.push({
          t,
          cpu: cpuPercent(s),
          mem: memoryUsed(s),
          limit: s.memory_stats?.limit ?? 0,
          rx: prev ? Math.max(0, (net.rx - prev.rx) / dt) : 0,
          tx: prev ? Math.max(0, (net.tx - prev.tx) / dt) : 0,
          read: prev ? Math.max(0, (blk.read - prev.read) / dt) : 0,
          write: prev ? Math.max(0, (blk.write - prev.write) / dt) : 0,
        });
        f.last = { t, ...net, ...blk };
        if (f.points.length > KEEP) f.points.splice(0, f.points.length - KEEP);
        for (const u of f.users) u();
      },
      f.abort.signal,
    ).catch((err: Error) => console.warn(`stats ${id}:`, err.message));
  }
  feed.users.add(fn);
  return () => {
    feed.users.delete(fn);
    if (feed.users.size === 0) {
      feed.abort.abort();
      feeds.delete(id);
    }
  };
}

export function statsOf(id: string): Point[] {
  return feeds.get(id)?.points ?? [];
}
