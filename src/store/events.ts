// The persistent event log behind GET /events?since=…&until=…. Each append is written through (its
// own autocommit, or part of the caller's open transaction): there is no in-memory buffer, so an
// event the daemon has appended survives kill -9 exactly like any other committed write (WAL with
// synchronous=NORMAL: lost only on power loss, see database.ts). Measured ~40–60 µs per append
// (one commit each, no fsync), far more than the daemon's event rate needs; buffering in memory
// would lose buffered events on kill -9, so there is none. appendMany() writes a burst in one
// transaction (~4 µs per event); an append inside a caller's transaction commits with it.
//
// Retention: the newest maxEvents sequence numbers and nothing older than maxAgeMs; trimmed every
// trimEvery appends (and on open) with two indexed range deletes.

import type { EngineEvent } from '../types/events.ts';
import type { EngineDatabase } from './database.ts';

/** An event to append; time, timeNano and scope default to now and 'local'. */
export type EventInput = Omit<EngineEvent, 'time' | 'timeNano' | 'scope'> & {
  scope?: string;
  timeNano?: bigint;
};

export interface EventLogOptions {
  /** Keep at most this many of the newest events. Default 100,000. */
  maxEvents?: number;
  /** Drop events older than this. Default 7 days. */
  maxAgeMs?: number;
  /** Run retention every this many appends. Default 1,000. */
  trimEvery?: number;
  /** Clock in ns since the epoch (tests). */
  nowNano?: () => bigint;
}

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

const hrBase = process.hrtime.bigint();
const wallBaseNs = BigInt(Date.now()) * NS_PER_MS;

/** Wall-clock ns with sub-millisecond resolution (monotonic within the process). */
export function wallClockNanos(): bigint {
  return wallBaseNs + (process.hrtime.bigint() - hrBase);
}

/** dockerd's wire JSON for an event, with timeNano written as an exact integer. */
export function eventToJSON(ev: EngineEvent): string {
  const { timeNano, ...rest } = ev;
  const body = JSON.stringify(rest);
  return `${body.slice(0, -1)},"timeNano":${timeNano.toString()}}`;
}

const SQL = {
  insert: 'INSERT INTO events (time_nano, type, action, actor_id, attributes, scope) VALUES (?, ?, ?, ?, ?, ?)',
  page:
    'SELECT seq, time_nano, type, action, actor_id, attributes, scope FROM events ' +
    'WHERE seq > ? AND seq <= ? AND time_nano >= ? AND time_nano <= ? ORDER BY seq LIMIT ?',
  // The same rows' sizes: octet_length reads no overflow page, so this costs nothing for 4 MiB rows.
  pageSizes:
    'SELECT octet_length(attributes) AS n FROM events ' +
    'WHERE seq > ? AND seq <= ? AND time_nano >= ? AND time_nano <= ? ORDER BY seq LIMIT ?',
  lastSeq: "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
  count: 'SELECT count(*) AS n FROM events',
  trimSeq: 'DELETE FROM events WHERE seq <= ?',
  trimTime: 'DELETE FROM events WHERE time_nano < ?',
} as const;

const INT64_MAX = (1n << 63n) - 1n;

/** Rows per read of a replay, at most; fewer when they are larger than PAGE_BYTES together (one at least). */
const PAGE_ROWS = 256;
const PAGE_BYTES = 1024 * 1024;

/** The stored JSON text of a replayed event's attributes, keyed by its Actor object. */
const attributesText = new WeakMap<object, string>();

/**
 * An Actor whose attributes are already JSON text: a replayed event's (the stored text) or one a
 * publisher serialised in one pass. The text is what is stored and written; the map is built (or
 * parsed) only when something reads it (a live subscriber, a filter on labels). Parsing and
 * serialising again the attributes of a container with 50 000 labels held the event loop ~60 ms.
 */
export function actorWithText(ID: string, text: string, build?: () => Record<string, string>): EngineEvent['Actor'] {
  let built: Record<string, string> | undefined;
  const actor = {
    ID,
    get Attributes(): Record<string, string> {
      return (built ??= build ? build() : (JSON.parse(text) as Record<string, string>));
    },
    set Attributes(v: Record<string, string>) {
      built = v;
      attributesText.delete(actor);
    },
  };
  attributesText.set(actor, text);
  return actor;
}

/** The attributes as JSON text when the Actor carries them so (actorWithText), else undefined. */
export function storedAttributesText(actor: object): string | undefined {
  return attributesText.get(actor);
}

/**
 * One attribute out of stored attributes text without parsing it all. The text is JSON.stringify of
 * a flat string map, where `,"key":"` or `{"key":"` can only be a key: a quote inside a string is
 * always escaped.
 */
export function storedAttribute(text: string, key: string): string | undefined {
  const name = `${JSON.stringify(key)}:"`;
  let at = text.startsWith(`{${name}`) ? 1 : text.indexOf(`,${name}`) + 1;
  if (at <= 0) return undefined;
  at += name.length;
  let end = at;
  while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
  return JSON.parse(text.slice(at - 1, end + 1)) as string;
}

interface EventRow {
  seq: bigint;
  time_nano: bigint;
  type: string;
  action: string;
  actor_id: string;
  attributes: string;
  scope: string;
}

export class EventLog {
  private readonly db: EngineDatabase;
  private readonly maxEvents: number;
  private readonly maxAgeNs: bigint;
  private readonly trimEvery: number;
  private readonly nowNano: () => bigint;
  private sinceTrim = 0;

  constructor(db: EngineDatabase, opts: EventLogOptions = {}) {
    this.db = db;
    this.maxEvents = opts.maxEvents ?? 100_000;
    this.maxAgeNs = BigInt(opts.maxAgeMs ?? 7 * 24 * 3600 * 1000) * NS_PER_MS;
    this.trimEvery = opts.trimEvery ?? 1000;
    this.nowNano = opts.nowNano ?? wallClockNanos;
    // time_nano can exceed 2^53, which node:sqlite refuses to return as a number.
    this.db.statement(SQL.page).setReadBigInts(true);
    this.trim();
  }

  /** Writes one event and returns it with its time fields filled in. */
  append(input: EventInput): EngineEvent {
    const ev = this.complete(input);
    this.insert(ev);
    if (++this.sinceTrim >= this.trimEvery) this.trim();
    return ev;
  }

  /** Writes several events in one transaction (all or none). */
  appendMany(inputs: readonly EventInput[]): EngineEvent[] {
    const events = inputs.map((i) => this.complete(i));
    this.db.transaction(() => {
      for (const ev of events) this.insert(ev);
      this.sinceTrim += events.length;
      if (this.sinceTrim >= this.trimEvery) this.trim();
    });
    return events;
  }

  /** Events with sinceNano <= timeNano <= untilNano (inclusive, as dockerd), in append order. */
  since(sinceNano: bigint, untilNano?: bigint): EngineEvent[] {
    return [...this.replay(sinceNano, untilNano)];
  }

  /**
   * Like since(), read lazily a page at a time, so a caller can let other work run between events.
   * The set is fixed now: events appended after this call are not part of it, however late it is read.
   */
  replay(sinceNano: bigint, untilNano?: bigint): Iterable<EngineEvent> {
    const lastSeq = BigInt(this.lastSeq());
    const page = this.db.statement(SQL.page);
    const sizes = this.db.statement(SQL.pageSizes);
    const until = untilNano ?? INT64_MAX;
    return {
      *[Symbol.iterator]() {
        let after = 0n;
        for (;;) {
          // Sized ahead: a page of large rows (attributes of 4 MiB, each ~10 ms to read) is cut
          // short, so one read never holds the event loop for several of them.
          const lengths = sizes.all(after, lastSeq, sinceNano, until, PAGE_ROWS) as unknown as Array<{ n: number | bigint }>;
          let limit = 0;
          for (let bytes = 0; limit < lengths.length && (limit === 0 || bytes + Number(lengths[limit]!.n) <= PAGE_BYTES); limit++) {
            bytes += Number(lengths[limit]!.n);
          }
          if (limit === 0) return;
          const rows = page.all(after, lastSeq, sinceNano, until, limit) as unknown as EventRow[];
          for (const r of rows) {
            after = r.seq;
            yield {
              Type: r.type,
              Action: r.action,
              Actor: actorWithText(r.actor_id, r.attributes),
              scope: r.scope,
              time: Number(r.time_nano / NS_PER_S),
              timeNano: r.time_nano,
            };
          }
          if (rows.length < limit) return;
        }
      },
    };
  }

  /** The sequence number of the last event ever appended (0 if none); never decreases. */
  lastSeq(): number {
    const row = this.db.statement(SQL.lastSeq).get() as { seq: number } | undefined;
    return row ? Number(row.seq) : 0;
  }

  count(): number {
    return Number((this.db.statement(SQL.count).get() as { n: number }).n);
  }

  /** Applies retention now; returns how many events were dropped. */
  trim(): number {
    this.sinceTrim = 0;
    return this.db.transaction(() => {
      let dropped = 0;
      const keepFrom = this.lastSeq() - this.maxEvents;
      if (keepFrom > 0) dropped += Number(this.db.statement(SQL.trimSeq).run(keepFrom).changes);
      const cutoff = this.nowNano() - this.maxAgeNs;
      dropped += Number(this.db.statement(SQL.trimTime).run(cutoff).changes);
      return dropped;
    });
  }

  private complete(input: EventInput): EngineEvent {
    const timeNano = input.timeNano ?? this.nowNano();
    return {
      Type: input.Type,
      Action: input.Action,
      Actor:
        storedAttributesText(input.Actor) === undefined ? { ID: input.Actor.ID, Attributes: input.Actor.Attributes ?? {} } : input.Actor,
      scope: input.scope ?? 'local',
      time: Number(timeNano / NS_PER_S),
      timeNano,
    };
  }

  private insert(ev: EngineEvent): void {
    const attributes = storedAttributesText(ev.Actor) ?? JSON.stringify(ev.Actor.Attributes);
    this.db.statement(SQL.insert).run(ev.timeNano, ev.Type, ev.Action, ev.Actor.ID, attributes, ev.scope);
  }
}
