// `--format` templates: the Go-template subset of wire/go-template.ts (the daemon's too) with plain
// objects read as maps, as the docker CLI reads API answers decoded from JSON, plus the docker CLI's
// own functions (json, join, upper, lower, title, pad, truncate, split) and the `table` prefix
// (header row from the field names, columns aligned by output.ts). `\t` and `\n` escapes become
// tabs and newlines as in the docker CLI.
import { GoTemplateError, parseGoTemplate, type TemplateFunc } from '../wire/go-template.ts';

/** A template that failed to parse or run (Go's wording). */
export const TemplateError = GoTemplateError;

const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** The docker CLI's template functions (cli/templates), beside Go's builtins. */
const FUNCS: Record<string, TemplateFunc> = {
  json: (v) => JSON.stringify(v ?? null),
  join: (list, sep) => ((list as unknown[] | null | undefined) ?? []).map(String).join(str(sep)),
  upper: (v) => str(v).toUpperCase(),
  lower: (v) => str(v).toLowerCase(),
  title: (v) => str(v).replace(/\b\w/g, (c) => c.toUpperCase()),
  pad: (v, left, right) => `${' '.repeat(Number(left ?? 0))}${str(v)}${' '.repeat(Number(right ?? 0))}`,
  truncate: (v, n) => str(v).slice(0, Number(n)),
  split: (v, sep) => str(v).split(str(sep)),
};

export interface Compiled {
  /** `table …`: render a header row and align the columns. */
  table: boolean;
  render(dot: unknown): string;
  /** The header row of a table template: each {{.Field}} replaced by its title. */
  header(titles: Record<string, string>): string;
}

/** Compiles a --format value. */
export function compile(format: string): Compiled {
  const table = /^table(\s|$)/.test(format);
  const body = (table ? format.replace(/^table\s*/, '') : format).replace(/\\t/g, '\t').replace(/\\n/g, '\n');
  const t = parseGoTemplate('', body, FUNCS, { objects: 'map' });
  return {
    table,
    render: (dot) => t.execute(dot),
    header: (titles) =>
      body.replace(/\{\{-?\s*\.(\w+)\s*-?\}\}/g, (_m, f: string) => titles[f] ?? f.toUpperCase()).replace(/\{\{[^}]*\}\}/g, ''),
  };
}
