// The subset of Go's text/template that `--format` uses in practice: {{.Field.Sub}}, {{.}},
// {{json .X}}, {{index .Map "key"}}, {{join .List ","}}, {{upper/lower/title .X}}, {{println}},
// {{printf "%s" .X}}, {{len .X}}, {{if .X}}…{{else}}…{{end}}, {{range .X}}…{{end}} (dot rebinds),
// and the `table` prefix (header row from the field names, columns aligned). Unknown functions
// and fields are errors with Go's wording, as the docker CLI reports them.
// The daemon has its own subset in util/go-template.ts (pluggable functions, Go's trimming and
// pipelines); this one should move onto it (the de-duplication is tracked separately).
type Node =
  | { t: 'text'; s: string }
  | { t: 'act'; expr: string }
  | { t: 'if'; expr: string; yes: Node[]; no: Node[] }
  | { t: 'range'; expr: string; body: Node[] };

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

function lex(src: string): ({ text: string } | { action: string })[] {
  const out: ({ text: string } | { action: string })[] = [];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    if (open < 0) {
      out.push({ text: src.slice(i) });
      break;
    }
    if (open > i) out.push({ text: src.slice(i, open) });
    const close = src.indexOf('}}', open);
    if (close < 0) throw new TemplateError(`template: unclosed action`);
    out.push({
      action: src
        .slice(open + 2, close)
        .replace(/^-\s*/, '')
        .replace(/\s*-$/, '')
        .trim(),
    });
    i = close + 2;
  }
  return out;
}

function parse(src: string): Node[] {
  const toks = lex(src);
  let k = 0;
  const block = (stopAt: string[]): [Node[], string] => {
    const nodes: Node[] = [];
    while (k < toks.length) {
      const tk = toks[k++]!;
      if ('text' in tk) {
        nodes.push({ t: 'text', s: tk.text });
        continue;
      }
      const a = tk.action;
      const word = a.split(/\s+/)[0]!;
      if (stopAt.includes(word)) return [nodes, word];
      if (word === 'if') {
        const [yes, end] = block(['else', 'end']);
        const no = end === 'else' ? block(['end'])[0] : [];
        nodes.push({ t: 'if', expr: a.slice(2).trim(), yes, no });
      } else if (word === 'range') nodes.push({ t: 'range', expr: a.slice(5).trim(), body: block(['end'])[0] });
      else if (word.startsWith('/*')) continue;
      else nodes.push({ t: 'act', expr: a });
    }
    if (stopAt.length) throw new TemplateError(`template: unexpected EOF`);
    return [nodes, ''];
  };
  return block([])[0];
}

/** Splits an expression into words, keeping quoted strings and parenthesised groups whole. */
function words(expr: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|`([^`]*)`|\(([^()]*)\)|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(expr))) out.push(m[0]);
  return out;
}

function field(dot: unknown, path: string): unknown {
  if (path === '.') return dot;
  let v: unknown = dot;
  for (const part of path.split('.').slice(1)) {
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'object') throw new TemplateError(`template: can't evaluate field ${part} in type ${typeof v}`);
    const rec = v as Record<string, unknown>;
    if (!(part in rec) && !(v instanceof Map)) throw new TemplateError(`template: can't evaluate field ${part}`);
    v = rec[part];
  }
  return v;
}

/** How Go prints a value with {{.X}}: maps as map[k:v], slices as [a b], nil as <nil>. */
export function goString(v: unknown): string {
  if (v === null || v === undefined) return '<no value>';
  if (Array.isArray(v)) return `[${v.map(goString).join(' ')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v as object).sort();
    return `map[${keys.map((k) => `${k}:${goString((v as Record<string, unknown>)[k])}`).join(' ')}]`;
  }
  return String(v);
}

const truthy = (v: unknown) =>
  !(
    v === undefined ||
    v === null ||
    v === false ||
    v === 0 ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === 'object' && Object.keys(v as object).length === 0)
  );

function evalExpr(expr: string, dot: unknown): unknown {
  const w = words(expr);
  if (w.length === 0) throw new TemplateError('template: missing value for command');
  const arg = (s: string): unknown => {
    if (s.startsWith('"')) return JSON.parse(s);
    if (s.startsWith('`')) return s.slice(1, -1);
    if (s.startsWith('(')) return evalExpr(s.slice(1, -1), dot);
    if (s.startsWith('.')) return field(dot, s);
    if (/^-?\d+$/.test(s)) return Number(s);
    if (s === 'true' || s === 'false') return s === 'true';
    return evalExpr(s, dot);
  };
  const [fn, ...rest] = w as [string, ...string[]];
  if (fn.startsWith('.') || fn.startsWith('"') || fn.startsWith('(')) return arg(fn);
  const a = rest.map(arg);
  switch (fn) {
    case 'json':
      return JSON.stringify(a[0] ?? null);
    case 'index': {
      let v = a[0];
      for (const key of a.slice(1)) v = v === null || v === undefined ? undefined : (v as Record<string, unknown>)[String(key)];
      return v;
    }
    case 'join':
      return ((a[0] as unknown[] | null) ?? []).map(String).join(String(a[1] ?? ''));
    case 'upper':
      return String(a[0] ?? '').toUpperCase();
    case 'lower':
      return String(a[0] ?? '').toLowerCase();
    case 'title':
      return String(a[0] ?? '').replace(/\b\w/g, (c) => c.toUpperCase());
    case 'len':
      return Array.isArray(a[0]) ? a[0].length : typeof a[0] === 'string' ? a[0].length : a[0] ? Object.keys(a[0] as object).length : 0;
    case 'println':
      return `${a.map(goString).join(' ')}\n`;
    case 'print':
      return a.map(goString).join('');
    case 'printf': {
      let n = 1;
      return String(a[0]).replace(/%[-+ #0]*\d*(?:\.\d+)?([svdq%])/g, (_m, c: string) =>
        c === '%' ? '%' : c === 'q' ? JSON.stringify(String(a[n++])) : goString(a[n++]),
      );
    }
    case 'eq':
      return a.slice(1).some((x) => x === a[0]);
    case 'ne':
      return a[0] !== a[1];
    case 'not':
      return !truthy(a[0]);
    case 'or':
      return a.find(truthy) ?? a[a.length - 1];
    case 'and':
      return a.every(truthy) ? a[a.length - 1] : a.find((x) => !truthy(x));
    case 'pad':
      return `${' '.repeat(Number(a[1] ?? 0))}${goString(a[0])}${' '.repeat(Number(a[2] ?? 0))}`;
    case 'truncate':
      return String(a[0] ?? '').slice(0, Number(a[1]));
    case 'split':
      return String(a[0] ?? '').split(String(a[1]));
    default:
      throw new TemplateError(`template: parsing error: function "${fn}" not defined`);
  }
}

function render(nodes: Node[], dot: unknown): string {
  let out = '';
  for (const n of nodes) {
    if (n.t === 'text') out += n.s;
    else if (n.t === 'act') out += goString(evalExpr(n.expr, dot)).replace(/^<no value>$/, '<no value>');
    else if (n.t === 'if') out += render(truthy(evalExpr(n.expr, dot)) ? n.yes : n.no, dot);
    else {
      const v = evalExpr(n.expr, dot);
      const items = Array.isArray(v)
        ? v
        : v && typeof v === 'object'
          ? Object.keys(v)
              .sort()
              .map((k) => (v as Record<string, unknown>)[k])
          : [];
      for (const item of items) out += render(n.body, item);
    }
  }
  return out;
}

export interface Compiled {
  /** `table …`: render a header row and align the columns. */
  table: boolean;
  render(dot: unknown): string;
  /** The header row of a table template: each {{.Field}} replaced by its title. */
  header(titles: Record<string, string>): string;
}

/** Compiles a --format value; `\t` and `\n` escapes become tabs and newlines as in the docker CLI. */
export function compile(format: string): Compiled {
  const table = /^table(\s|$)/.test(format);
  const body = (table ? format.replace(/^table\s*/, '') : format).replace(/\\t/g, '\t').replace(/\\n/g, '\n');
  const nodes = parse(body);
  return {
    table,
    render: (dot) => render(nodes, dot),
    header: (titles) =>
      body.replace(/\{\{-?\s*\.(\w+)\s*-?\}\}/g, (_m, f: string) => titles[f] ?? f.toUpperCase()).replace(/\{\{[^}]*\}\}/g, ''),
  };
}
