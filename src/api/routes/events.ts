// GET /events: stored events from `since` (up to `until`), then live ones as they happen, one JSON
// object per line, each written (and so flushed) on its own. An `until` in the past ends the
// stream after the replay; one in the future ends it then. Without since/until: live only.
import type { ServerResponse } from 'node:http';
import type { EngineEvent } from '../../types/events.ts';
import { invalidParameter } from '../../errors.ts';
import { compileEventFilter } from '../../events/filter.ts';
import { parseTimeValue } from '../../util/time.ts';
import { tryGoDuration } from '../../wire/go-duration.ts';
import type { Router } from '../router.ts';
import { versionLessThan } from '../../util/api-version.ts';
import { storedAttribute, storedAttributesText } from '../../store/events.ts';
import { yieldToLoop } from '../http.ts';

export interface EventsBackend {
  /** Stored events in [sinceNano, untilNano] in publish order: those stored at the call, read lazily. */
  history(sinceNano: bigint, untilNano?: bigint): Iterable<EngineEvent>;
  /** Live events; onClose when the source ends (daemon shutdown). Returns the unsubscribe. */
  subscribe(fn: (ev: EngineEvent) => void, onClose?: () => void): () => void;
}

/** A client that reads slower than events arrive is cut off past this much unsent output. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long the replay writes before other requests get a turn. */
const REPLAY_SLICE_MS = 10;
/** Past this much unsent replay, the replay waits for the client instead of cutting it off. */
const REPLAY_PENDING_BYTES = 1024 * 1024;

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.removeListener('drain', done);
      res.removeListener('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

const STREAM_TYPES = ['application/jsonl', 'application/x-ndjson', 'application/json-seq'] as const;

function negotiate(accept: string | undefined): string {
  const asked = (accept ?? '').split(',').map((a) => a.split(';')[0]!.trim().toLowerCase());
  return STREAM_TYPES.find((t) => asked.includes(t)) ?? 'application/json';
}

/**
 * One event as dockerd writes it. API < 1.52 also gets the fields deprecated in 1.22 (status, id
 * and, for containers, from): CLIs before 25.0 and compose still read them.
 */
export function eventLine(ev: EngineEvent, version: string): string {
  // A replayed event's attributes are written as stored, never parsed and serialised again.
  const stored = storedAttributesText(ev.Actor);
  const legacy: Record<string, string> = {};
  if (versionLessThan(version, '1.52') && (ev.Type === 'container' || ev.Type === 'image')) {
    legacy.status = ev.Action;
    legacy.id = ev.Actor.ID;
    if (ev.Type === 'container') legacy.from = (stored === undefined ? ev.Actor.Attributes.image : storedAttribute(stored, 'image')) ?? '';
  }
  const actor = stored === undefined ? JSON.stringify(ev.Actor) : `{"ID":${JSON.stringify(ev.Actor.ID)},"Attributes":${stored}}`;
  const head = JSON.stringify({ ...legacy, Type: ev.Type, Action: ev.Action });
  // timeNano exceeds 2^53: written as an exact integer.
  return `${head.slice(0, -1)},"Actor":${actor},"scope":${JSON.stringify(ev.scope)},"time":${ev.time},"timeNano":${ev.timeNano.toString()}}`;
}

/**
 * `since`/`until` of GET /events in nanoseconds: unix seconds with an optional fraction (what the
 * docker CLI sends; "1.5" = 1.5 s) or an RFC 3339 date. Durations are the CLI's business (it turns
 * them into seconds), so the API refuses them as dockerd does.
 */
export function parseEventTime(value: string | undefined, name: string): bigint | undefined {
  if (value === undefined || value === '') return undefined;
  // "0" is unix time 0 (Go's ParseDuration would read it as a duration).
  const ns = value === '0' || tryGoDuration(value) === undefined ? parseTimeValue(value) : undefined;
  if (ns === undefined)
    throw invalidParameter(
      `invalid value for ${name}: ${JSON.stringify(value)}: want unix seconds (with an optional fraction) or an RFC 3339 date`,
    );
  return ns;
}

export function registerEventRoutes(router: Router, backend: EventsBackend): void {
  router.get('/events', async (ctx) => {
    const { query, res, req } = ctx;
    const since = parseEventTime(query.string('since'), 'since');
    const until = parseEventTime(query.string('until'), 'until');
    if (since !== undefined && until !== undefined && until < since) {
      throw invalidParameter(`\`since\` time (${query.string('since')}) cannot be after \`until\` time (${query.string('until')})`);
    }
    const match = compileEventFilter(query.filters());
    const contentType = negotiate(req.headers.accept);
    const prefix = contentType === 'application/json-seq' ? '\x1e' : '';
    const nowNano = BigInt(Date.now()) * 1_000_000n;
    const onlyPast = until !== undefined && until < nowNano;

    res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache' });
    res.flushHeaders();

    // Image create events exist from API 1.46.
    const noImageCreate = versionLessThan(ctx.version, '1.46');
    await new Promise<void>((resolve) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      let unsubscribe = () => {};
      const finish = () => {
        if (done) return;
        done = true;
        unsubscribe();
        clearTimeout(timer);
        if (!res.writableEnded) res.end();
        resolve();
      };
      const write = (ev: EngineEvent) => {
        if (done || !match(ev)) return;
        if (noImageCreate && ev.Type === 'image' && ev.Action === 'create') return;
        if (until !== undefined && ev.timeNano > until) return;
        if (res.writableLength > MAX_PENDING_BYTES) {
          res.destroy();
          finish();
          return;
        }
        res.write(`${prefix}${eventLine(ev, ctx.version)}\n`);
      };
      res.on('close', finish);
      // Subscribing and reading the history happen in one synchronous step: publishing is
      // synchronous too, so no event can fall between the replay and the live part, or be in both.
      // The replay is then written in slices with other requests served between them; live events
      // arriving meanwhile wait in `queued` and follow it in order.
      let queued: EngineEvent[] | undefined = [];
      if (!onlyPast) unsubscribe = backend.subscribe((ev) => (queued ? queued.push(ev) : write(ev)), finish);
      const past = since !== undefined || until !== undefined ? backend.history(since ?? 0n, until) : [];
      const replay = async () => {
        let sliceStart = performance.now();
        for (const ev of past) {
          if (done) return;
          write(ev);
          if (res.writableLength > REPLAY_PENDING_BYTES || performance.now() - sliceStart > REPLAY_SLICE_MS) {
            await (res.writableLength > REPLAY_PENDING_BYTES ? drainedOrClosed(res) : yieldToLoop());
            sliceStart = performance.now();
          }
        }
        for (const ev of queued!) write(ev);
        queued = undefined;
        if (onlyPast) finish();
        else if (until !== undefined) {
          // setTimeout takes at most ~24.8 days; a later `until` re-arms until it is reached.
          const arm = () => {
            const left = Number((until - BigInt(Date.now()) * 1_000_000n) / 1_000_000n) + 1;
            if (left <= 0) finish();
            else timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
          };
          arm();
        }
      };
      replay().catch(() => finish());
    });
  });
}
