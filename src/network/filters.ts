// The `filters` of GET /networks and POST /networks/prune.
import { boolFilterValue, labelMatches, regexFilter } from '../util/filters.ts';
import { parseTimeValue } from '../util/time.ts';
import { invalidParameter } from '../errors.ts';
import type { NetworkRecord } from './records.ts';

export interface FilterContext {
  inUse(net: NetworkRecord): boolean;
}

export function compileListFilters(filters: Map<string, string[]>, ctx: FilterContext): (n: NetworkRecord) => boolean {
  const preds: Array<(n: NetworkRecord) => boolean> = [];
  for (const [name, values] of filters) {
    if (values.length === 0) continue;
    switch (name) {
      case 'driver':
        preds.push((n) => values.includes(n.Driver));
        break;
      case 'id':
        preds.push((n) => values.some((v) => n.Id.startsWith(v)));
        break;
      case 'name': {
        // dockerd's filters.Match: the name itself, or a Go regular expression found in it.
        const res = values.map((v) => regexFilter(v));
        preds.push((n) => res.some((re) => re.test(n.Name)));
        break;
      }
      case 'label':
        preds.push((n) => values.every((v) => labelMatches(n.Labels, v)));
        break;
      case 'scope':
        for (const v of values) if (!['local', 'swarm', 'global'].includes(v)) throw invalidParameter(`invalid filter 'scope=${v}'`);
        preds.push((n) => values.includes(n.Scope));
        break;
      case 'type':
        for (const v of values) if (v !== 'custom' && v !== 'builtin') throw invalidParameter(`invalid filter: 'type'='${v}'`);
        preds.push((n) => values.includes(n.x.predefined ? 'builtin' : 'custom'));
        break;
      case 'dangling': {
        if (values.length > 1) throw invalidParameter(`got more than one value for filter key "dangling"`);
        const want = boolFilterValue('dangling', values[0]!);
        // Predefined networks never count as dangling.
        preds.push((n) => (!n.x.predefined && !ctx.inUse(n)) === want);
        break;
      }
      default:
        throw invalidParameter(`invalid filter '${name}'`);
    }
  }
  return (n) => preds.every((p) => p(n));
}

/** `until` accepts Unix seconds (with fractions), RFC 3339 dates, or Go-style durations before now. */
export function parseUntil(v: string, now = Date.now()): number {
  const ns = parseTimeValue(v, now);
  if (ns === undefined) throw invalidParameter(`failed to parse value as time or duration: "${v}"`);
  return Number(ns) / 1e6;
}

export function compilePruneFilters(filters: Map<string, string[]>): (n: NetworkRecord) => boolean {
  const preds: Array<(n: NetworkRecord) => boolean> = [];
  for (const [name, values] of filters) {
    if (values.length === 0) continue;
    switch (name) {
      case 'until': {
        const limits = values.map((v) => parseUntil(v));
        preds.push((n) => limits.some((t) => Date.parse(n.Created) < t));
        break;
      }
      case 'label':
        preds.push((n) => values.every((v) => labelMatches(n.Labels, v)));
        break;
      case 'label!':
        preds.push((n) => !values.some((v) => labelMatches(n.Labels, v)));
        break;
      default:
        throw invalidParameter(`invalid filter '${name}'`);
    }
  }
  return (n) => preds.every((p) => p(n));
}
