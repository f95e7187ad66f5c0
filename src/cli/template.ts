// `--format` templates: the Go-template subset of wire/go-template.ts (the daemon's too) with plain
// objects read as maps, as the docker CLI reads API answers decoded from JSON, plus the docker CLI's
// own functions (json, join, upper, lower, title, pad, truncate, split) and the `table` prefix
// (header row from the field names, columns aligned by output.ts). `\t` and `\n` escapes become
// tabs and newlines as in the docker CLI.
import { GoTemplateError, parseGoTemplate, type TemplateFunc } from '../wire/go-template.ts';
import { ExitError } from './args.ts';
import { GoTypeNames, type GoType } from './go-types.ts';

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
  /**
   * One rendering and a newline, as `version`, `info` and `inspect` print it: when the execution
   * fails, what it wrote up to the failure and the newline still reach stdout before the error.
   */
  renderLine(dot: unknown, out: (s: string) => void): void;
  /** The header row of a table template: the template run over the titles, as the docker CLI does. */
  header(titles: Record<string, string>): string;
}

/**
 * How the docker CLI words a template's failure, by command: its formatters say "template parsing
 * error" for a parse and an execution alike; `ps` has words of its own; `version` and `info` print an
 * execution's error bare; `events` checks the template before it streams (eventsTemplate) and prints
 * a failure while streaming bare.
 */
export type TemplateErrors = 'formatter' | 'ps' | 'bare-exec' | 'events';
const PREFIXES: Record<TemplateErrors, [parse: string, exec: string]> = {
  formatter: ['template parsing error: ', 'template parsing error: '],
  ps: ['failed to parse template: ', 'failed to execute template: '],
  'bare-exec': ['template parsing error: ', ''],
  events: ['Error parsing format: ', ''],
};

const prefixed = (prefix: string, fn: () => string): string => {
  try {
    return fn();
  } catch (e) {
    if (e instanceof GoTemplateError && prefix) {
      const err = new GoTemplateError(`${prefix}${e.message}`);
      err.partial = e.partial;
      throw err;
    }
    throw e;
  }
};

/** How a command reads its --format (the docker CLI's defaults: a list's formatter). */
export interface CompileOptions {
  errors?: TemplateErrors;
  /** The template's name in errors (`version` names its own). */
  name?: string;
  /** Whether `table` starts a table (a list's formatter) or is text (version, info, inspect). */
  tables?: boolean;
  /** Objects are decoded JSON maps under missingkey=error (inspect), not structs; 'raw': no `ID` read as `Id`. */
  jsonMaps?: boolean | 'raw';
  /** The Go type the docker CLI runs the template over (named in errors), or one per rendered value. */
  type?: GoType | ((dot: unknown) => GoType | undefined);
}

/** Compiles a --format value. */
export function compile(format: string, options: CompileOptions = {}): Compiled {
  const { errors = 'formatter', name = '', tables = true } = options;
  const table = tables && /^table(\s|$)/.test(format);
  const body = (table ? format.replace(/^table\s*/, '') : format).replace(/\\t/g, '\t').replace(/\\n/g, '\n');
  const [parsePrefix, execPrefix] = PREFIXES[errors];
  const { type } = options;
  const names = type === undefined ? undefined : new GoTypeNames();
  let t: ReturnType<typeof parseGoTemplate> | undefined;
  prefixed(parsePrefix, () => {
    t = parseGoTemplate(name, body, FUNCS, {
      objects: 'map',
      missingKey: options.jsonMaps === 'raw' ? 'raw' : options.jsonMaps ? 'map' : 'field',
      typeName: names?.typeName,
    });
    return '';
  });
  const render = (dot: unknown) => {
    const goType = typeof type === 'function' ? type(dot) : type;
    if (names && goType !== undefined) names.mark(dot, goType);
    return prefixed(execPrefix, () => t!.execute(dot));
  };
  return {
    table,
    render,
    renderLine: (dot, out) => {
      let text: string;
      try {
        text = render(dot);
      } catch (e) {
        if (e instanceof GoTemplateError) out(`${e.partial ?? ''}\n`);
        throw e;
      }
      out(`${text}\n`);
    },
    header: (titles) =>
      // Plain field actions are replaced by their titles; a template with variables or blocks runs
      // over the titles, every field reading its title (an unknown one its name in capitals).
      /\{\{-?\s*(\$|if\b|with\b|range\b)/.test(body)
        ? render(
            new Proxy(titles, {
              has: () => true,
              get: (o, k) => (typeof k === 'string' ? (o[k] ?? k.toUpperCase()) : undefined),
            }),
          )
        : body.replace(/\{\{-?\s*\.(\w+)\s*-?\}\}/g, (_m, f: string) => titles[f] ?? f.toUpperCase()).replace(/\{\{[^}]*\}\}/g, ''),
  };
}

/**
 * `events --format`: as the docker CLI, the template is parsed and run once over an empty message
 * before anything is asked of the daemon; either failure is a usage error (status 64) worded
 * "Error parsing format: …".
 */
export function eventsTemplate(format: string, emptyMessage: unknown, type: GoType): Compiled {
  try {
    const t = compile(format, { errors: 'events', tables: false, type });
    t.render(emptyMessage);
    return t;
  } catch (e) {
    if (e instanceof GoTemplateError)
      throw new ExitError(64, e.message.startsWith(PREFIXES.events[0]) ? e.message : `${PREFIXES.events[0]}${e.message}`);
    throw e;
  }
}

/**
 * The --format of `version`, `info` and `inspect`, read before the daemon is asked: a template that
 * does not parse is a usage error (status 64), as in the docker CLI.
 */
export function usageTemplate(format: string, options: CompileOptions = {}): Compiled {
  try {
    return compile(format, { errors: 'bare-exec', tables: false, ...options });
  } catch (e) {
    if (e instanceof GoTemplateError) throw new ExitError(64, e.message);
    throw e;
  }
}
