// Checks the layout rules of ARCHITECTURE.md on src/ (plain Node, no dependencies):
//   (a) no file under src/ is longer than 800 lines;
//   (b) no two top-level folders of src/ import each other, directly or through others (a cycle);
//   (c) no folder imports a folder of a higher layer (the table below; main/ may import anything);
//   (d) code under src/ (tests aside) never imports from outside src/ (test support, benchmarks);
//   (e) src/types/ (wire types) imports nothing outside itself.
// Every import counts: static, `export … from`, side-effect, `import(…)`, type-only included.
// Usage: bin/node scripts/check-layout.mjs [src-dir]   (exit 0 clean, 1 with the offences listed)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The layer of each top-level entry of src/ (a folder, or a file at its root). Higher imports lower. */
export const LAYERS = {
  // The client side (issue 17) sits above the daemon so that no daemon folder can import it; what
  // it may import is narrowed further by CLIENT_IMPORTS below (never daemon code).
  cli: 8, // the `engine` command-line tool, built on the SDK
  client: 7, // the SDK
  main: 6,
  api: 5,
  daemon: 4,
  build: 4,
  cluster: 4,
  images: 3,
  network: 3,
  supervisor: 2,
  store: 2,
  oci: 2,
  logging: 2,
  events: 2,
  plugins: 2,
  config: 1,
  types: 0,
  util: 0,
  'errors.ts': 0,
  'version.ts': 0,
};
/** Folders that may import every layer (the composition root). */
const IMPORTS_ANYTHING = new Set(['main']);
/** Folders that may import nothing outside themselves (node: built-ins aside). */
const IMPORTS_NOTHING = new Set(['types']);
export const MAX_LINES = 800;
/**
 * Folders of the client side and the only top-level entries they may import: the SDK runs in
 * applications, so it takes wire types and the client-safe helpers of util/ (CLIENT_SAFE_UTIL),
 * never daemon code; the CLI takes the SDK as well.
 */
export const CLIENT_IMPORTS = {
  client: new Set(['types', 'util']),
  cli: new Set(['client', 'types', 'util', 'version.ts']),
};
/** The files of util/ a client may import (no daemon state, no helper processes). */
export const CLIENT_SAFE_UTIL = new Set(['util/api-version.ts', 'util/node-http.ts', 'util/tar-writer.ts', 'util/time.ts']);

// ---- TEMPORARY exceptions (issue 11): each goes when the work named beside it lands. -----------
// An entry that no longer matches anything is reported as a note, so it can be deleted.
/** Files allowed over MAX_LINES until they are split. Paths relative to src/. */
export const LINE_LIMIT_EXCEPTIONS = new Set([]);
/** Imports allowed against the layer rule, by file: `rel → [targets]` (none at present). */
export const IMPORT_EXCEPTIONS = new Map();
// ---------------------------------------------------------------------------------------------------

/** Every .ts file under dir, as absolute paths, sorted. */
function listTs(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTs(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

const PUNCT_BEFORE_REGEX = new Set([
  '(',
  ',',
  '=',
  ':',
  '[',
  '!',
  '&',
  '|',
  '?',
  '{',
  '}',
  ';',
  '+',
  '-',
  '*',
  '%',
  '<',
  '>',
  '~',
  '^',
  '=>',
]);
const KEYWORDS_BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

/**
 * A small lexer: the file's identifiers, punctuation and string literals, with comments dropped and
 * template literals reduced to their `${…}` code, so that import-like text in comments, strings or
 * templates is never taken for an import. Regular expression literals are told from division by the
 * token before them (the usual heuristic).
 */
export function tokenize(src) {
  const tokens = [];
  let i = 0;
  const braceStack = []; // for each open `{`: true when it opened a template's `${`
  const prevSignificant = () => tokens[tokens.length - 1];
  const readTemplate = () => {
    // at the character after a backtick or after the `}` closing a `${`
    while (i < src.length) {
      const c = src[i];
      if (c === '\\') i += 2;
      else if (c === '`') {
        i++;
        tokens.push({ kind: 'template' });
        return;
      } else if (c === '$' && src[i + 1] === '{') {
        i += 2;
        braceStack.push(true);
        tokens.push({ kind: 'punct', value: '(' }); // lets a regex start the embedded code
        return;
      } else i++;
    }
  };
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
    else if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? src.length : end + 2;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let value = '';
      while (j < src.length && src[j] !== c && src[j] !== '\n') {
        if (src[j] === '\\') {
          value += src[j + 1] ?? '';
          j += 2;
        } else value += src[j++];
      }
      tokens.push({ kind: 'string', value });
      i = j + 1;
    } else if (c === '`') {
      i++;
      readTemplate();
    } else if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\w$]/.test(src[j])) j++;
      tokens.push({ kind: 'word', value: src.slice(i, j) });
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\w.]/.test(src[j])) j++;
      tokens.push({ kind: 'number' });
      i = j;
    } else if (c === '/') {
      const prev = prevSignificant();
      const regexAllowed =
        !prev ||
        (prev.kind === 'punct' && PUNCT_BEFORE_REGEX.has(prev.value)) ||
        (prev.kind === 'word' && KEYWORDS_BEFORE_REGEX.has(prev.value));
      if (regexAllowed) {
        let j = i + 1;
        let inClass = false;
        while (j < src.length && src[j] !== '\n') {
          const d = src[j];
          if (d === '\\') j += 2;
          else if (d === '[') ((inClass = true), j++);
          else if (d === ']') ((inClass = false), j++);
          else if (d === '/' && !inClass) break;
          else j++;
        }
        j++;
        while (j < src.length && /[a-z]/i.test(src[j])) j++;
        tokens.push({ kind: 'regex' });
        i = j;
      } else {
        tokens.push({ kind: 'punct', value: '/' });
        i++;
      }
    } else if (c === '{') {
      braceStack.push(false);
      tokens.push({ kind: 'punct', value: '{' });
      i++;
    } else if (c === '}') {
      if (braceStack.pop()) {
        i++;
        readTemplate();
      } else {
        tokens.push({ kind: 'punct', value: '}' });
        i++;
      }
    } else if (c === '=' && src[i + 1] === '>') {
      tokens.push({ kind: 'punct', value: '=>' });
      i += 2;
    } else {
      tokens.push({ kind: 'punct', value: c });
      i++;
    }
  }
  return tokens;
}

/** The module specifiers a TypeScript file imports (static, re-exports, side-effect, dynamic). */
export function importsOf(source) {
  const t = tokenize(source);
  const specs = [];
  const isWord = (k, w) => t[k]?.kind === 'word' && t[k].value === w;
  const isPunct = (k, p) => t[k]?.kind === 'punct' && t[k].value === p;
  // Scans from k to the `from '<spec>'` ending an import/export clause; stops at `;` or a clause end.
  const fromClause = (k) => {
    let depth = 0;
    for (; k < t.length; k++) {
      if (isPunct(k, '{')) depth++;
      else if (isPunct(k, '}')) depth--;
      else if (depth === 0 && isPunct(k, ';')) return undefined;
      else if (depth === 0 && isWord(k, 'from') && t[k + 1]?.kind === 'string') return t[k + 1].value;
      else if (depth < 0) return undefined;
    }
    return undefined;
  };
  for (let k = 0; k < t.length; k++) {
    if (isPunct(k - 1, '.')) continue; // obj.import, x.export
    if (isWord(k, 'import')) {
      if (isPunct(k + 1, '(') && t[k + 2]?.kind === 'string') specs.push(t[k + 2].value);
      else if (t[k + 1]?.kind === 'string') specs.push(t[k + 1].value);
      else if (!isPunct(k + 1, '.') && !isPunct(k + 1, '(')) {
        const s = fromClause(k + 1);
        if (s !== undefined) specs.push(s);
      }
    } else if (isWord(k, 'export')) {
      let m = k + 1;
      if (isWord(m, 'type')) m++;
      if (isPunct(m, '{') || isPunct(m, '*')) {
        const s = fromClause(m);
        if (s !== undefined) specs.push(s);
      }
    }
  }
  return specs;
}

/** The top-level entry of src/ a path belongs to: its first folder, or the file's name at the root. */
function unitOf(srcDir, file) {
  const rel = relative(srcDir, file);
  if (rel.startsWith('..') || rel === '') return undefined;
  const parts = rel.split(sep);
  return parts[0];
}

/**
 * Checks the tree under srcDir. Returns the offences, each a line of text naming the files, and
 * the exceptions that no longer match anything (stale: to be deleted from the lists above).
 */
export function checkLayout(srcDir, { lineExceptions = LINE_LIMIT_EXCEPTIONS, importExceptions = IMPORT_EXCEPTIONS } = {}) {
  srcDir = resolve(srcDir);
  const files = listTs(srcDir);
  const long = [];
  const unknown = new Map(); // unit → first file seen
  const upward = [];
  const outside = [];
  const typesImports = [];
  const clientImports = [];
  const usedLineExceptions = new Set();
  const usedImportExceptions = new Set();
  /** folder → folder → ["file → imported file", …] */
  const edges = new Map();
  for (const file of files) {
    const rel = relative(srcDir, file).split(sep).join('/');
    const text = readFileSync(file, 'utf8');
    const lines = text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES) {
      if (lineExceptions.has(rel)) usedLineExceptions.add(rel);
      else long.push(`src/${rel}: ${lines} lines (limit ${MAX_LINES})`);
    }
    const from = unitOf(srcDir, file);
    if (!(from in LAYERS) && !unknown.has(from)) unknown.set(from, rel);
    for (const spec of importsOf(text)) {
      if (!spec.startsWith('.')) continue; // node: built-ins and packages
      const target = resolve(dirname(file), spec);
      const to = unitOf(srcDir, target);
      if (to === undefined) {
        if (!rel.endsWith('.test.ts')) outside.push(`src/${rel} imports ${relative(dirname(srcDir), target).split(sep).join('/')}`);
        continue;
      }
      if (to === from) continue;
      const targetRel = relative(srcDir, target).split(sep).join('/');
      if (importExceptions.get(rel)?.includes(targetRel)) {
        usedImportExceptions.add(`${rel} → ${targetRel}`);
        continue;
      }
      if (!(to in LAYERS) && !unknown.has(to)) unknown.set(to, targetRel);
      if (!edges.has(from)) edges.set(from, new Map());
      const byTarget = edges.get(from);
      if (!byTarget.has(to)) byTarget.set(to, []);
      byTarget.get(to).push(`src/${rel} → src/${targetRel}`);
      const allowed = CLIENT_IMPORTS[from];
      if (allowed && (!allowed.has(to) || (to === 'util' && !CLIENT_SAFE_UTIL.has(targetRel)))) {
        clientImports.push(
          `src/${rel} imports src/${targetRel} (${from}/ may import only ${[...allowed].join('/, ')}/${allowed.has('util') ? ` (util: ${[...CLIENT_SAFE_UTIL].map((u) => u.slice(5)).join(', ')})` : ''})`,
        );
      }
      if (IMPORTS_NOTHING.has(from)) typesImports.push(`src/${rel} imports src/${targetRel} (${from}/ imports nothing outside itself)`);
      else if (!IMPORTS_ANYTHING.has(from) && from in LAYERS && to in LAYERS && LAYERS[to] > LAYERS[from]) {
        upward.push(`src/${rel} imports src/${targetRel} (${from}/ is layer ${LAYERS[from]}, ${to}/ is layer ${LAYERS[to]})`);
      }
    }
  }
  const cycles = [];
  for (const members of stronglyConnected(edges).filter((c) => c.length > 1)) {
    cycles.push(`cycle between ${members.map((m) => m + '/').join(', ')}:`);
    const inCycle = new Set(members);
    for (const a of members) {
      for (const [b, examples] of edges.get(a) ?? []) {
        if (!inCycle.has(b)) continue;
        cycles.push(
          `  ${a}/ → ${b}/ (${examples.length} import${examples.length === 1 ? '' : 's'}), e.g. ${examples.slice(0, 3).join('; ')}`,
        );
      }
    }
  }
  const stale = [
    ...[...lineExceptions]
      .filter((rel) => !usedLineExceptions.has(rel))
      .map((rel) => `line limit: src/${rel} is within ${MAX_LINES} lines or gone`),
    ...[...importExceptions].flatMap(([rel, targets]) =>
      targets.filter((t) => !usedImportExceptions.has(`${rel} → ${t}`)).map((t) => `import: src/${rel} no longer imports src/${t}`),
    ),
  ];
  return {
    files: files.length,
    offences: {
      [`files over ${MAX_LINES} lines`]: long,
      'top-level folders importing each other in a cycle': cycles,
      'imports of a higher layer (see the layer table in ARCHITECTURE.md)': upward,
      'imports out of src/types/ (wire types depend on nothing)': typesImports,
      'client-side imports of daemon code (the SDK and the CLI import only what CLIENT_IMPORTS allows)': clientImports,
      'imports from outside src/ in daemon code (test support and benchmarks belong to test/ and bench/)': outside,
      'top-level entries of src/ missing from the layer table in scripts/check-layout.mjs': [...unknown].map(
        ([u, f]) => `src/${u}${u.endsWith('.ts') ? '' : '/'} (e.g. src/${f}) is not in the layer table`,
      ),
    },
    excepted: [
      ...[...usedLineExceptions].map((rel) => `src/${rel} (line limit)`),
      ...[...usedImportExceptions].map((e) => `src/${e.replace(' → ', ' → src/')}`),
    ],
    stale,
  };
}

/** Tarjan's algorithm over the folder graph: the sets of folders that reach each other. */
function stronglyConnected(edges) {
  const nodes = new Set([...edges.keys()]);
  for (const m of edges.values()) for (const k of m.keys()) nodes.add(k);
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of (edges.get(v) ?? new Map()).keys()) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      out.push(comp.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!idx.has(v)) visit(v);
  return out;
}

function main() {
  const here = dirname(fileURLToPath(import.meta.url));
  const srcDir = resolve(process.argv[2] ?? join(here, '..', 'src'));
  const r = checkLayout(srcDir);
  let failed = false;
  for (const [title, lines] of Object.entries(r.offences)) {
    if (lines.length === 0) continue;
    failed = true;
    process.stderr.write(`check-layout: ${title}:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
  }
  for (const line of r.stale)
    process.stderr.write(`check-layout: note: stale exception, delete it from scripts/check-layout.mjs: ${line}\n`);
  const where = relative(process.cwd(), srcDir) || '.';
  if (failed) {
    process.stderr.write(`check-layout: FAILED (${r.files} files under ${where})\n`);
    process.exit(1);
  }
  const excepted = r.excepted.length ? `\n  temporary exceptions still in use:\n${r.excepted.map((e) => `    ${e}`).join('\n')}` : '';
  process.stdout.write(
    `check-layout: ok (${r.files} files under ${where}: none over ${MAX_LINES} lines, no folder cycles, no upward imports)${excepted}\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
