// A subset of Go's text/template, the one implementation the daemon and the CLI share: text and
// {{actions}} with `{{-`/`-}}` trimming and comments; pipelines (`a | f`); fields (`.A.B`); string
// ("…", `…`), number and boolean literals; if/else if/else, range and with blocks (dot rebinds);
// variables: `{{$x := …}}` declares, `{{$x = …}}` assigns, `if`/`with`/`range` may declare
// (`range $v := …`, `range $k, $v := …`), `$` is the root; a variable lives to the `end` of the
// block that declared it, and one used outside its scope is refused at parse time as Go does;
// Go's builtins and, or, not, len, index, print, printf, println, eq, ne; functions supplied by
// the caller. Nesting is bounded. Errors read as Go's ("template: <name>:<line>:<col>: …").
//
// Two readings of plain objects (`objects`): 'struct' (the daemon: cluster mode's secret and config
// templating, as swarmkit's template package with Option("missingkey=error"); `Map`s are maps, a
// missing key is an error, a plain object prints as a struct `{a b}`) and 'map' (the CLI's
// `--format`, over API answers decoded from JSON as the docker CLI decodes them: objects print as
// `map[k:v]`, `range` walks their values in key order, `len` counts their keys, an empty one is
// false, and a field of a nil value is nil rather than an error). Values that carry their Go type
// (`GoValue`: structs, pointers, times…; `GoMap`: a typed map) read as Go's reflection reads them,
// under the default missingkey: the CLI's inspect of the objects the docker CLI decodes into structs.

export class GoTemplateError extends Error {
  override readonly name = 'GoTemplateError';
  /** An execution's output up to the failure (Go's template writes as it goes). */
  partial?: string;
}

export type TemplateFunc = (...args: unknown[]) => unknown;

/** A value that carries its Go type: a struct, a pointer, a time, a duration… */
export abstract class GoValue {
  /** The Go type errors name (`swarm.Service`, `*swarm.UpdateStatus`, `interface {}`). */
  abstract readonly goType: string;
  /** A field (or a method without arguments): its value, 'nil' when read through a nil pointer, undefined when there is none. */
  field(_name: string): { value: unknown } | 'nil' | undefined {
    return undefined;
  }
  /** A method that takes arguments (`{{.T.Format "2006"}}`): the function to call, undefined when there is none. */
  method(_name: string): ((...args: unknown[]) => unknown) | undefined {
    return undefined;
  }
  /** The Go type of a field, for errors on what it holds. */
  fieldType(_name: string): string | undefined {
    return undefined;
  }
  /** How fmt's %v prints it: at the top (a pointer's target) or nested in a struct, slice or map. */
  abstract print(nested: boolean): string;
  /** What `len` counts (a byte slice); undefined for a type it refuses. */
  length(): number | undefined {
    return undefined;
  }
  /** Go's truth: a struct is true, a nil pointer or a zero number false. */
  truth(): boolean {
    return true;
  }
}

/** A Go map of a known type: a missing key reads as nothing (`<no value>`), `index` gives the element's zero. */
export class GoMap extends Map<string, unknown> {
  constructor(
    entries: Iterable<[string, unknown]>,
    readonly goType: string,
    readonly zero: unknown,
    /** A nil map (prints as `map[]`, JSON null). */
    readonly nil = false,
  ) {
    super(entries);
  }
  toJSON(): unknown {
    return this.nil ? null : Object.fromEntries([...this.keys()].sort().map((k) => [k, this.get(k)]));
  }
}

/** `col` is the 1-based column of the action's `{{`; `at0` the 0-based one of its first word. */
type Tok = { text: string } | { action: string; line: number; col: number; at0: number };
/** A pipeline's leading `$a :=` (`decl`: the names it declares, two only in a range) or `$a =` (`assign`). */
interface Decl {
  decl?: string[];
  assign?: string;
}
type Node =
  | { t: 'text'; s: string }
  | ({ t: 'act'; pipe: string; at: string } & Decl)
  | ({ t: 'if' | 'with'; pipe: string; at: string; yes: Node[]; no: Node[] } & Decl)
  | ({ t: 'range'; pipe: string; at: string; body: Node[]; no: Node[] } & Decl);

/** Splits `$a := x`, `$a, $b := x` or `$a = x` into the names and the pipeline. */
function splitDecl(action: string): Decl & { pipe: string } {
  const m = /^\$(\w+)(?:\s*,\s*\$(\w+))?\s*(:?=)(?!=)\s*/.exec(action);
  if (!m) return { pipe: action };
  const pipe = action.slice(m[0].length);
  if (m[3] === '=') return m[2] === undefined ? { assign: m[1]!, pipe } : { pipe: action };
  return { decl: m[2] === undefined ? [m[1]!] : [m[1]!, m[2]], pipe };
}

/** The variables a pipeline reads (`$x`, `$x.F`, `$` as ''), string literals skipped. */
function usedVariables(pipe: string): string[] {
  const bare = pipe.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');
  return [...bare.matchAll(/\$(\w*)/g)].map((m) => m[1]!);
}

/** The functions a pipeline calls: its bare identifiers (not fields, variables or constants), string literals skipped. */
function usedFunctions(pipe: string): string[] {
  const bare = pipe.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`|'(?:[^'\\]|\\.)*'/g, '""');
  return [...bare.matchAll(/(?<![\w.$])[A-Za-z_]\w*/g)].map((m) => m[0]).filter((w) => w !== 'true' && w !== 'false' && w !== 'nil');
}

const MAX_DEPTH = 64;

export interface GoTemplate {
  execute(dot: unknown): string;
}

/** How plain objects read (see the header). */
export interface GoTemplateOptions {
  objects?: 'struct' | 'map';
  /**
   * With objects 'map', how a missing key of a plain object fails: 'field' as a Go struct's
   * ("can't evaluate field X"; the docker CLI's list rows are structs), 'map' as a decoded JSON map
   * under missingkey=error (`inspect`: "map has no entry for key"), reading `ID` as `Id` where the
   * Go type the map stands for has it; 'raw' the same without (a fallback after the Go type failed).
   */
  missingKey?: 'field' | 'map' | 'raw';
  /**
   * The Go type a failed field access names ("can't evaluate field X in type T"): given the value
   * and, when it was reached through a field, the value holding it and that field's name.
   */
  typeName?: (value: unknown, holder: unknown, key: string | undefined) => string | undefined;
}

/** Parses `src` (named `name` in errors) with the extra functions `funcs`. */
export function parseGoTemplate(
  name: string,
  src: string,
  funcs: Record<string, TemplateFunc> = {},
  options: GoTemplateOptions = {},
): GoTemplate {
  const fail = (where: string, msg: string) => new GoTemplateError(`template: ${name}:${where}: ${msg}`);
  const toks = lex(src, name);
  let k = 0;
  // The variables in scope while parsing (Go refuses an undefined one at parse time); '' is `$`.
  const scope: string[] = [''];
  /** Checks a pipeline's variables and declaration, and declares its names (the caller restores `scope`). */
  const declare = (action: string, line: number, range: boolean): Decl & { pipe: string } => {
    const d = splitDecl(action);
    for (const v of usedVariables(d.pipe)) if (!scope.includes(v)) throw fail(`${line}`, `undefined variable "$${v}"`);
    for (const fn of usedFunctions(d.pipe))
      if (!Object.hasOwn(BUILTINS, fn) && !Object.hasOwn(funcs, fn)) throw fail(`${line}`, `function "${fn}" not defined`);
    if (d.decl && d.decl.length > 1 && !range) throw fail(`${line}`, 'too many declarations in command');
    if (d.decl) scope.push(...d.decl);
    return d;
  };
  const block = (depth: number, stops: string[]): { nodes: Node[]; stop: string; rest: string } => {
    if (depth > MAX_DEPTH) throw new GoTemplateError(`template: ${name}: nesting deeper than ${MAX_DEPTH}`);
    const nodes: Node[] = [];
    while (k < toks.length) {
      const tk = toks[k++]!;
      if ('text' in tk) {
        if (tk.text) nodes.push({ t: 'text', s: tk.text });
        continue;
      }
      /** Where Go places a failure of the pipeline: its first command, or a field chain's second element. */
      const pipeAt = (pipe: string) => {
        const chain = /^(\$\w*|\.\w+)\./.exec(pipe);
        return `${tk.line}:${tk.at0 + tk.action.length - pipe.length + (chain ? chain[1]!.length : 0)}`;
      };
      const [word = '', ...restWords] = tk.action.split(/\s+/);
      const rest = tk.action.slice(word.length).trim();
      if (stops.includes(word)) return { nodes, stop: word, rest };
      if (word === 'if' || word === 'with' || word === 'range') {
        if (!rest) throw fail(`${tk.line}`, `missing value for ${word}`);
        // A block's variables (those its pipeline declares, those of its body) end at its {{end}}.
        const mark = scope.length;
        const d = declare(rest, tk.line, word === 'range');
        const body = block(depth + 1, ['else', 'end']);
        const no = body.stop === 'else' ? elseBranch(depth + 1, body.rest, tk) : [];
        scope.length = mark;
        if (word === 'range') nodes.push({ t: 'range', ...d, at: pipeAt(d.pipe), body: body.nodes, no });
        else nodes.push({ t: word, ...d, at: pipeAt(d.pipe), yes: body.nodes, no });
      } else if (word === 'end' || word === 'else') throw fail(`${tk.line}`, `unexpected {{${word}}}`);
      else if (restWords.length === 0 && word === '') throw fail(`${tk.line}`, 'missing value for command');
      else {
        const d = declare(tk.action, tk.line, false);
        nodes.push({ t: 'act', ...d, at: pipeAt(d.pipe) });
      }
    }
    if (stops.length) throw fail(`${src.split('\n').length}`, 'unexpected EOF');
    return { nodes, stop: '', rest: '' };
  };
  /** After {{else}} or {{else if x}}: the rest up to the block's {{end}} (shared by an else-if chain). */
  const elseBranch = (depth: number, rest: string, tk: { line: number; col: number }): Node[] => {
    if (depth > MAX_DEPTH) throw new GoTemplateError(`template: ${name}: nesting deeper than ${MAX_DEPTH}`);
    const mark = scope.length;
    if (!rest.startsWith('if ')) {
      const nodes = block(depth, ['end']).nodes;
      scope.length = mark;
      return nodes;
    }
    const d = declare(rest.slice(3).trim(), tk.line, false);
    const body = block(depth + 1, ['else', 'end']);
    const no = body.stop === 'else' ? elseBranch(depth + 1, body.rest, tk) : [];
    scope.length = mark;
    return [{ t: 'if', ...d, at: `${tk.line}:${tk.col}`, yes: body.nodes, no }];
  };
  const nodes = block(0, []).nodes;
  const ctx: Ctx = {
    funcs: { ...BUILTINS, ...funcs },
    name,
    maps: options.objects === 'map',
    jsonMaps: options.missingKey === 'map' || options.missingKey === 'raw',
    idAsId: options.missingKey === 'map',
    typeName: options.typeName,
    pipes: new Map(),
  };
  return {
    execute(dot: unknown): string {
      return withObjectsAsMaps(ctx.maps, () => render(nodes, dot, ctx, 0, [{ name: '', value: dot }]));
    },
  };
}

function lex(src: string, name: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let trimNext = false;
  /** A byte's 0-based column in its line. */
  const p0 = (at: number) => at - src.lastIndexOf('\n', at - 1) - 1;
  const position = (at: number) => {
    const before = src.slice(0, at);
    const line = before.split('\n').length;
    return { line, col: at - before.lastIndexOf('\n') };
  };
  while (i <= src.length) {
    const open = src.indexOf('{{', i);
    let text = src.slice(i, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    trimNext = false;
    if (open < 0) {
      out.push({ text });
      break;
    }
    let body = open + 2;
    if (/^- /.test(src.slice(body, body + 2)) || /^-\s/.test(src.slice(body, body + 2))) {
      text = text.replace(/\s+$/, '');
      body += 1;
    }
    out.push({ text });
    const close = src.indexOf('}}', body);
    if (close < 0) {
      const p = position(open);
      throw new GoTemplateError(`template: ${name}:${p.line}: unclosed action`);
    }
    let inner = src.slice(body, close);
    if (/\s-$/.test(inner)) {
      inner = inner.slice(0, -1);
      trimNext = true;
    }
    const at0 = p0(body + (inner.length - inner.trimStart().length));
    inner = inner.trim();
    const p = position(open);
    if (!(inner.startsWith('/*') && inner.endsWith('*/'))) out.push({ action: inner, line: p.line, col: p.col, at0 });
    i = close + 2;
  }
  return out;
}

const isMap = (v: unknown): v is Map<string, unknown> => v instanceof Map;

interface Ctx {
  /** Each pipeline split into commands once, not at every execution (a table renders a template per row). */
  pipes: Map<string, string[][]>;
  funcs: Record<string, TemplateFunc>;
  name: string;
  /** objects: 'map'. */
  maps: boolean;
  /** missingKey: 'map' or 'raw'. */
  jsonMaps: boolean;
  /** missingKey: 'map'. */
  idAsId: boolean;
  typeName: GoTemplateOptions['typeName'];
}

// Whether plain objects read as maps in the execution under way: execution is synchronous, and the
// printing and truth helpers (also called by the builtins) read it.
let objectsAsMaps = false;
function withObjectsAsMaps<T>(on: boolean, fn: () => T): T {
  const was = objectsAsMaps;
  objectsAsMaps = on;
  try {
    return fn();
  } finally {
    objectsAsMaps = was;
  }
}
/** A plain object read as a map (objects: 'map'). */
const isObjectMap = (v: unknown): v is Record<string, unknown> =>
  objectsAsMaps && v !== null && typeof v === 'object' && !Array.isArray(v) && !isMap(v);
/** A map's keys in order. */
const sortedKeys = (v: Map<string, unknown> | Record<string, unknown>): string[] => (isMap(v) ? [...v.keys()] : Object.keys(v)).sort();
/** A map's values in key order. */
const sortedValues = (v: Map<string, unknown> | Record<string, unknown>): unknown[] =>
  isMap(v)
    ? [...v.keys()].sort().map((key) => v.get(key))
    : Object.keys(v)
        .sort()
        .map((key) => v[key]);

function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof GoValue) return v.truth();
  if (isMap(v)) return v.size > 0;
  if (isObjectMap(v)) return Object.keys(v).length > 0;
  return true;
}

/** How Go prints a value: nil as <no value>, maps as map[k:v] (keys sorted), slices as [a b]. */
export function goPrint(v: unknown): string {
  return printAt(v, false);
}

const nestedPrint = (v: unknown) => printAt(v, true);

function printAt(v: unknown, nested: boolean): string {
  if (v instanceof GoValue) return v.print(nested);
  if (v === undefined || v === null) return '<no value>';
  if (Array.isArray(v)) return `[${v.map(nestedPrint).join(' ')}]`;
  if (isMap(v))
    return `map[${[...v.keys()]
      .sort()
      .map((key) => `${key}:${nestedPrint(v.get(key))}`)
      .join(' ')}]`;
  if (isObjectMap(v))
    return `map[${Object.keys(v)
      .sort()
      .map((key) => `${key}:${goPrint(v[key])}`)
      .join(' ')}]`;
  if (typeof v === 'object')
    return `{${Object.values(v as object)
      .map(goPrint)
      .join(' ')}}`;
  return String(v);
}

function goLen(v: unknown): number {
  if (v instanceof GoValue) {
    const n = v.length();
    if (n === undefined) throw new Error(`len of type ${v.goType}`);
    return n;
  }
  if (typeof v === 'string' || Array.isArray(v)) return v.length;
  if (isMap(v)) return v.size;
  if (isObjectMap(v)) return Object.keys(v).length;
  throw new Error(`len of type ${typeof v}`);
}

function sprintf(format: string, args: unknown[]): string {
  let n = 0;
  return format.replace(/%([-+ #0]*)(\d*)(?:\.(\d+))?([svdqtx%])/g, (_m, _flags: string, width: string, _prec: string, c: string) => {
    if (c === '%') return '%';
    if (n >= args.length) return `%!${c}(MISSING)`;
    const a = args[n++];
    let s =
      c === 'q'
        ? JSON.stringify(String(a))
        : c === 'x'
          ? typeof a === 'number'
            ? a.toString(16)
            : Buffer.from(String(a)).toString('hex')
          : goPrint(a);
    if (width) s = s.padStart(Number(width));
    return s;
  });
}

const BUILTINS: Record<string, TemplateFunc> = {
  and: (...a) => a.find((x) => !truthy(x)) ?? a[a.length - 1],
  or: (...a) => a.find(truthy) ?? a[a.length - 1],
  not: (a) => !truthy(a),
  len: (a) => goLen(a),
  index: (v, ...keys) => {
    let cur = v;
    for (const key of keys) {
      if (cur instanceof GoMap) cur = cur.has(String(key)) ? cur.get(String(key)) : cur.zero;
      else if (cur instanceof GoValue) throw new Error(`can't index item of type ${cur.goType}`);
      else if (isMap(cur)) cur = cur.get(String(key));
      else if (isObjectMap(cur)) cur = cur[String(key)];
      else if (cur === undefined || cur === null) cur = undefined;
      else if (Array.isArray(cur) || typeof cur === 'string') {
        const i = Number(key);
        if (!(i >= 0 && i < cur.length)) throw new Error(`error calling index: index out of range: ${i}`);
        cur = cur[i];
      } else throw new Error(`error calling index: can't index item of type ${typeof cur}`);
    }
    return cur;
  },
  print: (...a) => a.map(goPrint).join(''),
  println: (...a) => `${a.map(goPrint).join(' ')}\n`,
  printf: (f, ...a) => sprintf(String(f), a),
  eq: (a, ...b) => b.some((x) => x === a),
  ne: (a, b) => a !== b,
};

/**
 * Splits a pipeline into commands, each into words: quoted strings and parenthesised groups (to
 * MAX_DEPTH levels) stay whole. Throws on unbalanced parentheses or quotes.
 */
function commands(pipe: string, fail: (msg: string) => Error): string[][] {
  const out: string[][] = [[]];
  let i = 0;
  const quoted = (q: string): number => {
    let j = i + 1;
    while (j < pipe.length && pipe[j] !== q) j += q === '"' && pipe[j] === '\\' ? 2 : 1;
    if (j >= pipe.length) throw fail('unterminated quoted string');
    return j + 1;
  };
  while (i < pipe.length) {
    const c = pipe[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '|') {
      out.push([]);
      i++;
    } else {
      const start = i;
      if (c === '"' || c === '`') i = quoted(c);
      else if (c === '(') {
        let depth = 0;
        do {
          const d = pipe[i];
          if (d === undefined) throw fail('unclosed left paren');
          if (d === '"' || d === '`') {
            i = quoted(d);
            continue;
          }
          if (d === '(' && ++depth > MAX_DEPTH) throw fail(`nesting deeper than ${MAX_DEPTH}`);
          if (d === ')') depth--;
          i++;
        } while (depth > 0);
        // A field chain on the group's value, `(index .X 1).Name` (Go's ChainNode), stays in the word.
        if (pipe[i] === '.') while (i < pipe.length && /[\w.]/.test(pipe[i]!)) i++;
      } else if (c === ')') throw fail('unexpected right paren');
      else while (i < pipe.length && !/[\s|()"`]/.test(pipe[i]!)) i++;
      out[out.length - 1]!.push(pipe.slice(start, i));
    }
  }
  return out;
}

/**
 * Variables in scope, a stack as Go's: `$` (the root, under '') first; a declaration pushes, an
 * assignment sets the innermost of its name, and a block pops what it pushed at its end.
 */
type Vars = { name: string; value: unknown }[];

function lookup(vars: Vars, name: string): { value: unknown } | undefined {
  for (let i = vars.length - 1; i >= 0; i--) if (vars[i]!.name === name) return vars[i];
  return undefined;
}

/** Evaluates a node's pipeline, then declares or assigns its variables (the caller pops them). */
function evaluateDecl(n: { pipe: string; at: string } & Decl, dot: unknown, ctx: Ctx, depth: number, vars: Vars): unknown {
  const value = evaluate(n.pipe, dot, ctx, n.at, depth, vars);
  if (n.assign !== undefined) {
    // Go's parser lets an assignment to an undeclared variable through; its execution refuses it.
    const slot = lookup(vars, n.assign);
    if (!slot)
      throw new GoTemplateError(`template: ${ctx.name}:${n.at}: executing "${ctx.name}" at <${n.pipe}>: undefined variable: $${n.assign}`);
    slot.value = value;
  } else if (n.decl) for (const name of n.decl) vars.push({ name, value });
  return value;
}

function render(nodes: Node[], dot: unknown, ctx: Ctx, depth: number, vars: Vars): string {
  const mark = vars.length;
  try {
    return renderList(nodes, dot, ctx, depth, vars);
  } finally {
    vars.length = mark;
  }
}

function renderList(nodes: Node[], dot: unknown, ctx: Ctx, depth: number, vars: Vars): string {
  const acc = { out: '' };
  try {
    renderNodes(nodes, dot, ctx, depth, vars, acc);
    return acc.out;
  } catch (e) {
    // Each level puts what it wrote before the inner one's partial output.
    if (e instanceof GoTemplateError) e.partial = acc.out + (e.partial ?? '');
    throw e;
  }
}

function renderNodes(nodes: Node[], dot: unknown, ctx: Ctx, depth: number, vars: Vars, acc: { out: string }): void {
  const { name } = ctx;
  for (const n of nodes) {
    if (n.t === 'text') {
      acc.out += n.s;
      continue;
    }
    if (n.t === 'act') {
      // An action that declares or assigns prints nothing.
      const value = evaluateDecl(n, dot, ctx, depth, vars);
      if (!n.decl && n.assign === undefined) acc.out += goPrint(value);
      continue;
    }
    const mark = vars.length;
    const value = n.t === 'range' ? evaluate(n.pipe, dot, ctx, n.at, depth, vars) : evaluateDecl(n, dot, ctx, depth, vars);
    if (n.t === 'if') acc.out += render(truthy(value) ? n.yes : n.no, dot, ctx, depth + 1, vars);
    else if (n.t === 'with')
      acc.out += truthy(value) ? render(n.yes, value, ctx, depth + 1, vars) : render(n.no, dot, ctx, depth + 1, vars);
    else if (n.t === 'range') {
      const items = Array.isArray(value)
        ? value
        : isMap(value) || isObjectMap(value)
          ? sortedValues(value)
          : value === undefined || value === null
            ? []
            : undefined;
      if (!items)
        throw new GoTemplateError(
          `template: ${name}:${n.at}: executing "${name}" at <${n.pipe}>: range can't iterate over ${goPrint(value)}`,
        );
      if (!items.length) acc.out += render(n.no, dot, ctx, depth + 1, vars);
      const keys = Array.isArray(value) ? items.map((_, i) => i) : items.length ? sortedKeys(value as Map<string, unknown>) : [];
      // `range $v := x` declares the element; `range $k, $v := x` the key or index and the element.
      const [first, second] = n.decl ?? [];
      const slots = n.decl ? n.decl.map((name) => ({ name, value: undefined as unknown })) : [];
      vars.push(...slots);
      items.forEach((item, i) => {
        if (second !== undefined) {
          slots[0]!.value = keys[i];
          slots[1]!.value = item;
        } else if (first !== undefined) slots[0]!.value = item;
        acc.out += render(n.body, item, ctx, depth + 1, vars);
      });
    }
    vars.length = mark;
  }
}

function evaluate(pipe: string, dot: unknown, ctx: Ctx, at: string, depth: number, vars: Vars): unknown {
  const { funcs, name } = ctx;
  const fail = (msg: string) => new GoTemplateError(`template: ${name}:${at}: executing "${name}" at <${pipe}>: ${msg}`);
  if (depth > MAX_DEPTH) throw fail(`nesting deeper than ${MAX_DEPTH}`);
  const field = (base: unknown, path: string): unknown => {
    let v = base;
    let holder: unknown;
    let key: string | undefined;
    const noField = (part: string) => {
      const type =
        (holder instanceof GoValue && key !== undefined ? holder.fieldType(key) : undefined) ??
        (holder instanceof GoMap ? holder.goType.replace(/^map\[string\]/, '') : undefined) ??
        ctx.typeName?.(v, holder, key);
      return fail(`can't evaluate field ${part}${type ? ` in type ${type}` : ''}`);
    };
    for (const part of path.split('.').filter(Boolean)) {
      const from = v;
      if (v instanceof GoValue) {
        const r = v.field(part);
        if (r === 'nil') throw fail(`nil pointer evaluating ${v.goType}.${part}`);
        if (r === undefined) throw fail(`can't evaluate field ${part} in type ${v.goType}`);
        v = r.value;
      } else if (v instanceof GoMap) v = v.get(part);
      else if (isMap(v)) {
        if (!v.has(part)) throw fail(`map has no entry for key "${part}"`);
        v = v.get(part);
      } else if (v !== null && typeof v === 'object' && !Array.isArray(v) && part in v) v = (v as Record<string, unknown>)[part];
      else if ((v === undefined || v === null) && ctx.maps) return undefined;
      else if (v === undefined || v === null) throw fail(`nil pointer evaluating .${part}`);
      // The docker CLI's inspect runs the template over the Go type first (`ID`), its JSON map after (`Id`).
      else if (ctx.idAsId && part === 'ID' && isObjectMap(v) && 'Id' in v) v = v.Id;
      else if (ctx.jsonMaps && isObjectMap(v)) throw fail(`map has no entry for key "${part}"`);
      else throw noField(part);
      holder = from;
      key = part;
    }
    return v;
  };
  const arg = (w: string): unknown => {
    if (w.startsWith('"')) {
      try {
        return JSON.parse(w) as string;
      } catch {
        throw fail(`malformed string ${w}`);
      }
    }
    if (w.startsWith('`')) return w.slice(1, -1);
    if (w.startsWith('(')) {
      const end = w.lastIndexOf(')');
      const value = evaluate(w.slice(1, end), dot, ctx, at, depth + 1, vars);
      return end === w.length - 1 ? value : field(value, w.slice(end + 1));
    }
    if (w.startsWith('$')) {
      const [, v = '', path = ''] = /^\$(\w*)(.*)$/.exec(w)!;
      const found = lookup(vars, v);
      if (!found) throw fail(`undefined variable "$${v}"`);
      return path ? field(found.value, path) : found.value;
    }
    if (w === '.') return dot;
    if (w.startsWith('.')) return field(dot, w);
    if (/^-?\d+(\.\d+)?$/.test(w)) return Number(w);
    if (w === 'true' || w === 'false') return w === 'true';
    if (w === 'nil') return null;
    return call(w, []);
  };
  const call = (fn: string, args: unknown[]): unknown => {
    const f = Object.hasOwn(funcs, fn) ? funcs[fn] : undefined;
    // Go's parser refuses it, naming the line only.
    if (!f) throw new GoTemplateError(`template: ${name}:${at.split(':')[0]}: function "${fn}" not defined`);
    try {
      return f(...args);
    } catch (err) {
      if (err instanceof GoTemplateError) throw err;
      throw fail(`error calling ${fn}: ${(err as Error).message}`);
    }
  };
  let result: unknown;
  let first = true;
  let cmds = ctx.pipes.get(pipe);
  if (!cmds) ctx.pipes.set(pipe, (cmds = commands(pipe, fail)));
  for (const cmd of cmds) {
    if (!cmd.length) throw fail('missing value for command');
    const [head, ...rest] = cmd as [string, ...string[]];
    const piped = first ? [] : [result];
    const isFunc = /^[A-Za-z_]\w*$/.test(head) && !['true', 'false', 'nil'].includes(head);
    if (isFunc) result = call(head, [...rest.map(arg), ...piped]);
    else {
      if (rest.length || piped.length) {
        // A method of a typed value called with arguments: `.CreatedAt.Format "2006"` (the CLI's
        // objects only: the daemon's templates keep their refusal).
        const cut = ctx.maps ? head.lastIndexOf('.') : -1;
        const receiver = cut > 0 ? arg(head.slice(0, cut)) : cut === 0 ? dot : undefined;
        const method = receiver instanceof GoValue ? receiver.method(head.slice(cut + 1)) : undefined;
        if (!method) throw fail(`can't give argument to non-function ${head}`);
        try {
          result = method(...rest.map(arg), ...piped);
        } catch (err) {
          if (err instanceof GoTemplateError) throw err;
          throw fail(`error calling ${head.slice(cut + 1)}: ${(err as Error).message}`);
        }
      } else result = arg(head);
    }
    first = false;
  }
  return result;
}
