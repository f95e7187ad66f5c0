// GET /events filters with dockerd's matching rules: every given key must match; values of one key
// are alternatives, except `label`, where every value must match. Names and IDs of containers,
// networks, volumes and the daemon match by prefix ("fuzzy"), as in dockerd; `event` matches
// exactly unless it names health_status/exec_create/exec_start, whose actions carry a suffix.
import { allLabelsMatch } from '../util/filters.ts';
import type { EngineEvent } from '../types/events.ts';
import { familiarRepository } from './names.ts';

export type EventFilter = (ev: EngineEvent) => boolean;

/** Actor types whose filter key matches Actor.ID or Attributes.name by prefix. */
const NAMED_TYPES = ['container', 'daemon', 'plugin', 'volume', 'network', 'service', 'node', 'secret', 'config'] as const;
const SUFFIXED_ACTIONS = new Set(['health_status', 'exec_create', 'exec_start']);

export function compileEventFilter(filters: Map<string, string[]>): EventFilter {
  const get = (k: string) => filters.get(k) ?? [];
  const has = (k: string) => filters.has(k) && get(k).length > 0;
  const exact = (k: string, v: string) => !has(k) || get(k).includes(v);
  const fuzzy = (k: string, v: string | undefined) => !has(k) || (v !== undefined && get(k).some((p) => v.startsWith(p)));
  const fuzzyEvents = get('event').some((v) => SUFFIXED_ACTIONS.has(v));

  return (ev) => {
    // Read only when a filter needs them: a replayed event's attributes are parsed on first read.
    const attrs = () => ev.Actor.Attributes;
    if (fuzzyEvents ? !fuzzy('event', ev.Action) : !exact('event', ev.Action)) return false;
    if (!exact('type', ev.Type)) return false;
    if (!exact('scope', ev.scope)) return false;
    for (const t of NAMED_TYPES) {
      if (has(t) && !(fuzzy(t, ev.Actor.ID) || fuzzy(t, attrs().name))) return false;
    }
    if (has('image')) {
      const name = ev.Type === 'image' ? attrs().name : attrs().image;
      const candidates = [ev.Actor.ID, name, stripTag(ev.Actor.ID), stripTag(name)];
      if (!candidates.some((c) => c !== undefined && get('image').includes(c))) return false;
    }
    if (has('label')) {
      if (!allLabelsMatch(attrs(), get('label'))) return false;
    }
    return true;
  };
}

function stripTag(ref: string | undefined): string | undefined {
  if (ref === undefined) return undefined;
  return familiarRepository(ref) ?? ref;
}
