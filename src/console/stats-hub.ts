// Live stats for the page: one stream of `GET /containers/{id}/stats` per container that some view
// shows, shared by every view showing it and closed when the last one goes (a moment later, so a
// row scrolled out and back in keeps its stream). The stream is a websocket the console listener
// turns into that very GET (src/api/console-stats-ws.ts): websockets do not count against the six
// HTTP/1.1 connections a browser gives one origin. The table's sparklines take at most
// MAX_TABLE_STREAMS of them, for its visible running rows.
import { API } from './api.ts';
import { blockTotals, cpuPercent, memoryUsed, networkTotals, type StatsSample } from './format.ts';
import { JsonLines } from './streams.ts';

export const MAX_TABLE_STREAMS = 30;
const KEEP = 300; // samples kept: five minutes at one a second
const LINGER_MS = 1500;

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
  ws: WebSocket;
  linger?: ReturnType<typeof setTimeout>;
  last?: { t: number; rx: number; tx: number; read: number; write: number };
}

const feeds = new Map<string, Feed>();

function open(id: string): Feed {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${location.host}${API}/containers/${encodeURIComponent(id)}/stats?stream=1`);
  ws.binaryType = 'arraybuffer';
  const f: Feed = { points: [], users: new Set(), ws };
  const lines = new JsonLines<StatsSample>();
  const dec = new TextDecoder();
  ws.onmessage = (m) => {
    for (const s of lines.push(dec.decode(m.data as ArrayBuffer, { stream: true }))) add(f, s);
    for (const u of f.users) u();
  };
  // 4000 + status: the daemon refused (a container gone, an authorization plugin); 1000: the stream ended.
  ws.onclose = (e) => {
    if (e.code >= 4000) console.warn(`stats ${id}: ${e.code - 4000} ${e.reason}`);
    if (feeds.get(id) === f) feeds.delete(id);
  };
  return f;
}

function add(f: Feed, s: StatsSample): void {
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
}

export function watchStats(id: string, fn: () => void): () => void {
  let feed = feeds.get(id);
  if (!feed) feeds.set(id, (feed = open(id)));
  clearTimeout(feed.linger);
  feed.users.add(fn);
  const f = feed;
  return () => {
    f.users.delete(fn);
    if (f.users.size > 0) return;
    f.linger = setTimeout(() => {
      if (f.users.size > 0) return;
      f.ws.close();
      if (feeds.get(id) === f) feeds.delete(id);
    }, LINGER_MS);
  };
}

export function statsOf(id: string): Point[] {
  return feeds.get(id)?.points ?? [];
}
