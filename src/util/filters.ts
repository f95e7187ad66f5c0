// The matching rules every `filters` query parameter shares, as dockerd applies them: which filter
// names an endpoint takes, "key" / "key=value" label tests, boolean values (Go's ParseBool), and
// the unanchored regular expressions of name filters (Go's RE2 syntax, never JavaScript's RegExp). Each resource's filter module maps its own
// filter names onto these.
import { invalidParameter } from '../errors.ts';
import { Re2 } from './re2.ts';

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

/**
 * A `name=` filter value as dockerd's filters.Args.Match applies it: the value itself, or an
 * unanchored regular expression in Go's syntax (RE2, matched in linear time). A value that is no
 * valid expression matches only itself, as in dockerd (its regexp error is skipped, not answered).
 */
export function regexFilter(pattern: string): { test(s: string): boolean } {
  const re = Re2.tryCompile(pattern);
  return { test: (s) => s === pattern || (re?.test(s) ?? false) };
}
