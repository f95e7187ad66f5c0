// The word-level splitting the Dockerfile parser does before any variable substitution, with the
// rules of Docker's parser (buildkit frontend/dockerfile/parser): the instruction keyword and its
// `--flags`, words that keep their quotes (ENV, LABEL, ARG), whitespace-split words (FROM, EXPOSE,
// COPY shell form) and the JSON (exec) form. Nothing here expands variables.

/** Whitespace as Go's unicode.IsSpace sees it (ASCII plus the Unicode White_Space characters). */
const SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;
export const isSpace = (ch: string): boolean => SPACE.test(ch);

/** Go's `[\t\v\f\r ]+`, the separator of whitespace-split instructions. */
const WS = /[\t\v\f\r ]+/;

export function splitWhitespace(rest: string): string[] {
  return rest === '' ? [] : rest.split(WS);
}

/** `rest` split in two at the first whitespace run (the legacy `ENV key value` form). */
export function splitFirstWhitespace(rest: string): [string] | [string, string] {
  const m = WS.exec(rest);
  if (!m) return [rest];
  return [rest.slice(0, m.index), rest.slice(m.index + m[0].length)];
}

/**
 * The keyword, the leading `--flags` and the rest of an instruction line. Flags end at the first
 * word not starting with `--` (or at a bare `--`); quotes inside a flag are removed and the escape
 * character escapes the next character, as Docker's extractBuilderFlags does.
 */
export function splitCommand(line: string, escape: string): { cmd: string; flags: string[]; rest: string } {
  const trimmed = line.trim();
  const parts = splitFirstWhitespace(trimmed);
  if (parts.length === 1) return { cmd: parts[0], flags: [], rest: '' };
  const { flags, rest } = extractFlags(parts[1], escape);
  return { cmd: parts[0], flags, rest: rest.trim() };
}

function extractFlags(line: string, escape: string): { flags: string[]; rest: string } {
  const flags: string[] = [];
  let pos = 0;
  const n = line.length;
  for (;;) {
    while (pos < n && isSpace(line[pos]!)) pos++;
    if (pos >= n) return { flags, rest: '' };
    if (!line.startsWith('--', pos)) return { flags, rest: line.slice(pos) };
    // One flag word: quotes removed, escapes applied.
    let word = '';
    let blankOk = false;
    let quote = '';
    for (; pos < n; pos++) {
      let ch = line[pos]!;
      if (quote) {
        if (ch === quote) { quote = ''; continue; }
        if (ch === escape) {
          if (pos + 1 === n) { quote = ''; continue; }
          ch = line[++pos]!;
        }
        word += ch;
        continue;
      }
      if (isSpace(ch)) break;
      if (ch === "'" || ch === '"') { quote = ch; blankOk = true; continue; }
      if (ch === escape) {
        if (pos + 1 === n) continue;
        ch = line[++pos]!;
      }
      word += ch;
    }
    if (word === '--') return { flags, rest: line.slice(pos) };
    if (blankOk || word.length > 0) flags.push(word);
  }
}

/**
 * Words separated by whitespace, quotes and escapes kept as written (Docker's parseWords): used by
 * ENV, LABEL and ARG, whose words are expanded (and unquoted) only at dispatch.
 */
export function parseWords(rest: string, escape: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let blankOk = false;
  let quote = '';
  const chars = Array.from(rest);
  for (let i = 0; i < chars.length; i++) {
    let ch = chars[i]!;
    if (!inWord) {
      if (isSpace(ch)) continue;
      inWord = true;
    }
    if (quote) {
      if (ch === quote) quote = '';
      else if (ch === escape && quote !== "'") {
        if (i + 1 === chars.length) { quote = ''; continue; }
        word += ch;
        ch = chars[++i]!;
      }
      word += ch;
      continue;
    }
    if (isSpace(ch)) {
      if (blankOk || word.length > 0) words.push(word);
      word = '';
      inWord = false;
      blankOk = false;
      continue;
    }
    if (ch === "'" || ch === '"') { quote = ch; blankOk = true; }
    else if (ch === escape) {
      if (i + 1 === chars.length) continue;
      word += ch;
      ch = chars[++i]!;
    }
    word += ch;
  }
  if (inWord && (blankOk || word.length > 0)) words.push(word);
  return words;
}

export class JsonArrayError extends Error {}

/**
 * The exec (JSON) form: a JSON array of strings → the strings; anything that is not a JSON array
 * → null (the caller falls back to the shell form); an array holding a non-string → JsonArrayError.
 */
export function parseJsonArray(rest: string): string[] | null {
  let i = 0;
  while (i < rest.length && isSpace(rest[i]!)) i++;
  const s = rest.slice(i);
  if (!s.startsWith('[')) return null;
  let value: unknown;
  try {
    value = JSON.parse(s);
  } catch {
    // not JSON: the shell form
    return null;
  }
  if (!Array.isArray(value)) return null;
  if (!value.every((v) => typeof v === 'string')) {
    throw new JsonArrayError('when using JSON array syntax, arrays must be comprised of strings only');
  }
  return value as string[];
}

/** `rest` split at its first whitespace, the second part left-trimmed (HEALTHCHECK's type). */
export function splitHealthType(rest: string): { type: string; rest: string } {
  let sep = 0;
  while (sep < rest.length && !isSpace(rest[sep]!)) sep++;
  let next = sep;
  while (next < rest.length && isSpace(rest[next]!)) next++;
  return { type: rest.slice(0, sep), rest: rest.slice(next) };
}
