// Checks the layout rules of ARCHITECTURE.md on src/ (plain Node, no dependencies):
//   (a) no file under src/ is longer than 800 lines;
//   (b) no two top-level folders of src/ import each other, directly or through others (a cycle);
//   (c) no folder imports a folder of a higher layer (the table below; main/ may import anything);
//   (d) code under src/ (tests aside) never imports from outside src/ (test support, benchmarks);
//   (e) src/types/ (wire types) imports nothing outside itself;
//   (f) daemon and client code never imports a package listed only in devDependencies (what runs
//       must be a dependency: the bundler would hide the mistake);
//   (g) no import circle between the files of one folder;
//   (h) at most MAX_FILES_PER_FOLDER files (tests aside) in one folder: beyond that, sub-rooms by job;
//   (i) no function, method or class body longer than MAX_BODY_LINES lines;
//   (j) no error swallowed without a word outside tests: a `.catch(() => undefined)` (or null, false,
//       {} …) needs a comment on its line, an empty catch or one that only returns a default needs a
//       comment inside (naming the failure expected), or the error is logged.
// It prints the counts that show whether a change made the code easier or harder to read: the
// largest body, the fullest folder, and the errors swallowed without a word.
// Every import counts: static, `export … from`, side-effect, `import(…)`, type-only included.
// Usage: bin/node scripts/check-layout.mjs [src-dir]   (exit 0 clean, 1 with the offences listed)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The layer of each top-level entry of src/ (a folder, or a file at its root). Higher imports lower. */
export const LAYERS = {
  // The web console: a browser app that talks only HTTP to the API, so it sits with the client side.
  console: 9,
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
  wire: 0, // the wire formats and primitives every side shares (client-safe, self-contained)
  'errors.ts': 0,
  'version.ts': 0,
};
/** Folders that may import every layer (the composition root). */
const IMPORTS_ANYTHING = new Set(['main']);
/** Folders that may import nothing outside themselves (node: built-ins aside). */
const IMPORTS_NOTHING = new Set(['types', 'wire']);
export const MAX_LINES = 800;
export const MAX_FILES_PER_FOLDER = 25;
export const MAX_BODY_LINES = 200;
/**
 * Folders of the client side and the only top-level entries they may import: the SDK runs in
 * applications, so it takes wire types and the client-safe helpers of util/ (CLIENT_SAFE_UTIL),
 * never daemon code; the CLI takes the SDK as well.
 */
export const CLIENT_IMPORTS = {
  client: new Set(['types', 'util', 'wire']),
  cli: new Set(['client', 'types', 'util', 'wire', 'version.ts']),
  console: new Set(['types', 'wire']),
};
/** The files of util/ a client may import (no daemon state, no helper processes). */
export const CLIENT_SAFE_UTIL = new Set(['util/api-version.ts', 'util/node-http.ts', 'util/tar-writer.ts', 'util/time.ts']);

// ---- TEMPORARY exceptions (issue 11): each goes when the work named beside it lands. -----------
// An entry that no longer matches anything is reported as a note, so it can be deleted.
/** Files allowed over MAX_LINES until they are split. Paths relative to src/. */
export const LINE_LIMIT_EXCEPTIONS = new Set([]);
/** Imports allowed against the layer rule, by file: `rel → [targets]` (none at present). */
export const IMPORT_EXCEPTIONS = new Map();
/** Folders allowed more than MAX_FILES_PER_FOLDER files until they get sub-rooms (issue 24). */
export const FOLDER_SIZE_EXCEPTIONS = new Set([]);
/** Bodies allowed over MAX_BODY_LINES until they are split (issue 24): `file:name`. */
export const BODY_EXCEPTIONS = new Set([]);
/** Import circles inside a folder allowed until they are broken (issue 24): the sorted member files. */
export const FOLDER_CIRCLE_EXCEPTIONS = new Set([]);
// ---------------------------------------------------------------------------------------------------

/** Every .ts (and .tsx: the web console) file under dir, as absolute paths, sorted. */
function listTs(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTs(p));
    else if (name.endsWith('.ts') || name.endsWith('.tsx')) out.push(p);
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
    const first = tokens.length;
    const start = i;
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
    for (let k = first; k < tokens.length; k++) tokens[k].pos ??= start;
  }
  return tokens;
}

const CONTROL_WORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'with']);
const NAME_SKIP = new Set(['async', 'function', 'get', 'set', 'static', 'public', 'private', 'protected', 'override', 'constructor']);
/** The token types a return-type annotation may hold between `):` and a body's `{`. */
const TYPE_PUNCT = new Set(['.', '<', '>', '[', ']', '|', '&', ',', '?', '(', ')', '=>', '{', '}', ';', ':']);

/**
 * The bodies of functions, methods, arrows and classes in a source, with their first line and
 * length in lines: `{` after a parameter list (not a control statement's condition), after `=>`,
 * after a return-type annotation, or opening a class. A heuristic good enough for a size report.
 */
export function bodiesOf(source) {
  const t = tokenize(source);
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const lineOf = (pos) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const isP = (k, v) => t[k]?.kind === 'punct' && t[k].value === v;
  const openParen = new Map(); // index of ')' → index of its '('
  const parens = [];
  const nameBefore = (k) => {
    // the identifier naming a function whose parameter list opens at k (or an arrow's binding)
    for (let j = k - 1, n = 0; j >= 0 && n < 6; j--, n++) {
      if (t[j].kind === 'word' && !NAME_SKIP.has(t[j].value)) return t[j].value;
      if (t[j].kind === 'word' && t[j].value === 'constructor') return 'constructor';
      if (t[j].kind === 'punct' && (t[j].value === ';' || t[j].value === '{' || t[j].value === '}')) break;
    }
    return '(anonymous)';
  };
  /** The kind and name of the block a '{' at k opens, or undefined for any other block. */
  const classify = (k) => {
    const p = k - 1;
    if (isP(p, '=>')) return nameBefore(isP(p - 1, ')') ? (openParen.get(p - 1) ?? p) : p - 1);
    if (isP(p, ')')) {
      const o = openParen.get(p);
      if (o === undefined) return undefined;
      if (t[o - 1]?.kind === 'word' && CONTROL_WORDS.has(t[o - 1].value)) return undefined;
      return nameBefore(o);
    }
    for (let j = p, n = 0; j >= 0 && n < 40; j--, n++) {
      if (t[j].kind === 'word' && t[j].value === 'class') return t[j + 1]?.kind === 'word' ? t[j + 1].value : '(class)';
      if (t[j].kind === 'punct' && (t[j].value === ';' || t[j].value === '{' || t[j].value === '}' || t[j].value === '=')) break;
    }
    // `): ReturnType {`: back over the annotation to a ':' right after a ')'
    let depth = 0;
    for (let j = p, n = 0; j >= 0 && n < 60; j--, n++) {
      const x = t[j];
      if (x.kind === 'punct' && !TYPE_PUNCT.has(x.value)) return undefined;
      if (isP(j, '>') || isP(j, ']') || isP(j, ')') || isP(j, '}')) depth++;
      else if (isP(j, '<') || isP(j, '[') || isP(j, '(') || isP(j, '{')) depth--;
      else if (depth === 0 && isP(j, ';')) return undefined;
      else if (depth === 0 && isP(j, ':')) {
        if (!isP(j - 1, ')')) return undefined;
        const o = openParen.get(j - 1);
        return o === undefined ? undefined : nameBefore(o);
      }
      if (depth < 0) return undefined;
    }
    return undefined;
  };
  const out = [];
  const braces = [];
  for (let k = 0; k < t.length; k++) {
    if (isP(k, '(')) parens.push(k);
    else if (isP(k, ')')) {
      const o = parens.pop();
      if (o !== undefined) openParen.set(k, o);
    } else if (isP(k, '{')) braces.push({ k, name: classify(k) });
    else if (isP(k, '}')) {
      const b = braces.pop();
      if (b?.name !== undefined) {
        const first = lineOf(t[b.k].pos);
        out.push({ name: b.name, line: first, lines: lineOf(t[k].pos) - first + 1 });
      }
    }
  }
  return out;
}

/**
 * Places that drop an error: `.catch(() => x)` of a constant (undefined, null, false, {}, [] …) with
 * no comment on its line, empty catches without a comment, catches that only return a default
 * without a comment (silent: an offence outside tests, listed by line), and catches whose only word
 * is a comment (commented: acceptable when the comment names the failure expected; counted).
 * `.catch(() => x)` handlers with a comment on their line are counted apart (commentedHandlers):
 * they drop an error just as a commented catch block does.
 */
export function swallowedErrors(source) {
  const lineOf = (i) => source.slice(0, i).split('\n').length;
  const at = (re) => [...source.matchAll(re)].map((m) => lineOf(m.index));
  const constant = String.raw`\.catch\(\(\) => (?:undefined|null|false|true|\{\s*\}|\[\](?: as [\w[\]]+)?|0|''|void 0)\)`;
  const silentLines = [
    ...at(new RegExp(`${constant}(?![^\\n]*\\/\\/)`, 'g')),
    ...at(/\bcatch\s*(?:\(\w*\))?\s*\{\s*\}/g),
    ...at(/\bcatch\s*(?:\(\w*\))?\s*\{\s*return\b[^;{}\n]*;?\s*\}/g),
  ].sort((a, b) => a - b);
  const commented = at(/\bcatch\s*(?:\(\w*\))?\s*\{\s*(?:\/\/[^\n]*\s*)+(?:return\b[^;{}\n]*;?\s*)?\}/g).length;
  const commentedHandlers = at(new RegExp(`${constant}(?=[^\\n]*\\/\\/)`, 'g')).length;
  return { silent: silentLines.length, silentLines, commented, commentedHandlers };
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
export function checkLayout(
  srcDir,
  {
    lineExceptions = LINE_LIMIT_EXCEPTIONS,
    importExceptions = IMPORT_EXCEPTIONS,
    folderExceptions = FOLDER_SIZE_EXCEPTIONS,
    bodyExceptions = BODY_EXCEPTIONS,
    circleExceptions = FOLDER_CIRCLE_EXCEPTIONS,
  } = {},
) {
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
  /** file → files of the same folder it imports (rel paths) */
  const siblingEdges = new Map();
  const filesPerFolder = new Map();
  const bodies = [];
  const swallowed = { silent: 0, commented: 0, commentedHandlers: 0, at: [] };
  const devOnly = devOnlyPackages(srcDir);
  const devImports = [];
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
    const isTest = rel.endsWith('.test.ts') || rel.endsWith('-suite.ts');
    const folder = dirname(rel);
    if (!isTest) {
      filesPerFolder.set(folder, (filesPerFolder.get(folder) ?? 0) + 1);
      for (const b of bodiesOf(text)) bodies.push({ ...b, file: rel });
      const sw = swallowedErrors(text);
      swallowed.silent += sw.silent;
      for (const line of sw.silentLines) swallowed.at.push(`src/${rel}:${line}`);
      swallowed.commented += sw.commented;
      swallowed.commentedHandlers += sw.commentedHandlers;
    }
    for (const spec of importsOf(text)) {
      if (!spec.startsWith('.')) {
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (!isTest && devOnly.has(pkg)) devImports.push(`src/${rel} imports ${pkg}, a devDependency (move it to dependencies)`);
        continue; // node: built-ins and packages
      }
      const target = resolve(dirname(file), spec);
      const targetRelPath = relative(srcDir, target).split(sep).join('/');
      if (!isTest && dirname(targetRelPath) === folder && !targetRelPath.endsWith('.test.ts')) {
        if (!siblingEdges.has(rel)) siblingEdges.set(rel, new Map());
        siblingEdges.get(rel).set(targetRelPath, [rel]);
      }
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
  const folderCircles = [];
  const usedCircleExceptions = new Set();
  for (const members of stronglyConnected(siblingEdges).filter((c) => c.length > 1)) {
    const key = `${dirname(members[0])}/: ${members.map((m) => m.slice(m.lastIndexOf('/') + 1)).join(' → ')}`;
    if (circleExceptions.has(key)) usedCircleExceptions.add(key);
    else folderCircles.push(`${key} (each imports another of the circle)`);
  }
  const bigFolders = [];
  const usedFolderExceptions = new Set();
  for (const [folder, n] of filesPerFolder) {
    if (n <= MAX_FILES_PER_FOLDER) continue;
    if (folderExceptions.has(folder)) usedFolderExceptions.add(folder);
    else bigFolders.push(`src/${folder}/: ${n} files (limit ${MAX_FILES_PER_FOLDER}; split it into sub-rooms by job)`);
  }
  const longBodies = [];
  const usedBodyExceptions = new Set();
  for (const b of bodies) {
    if (b.lines <= MAX_BODY_LINES) continue;
    const key = `${b.file}:${b.name}`;
    if (bodyExceptions.has(key)) usedBodyExceptions.add(key);
    else longBodies.push(`src/${b.file}:${b.line} ${b.name}: ${b.lines} lines (limit ${MAX_BODY_LINES})`);
  }
  const largest = bodies.reduce((m, b) => (b.lines > (m?.lines ?? 0) ? b : m), undefined);
  const fullest = [...filesPerFolder].reduce((m, e) => (e[1] > (m?.[1] ?? 0) ? e : m), undefined);
  const stale = [
    ...[...circleExceptions].filter((k) => !usedCircleExceptions.has(k)).map((k) => `folder circle: ${k} is broken`),
    ...[...folderExceptions].filter((k) => !usedFolderExceptions.has(k)).map((k) => `folder size: src/${k}/ is within the limit or gone`),
    ...[...bodyExceptions].filter((k) => !usedBodyExceptions.has(k)).map((k) => `body: src/${k} is within the limit or gone`),
    ...[...lineExceptions]
      .filter((rel) => !usedLineExceptions.has(rel))
      .map((rel) => `line limit: src/${rel} is within ${MAX_LINES} lines or gone`),
    ...[...importExceptions].flatMap(([rel, targets]) =>
      targets.filter((t) => !usedImportExceptions.has(`${rel} → ${t}`)).map((t) => `import: src/${rel} no longer imports src/${t}`),
    ),
  ];
  return {
    files: files.length,
    counts: {
      largestBody: largest ? `src/${largest.file}:${largest.line} ${largest.name}, ${largest.lines} lines` : 'none',
      bodiesOverLimit: bodies.filter((b) => b.lines > MAX_BODY_LINES).length,
      fullestFolder: fullest ? `src/${fullest[0]}/, ${fullest[1]} files` : 'none',
      foldersOverLimit: [...filesPerFolder.values()].filter((n) => n > MAX_FILES_PER_FOLDER).length,
      folderCircles: folderCircles.length + usedCircleExceptions.size,
      swallowedSilent: swallowed.silent,
      swallowedCommented: swallowed.commented,
      swallowedCommentedHandlers: swallowed.commentedHandlers,
    },
    offences: {
      [`files over ${MAX_LINES} lines`]: long,
      'top-level folders importing each other in a cycle': cycles,
      'imports of a higher layer (see the layer table in ARCHITECTURE.md)': upward,
      'imports out of src/types/ or src/wire/ (wire types and formats depend on nothing)': typesImports,
      'client-side imports of daemon code (the SDK and the CLI import only what CLIENT_IMPORTS allows)': clientImports,
      'imports from outside src/ in daemon code (test support and benchmarks belong to test/ and bench/)': outside,
      'packages imported at run time but listed only in devDependencies': devImports,
      'import circles between the files of one folder': folderCircles,
      [`folders over ${MAX_FILES_PER_FOLDER} files`]: bigFolders,
      [`function, method or class bodies over ${MAX_BODY_LINES} lines`]: longBodies,
      'errors swallowed without a word (name the expected failure in a comment on the line or in the catch, or log it at debug)':
        swallowed.at,
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

/** The packages package.json beside srcDir lists in devDependencies and not in dependencies. */
function devOnlyPackages(srcDir) {
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(join(dirname(srcDir), 'package.json'), 'utf8'));
  } catch {
    return new Set(); // a fixture tree without a package.json: nothing to check
  }
  const deps = new Set(Object.keys(pkg.dependencies ?? {}));
  return new Set(Object.keys(pkg.devDependencies ?? {}).filter((p) => !deps.has(p)));
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
  const c = r.counts;
  process.stdout.write(
    `check-layout: counts: largest body ${c.largestBody}; ${c.bodiesOverLimit} bodies over ${MAX_BODY_LINES} lines; fullest folder ${c.fullestFolder}; ${c.foldersOverLimit} folders over ${MAX_FILES_PER_FOLDER} files; ${c.folderCircles} import circles inside folders; swallowed errors: ${c.swallowedSilent} silent, ${c.swallowedCommented} catch blocks and ${c.swallowedCommentedHandlers} .catch handlers with a comment only\n`,
  );
  const excepted = r.excepted.length ? `\n  temporary exceptions still in use:\n${r.excepted.map((e) => `    ${e}`).join('\n')}` : '';
  process.stdout.write(
    `check-layout: ok (${r.files} files under ${where}: none over ${MAX_LINES} lines, no folder cycles, no upward imports)${excepted}\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
