// The `filters` of GET /volumes (dangling, name, label, driver) and POST /volumes/prune (label,
// label!, all), with dockerd's matching rules: name is an unanchored regular expression, label is
// "key" or "key=value", dangling and all take true/false/1/0.
import { boolFilterValue, checkFilterNames, labelMatches, regexFilter } from '../../util/filters.ts';

export interface FilterableVolume {
  Name: string;
  Driver: string;
  Labels: Record<string, string> | null;
  /** Number of containers referencing it. */
  refs: number;
}

/** dockerd's filters.Args.Match: the name itself, or a Go regular expression found in it. */
function nameMatches(name: string, pattern: string): boolean {
  return regexFilter(pattern).test(name);
}

export function compileListFilters(filters: Map<string, string[]>): (v: FilterableVolume) => boolean {
  checkFilterNames(filters, ['dangling', 'name', 'label', 'driver']);
  const dangling = filters.get('dangling')?.map((v) => boolFilterValue('dangling', v));
  const names = filters.get('name') ?? [];
  const labels = filters.get('label') ?? [];
  const drivers = filters.get('driver') ?? [];
  return (v) => {
    if (dangling?.length && !dangling.some((d) => d === (v.refs === 0))) return false;
    if (names.length && !names.some((n) => nameMatches(v.Name, n))) return false;
    if (drivers.length && !drivers.includes(v.Driver)) return false;
    return labels.every((l) => labelMatches(v.Labels, l));
  };
}

/** Prune candidates: unused, anonymous unless all=true, and passing the label filters. */
export function compilePruneFilters(filters: Map<string, string[]>, anonymousLabel: string): (v: FilterableVolume) => boolean {
  checkFilterNames(filters, ['label', 'label!', 'all']);
  const all = (filters.get('all') ?? []).some((v) => boolFilterValue('all', v));
  const labels = filters.get('label') ?? [];
  const notLabels = filters.get('label!') ?? [];
  return (v) => {
    if (v.refs > 0) return false;
    if (!all && !(v.Labels && anonymousLabel in v.Labels)) return false;
    if (!labels.every((l) => labelMatches(v.Labels, l))) return false;
    return !notLabels.some((l) => labelMatches(v.Labels, l));
  };
}
