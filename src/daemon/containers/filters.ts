// `docker ps` filters: id, name, label, status, exited, ancestor, before, since, health, volume,
// network. Each filter name maps to a predicate; values of one name are OR-ed, names AND-ed.
import { allLabelsMatch, labelMatches, regexFilter } from '../../util/filters.ts';
import { parseTimeValue } from '../../util/time.ts';
import { invalidParameter } from '../../errors.ts';
import type { ContainerRecord } from './record.ts';

const STATUSES = ['created', 'restarting', 'running', 'removing', 'paused', 'exited', 'dead'];
const HEALTH = ['starting', 'healthy', 'unhealthy', 'none'];

export interface FilterContext {
  /** Resolves a container reference (for before/since) to its record, or throws 404. */
  resolve(ref: string): ContainerRecord;
  /** Image IDs an `ancestor` value stands for (the image and its descendants). */
  ancestorImageIds(ref: string): Set<string>;
  /** Network names and IDs the container is attached to. */
  networksOf(rec: ContainerRecord): string[];
}

export function compileFilters(filters: Map<string, string[]>, ctx: FilterContext): (rec: ContainerRecord) => boolean {
  const preds: Array<(r: ContainerRecord) => boolean> = [];
  for (const [name, values] of filters) {
    if (values.length === 0) continue;
    switch (name) {
      case 'id':
        preds.push((r) => values.some((v) => r.Id.startsWith(v)));
        break;
      case 'name':
        // dockerd matches names as regular expressions against "/name" and against "name".
        {
          const res = values.map((v) => regexFilter(v));
          preds.push((r) => res.some((re) => re.test(r.Name) || re.test(r.Name.slice(1))));
        }
        break;
      case 'label':
        preds.push((r) => values.every((v) => labelMatches(r.Config.Labels, v)));
        break;
      case 'status':
        for (const v of values) if (!STATUSES.includes(v)) throw invalidParameter(`invalid filter 'status=${v}'`);
        preds.push((r) => values.includes(r.State.Status));
        break;
      case 'exited': {
        const codes = values.map((v) => {
          const n = Number(v);
          if (!Number.isInteger(n)) throw invalidParameter(`invalid filter 'exited=${v}'`);
          return n;
        });
        preds.push((r) => r.State.Status === 'exited' && codes.includes(r.State.ExitCode));
        break;
      }
      case 'ancestor': {
        const ids = new Set<string>();
        for (const v of values) for (const id of ctx.ancestorImageIds(v)) ids.add(id);
        preds.push((r) => ids.has(r.Image) || values.includes(r.ImageRef));
        break;
      }
      case 'before': {
        const refs = values.map((v) => ctx.resolve(v));
        preds.push((r) => refs.every((b) => r.Created < b.Created));
        break;
      }
      case 'since': {
        const refs = values.map((v) => ctx.resolve(v));
        preds.push((r) => refs.every((s) => r.Created > s.Created));
        break;
      }
      case 'health':
        for (const v of values) if (!HEALTH.includes(v)) throw invalidParameter(`Unrecognised filter value for health: ${v}`);
        preds.push((r) => values.includes(r.State.Health?.Status ?? 'none'));
        break;
      case 'volume':
        preds.push((r) =>
          r.Mounts.some((m) => values.includes(m.Name ?? '') || values.includes(m.Destination) || values.includes(m.Source)),
        );
        break;
      case 'network':
        preds.push((r) => {
          const nets = ctx.networksOf(r);
          return values.some((v) => nets.includes(v));
        });
        break;
      case 'is-task':
        preds.push(() => values.includes('false'));
        break;
      case 'expose':
      case 'publish':
        preds.push((r) => values.some((v) => Object.keys(r.Config.ExposedPorts ?? {}).some((p) => p === v || p.split('/')[0] === v)));
        break;
      default:
        throw invalidParameter(`invalid filter '${name}'`);
    }
  }
  return (rec) => preds.every((p) => p(rec));
}

/**
 * A point in time given the way dockerd's `until`/`since` filters accept it: a Go duration before
 * now ("10m", "1h30m"), an RFC 3339 date or date-time, or unix seconds with an optional fraction.
 * Returns milliseconds since the epoch.
 */
export function parseFilterTime(value: string, now = Date.now()): number {
  const ns = parseTimeValue(value, now);
  if (ns === undefined) throw invalidParameter(`failed to parse value as time or duration: "${value}"`);
  return Number(ns) / 1e6;
}

/** `POST /containers/prune` filters: label, label! and until only (others are a 400, as in dockerd). */
export function compilePruneFilters(filters: Map<string, string[]>, now = Date.now()): (rec: ContainerRecord) => boolean {
  for (const name of filters.keys()) if (!['label', 'label!', 'until'].includes(name)) throw invalidParameter(`invalid filter '${name}'`);
  const untilValues = filters.get('until') ?? [];
  if (untilValues.length > 1) throw invalidParameter('more than one until filter specified');
  const until = untilValues.length ? parseFilterTime(untilValues[0]!, now) : undefined;
  const want = filters.get('label') ?? [];
  const refuse = filters.get('label!') ?? [];
  return (rec) => {
    if (until !== undefined && Date.parse(rec.Created) > until) return false;
    if (want.length && !allLabelsMatch(rec.Config.Labels, want)) return false;
    if (refuse.length && allLabelsMatch(rec.Config.Labels, refuse)) return false;
    return true;
  };
}
