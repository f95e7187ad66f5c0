// The matching rules every `filters` query parameter shares, as dockerd applies them: which filter
// names an endpoint takes, "key" / "key=value" label tests, boolean values (Go's ParseBool), and
// the unanchored regular expressions of name filters. Each resource's filter module maps its own
// filter names onto these.
import { invalidParameter } from '../errors.ts';

/** A 400 for a filter name the endpoint does not take (dockerd's "invalid filter 'x'"). */
export function checkFilterNames(filters: Map<string, string[]>, allowed: readonly string[]): void {
  for (const k of filters.keys()) if (!allowed.includes(k)) throw invalidParameter(`invalid filter '${k}'`);
}

/** "key" holds when the label is set (any value); "key=value" when it is set to exactly value. */
export function labelMatches(labels: Record<string, string> | null | undefined, spec: string): boolean {
  if (!labels) return false;
  const eq = spec.indexOf('=');
  const key = eq < 0 ? spec : spec.slice(0, eq);
  if (!Object.hasOwn(labels, key)) return false;
  return eq < 0 || labels[key] === spec.slice(eq + 1);
}

/** Every spec holds (values of `label` are AND-ed, unlike other filters). */
export function allLabelsMatch(labels: Record<string, string> | null | undefined, specs: readonly string[]): boolean {
  return specs.every((s) => labelMatches(labels, s));
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A boolean filter value as Go's strconv.ParseBool reads it; a 400 naming the filter otherwise. */
export function boolFilterValue(name: string, value: string): boolean {
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw invalidParameter(`invalid filter '${name}=${value}'`);
}

/** The last value of a boolean filter (what dockerd's list endpoints use), or undefined if absent. */
export function lastBoolFilter(name: string, values: readonly string[] | undefined): boolean | undefined {
  const v = values?.at(-1);
  return v === undefined ? undefined : boolFilterValue(name, v);
}

/** An unanchored regular expression test (`name=` filters); text that is no valid expression is a 400. */
export function regexFilter(name: string, pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch {
    throw invalidParameter(`invalid filter '${name}=${pattern}': not a valid regular expression`);
  }
}
