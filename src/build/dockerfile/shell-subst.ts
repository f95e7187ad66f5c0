// Parameter expansion in Docker's shell lexer (shell-words.ts): `$var`, `${var}` and the modifiers
// `${var:-x}` `${var-x}` `${var:+x}` `${var+x}` `${var:?msg}` `${var?msg}`, `${var#p}` `${var##p}`
// `${var%p}` `${var%%p}` `${var/p/r}` `${var//p/r}`; the words inside a `${…}` are read by the
// lexer again (bounded nesting), the shell patterns matched by wire/glob.ts's NFA.
import { compileShellGlob, GlobBudgetError, GlobError, type Nfa } from '../../wire/glob.ts';

/** A lexer error, reported with the word as dockerd does ("failed to process …"). */
export class LexError extends Error {}

export const EOF = null;

/** What a substitution reads through: the word's cursor, and the lexer for the words it contains. */
export interface WordLexer {
  peek(): string | null;
  next(): string | null;
  process(stop: string | null, rawEscapes?: boolean): { result: string; words: string[] };
}

export class Substitution {
  constructor(
    private readonly lex: WordLexer,
    /** name → value, undefined when unset. */
    private readonly env: (name: string) => string | undefined,
    /** Leave `$name` / `${name…}` as written when name is unset. */
    private readonly skipUnsetEnv: boolean,
  ) {}

  private name(): string {
    let name = '';
    for (let ch = this.lex.peek(); ch !== EOF; ch = this.lex.peek()) {
      if (name === '' && /^\d$/u.test(ch)) {
        while (this.lex.peek() !== EOF && /^\d$/u.test(this.lex.peek()!)) name += this.lex.next();
        return name;
      }
      if (name === '' && '@*#?-$!0'.includes(ch)) return this.lex.next()!;
      if (!/^[\p{L}\p{Nd}_]$/u.test(ch)) break;
      name += this.lex.next();
    }
    return name;
  }

  /** At a `$`: the substitution's value. */
  dollar(): string {
    this.lex.next();
    if (this.lex.peek() !== '{') {
      const name = this.name();
      if (name === '') return '$';
      const value = this.env(name);
      if (value === undefined && this.skipUnsetEnv) return `$${name}`;
      return value ?? '';
    }
    this.lex.next();
    const first = this.lex.peek();
    if (first === EOF) throw new LexError("syntax error: missing '}'");
    if (first === '{' || first === '}' || first === ':') throw new LexError('syntax error: bad substitution');
    const name = this.name();
    let ch = this.lex.next();
    let chs = ch ?? '';
    let nullIsUnset = false;
    if (ch === '}') {
      const value = this.env(name);
      if (value === undefined && this.skipUnsetEnv) return `\${${name}}`;
      return value ?? '';
    }
    if (ch === ':') {
      nullIsUnset = true;
      ch = this.lex.next();
      chs += ch ?? '';
    } else if (ch === '/') {
      return this.replace(name);
    } else if (ch === EOF) {
      throw new LexError("syntax error: missing '}'");
    } else if (!'+-?#%'.includes(ch)) {
      throw new LexError(`unsupported modifier (${chs}) in substitution`);
    }
    const rawEscapes = ch === '#' || ch === '%';
    if (nullIsUnset && rawEscapes) throw new LexError(`unsupported modifier (${chs}) in substitution`);
    let word: string;
    try {
      word = this.lex.process('}', rawEscapes).result;
    } catch (err) {
      if (this.lex.peek() === EOF) throw new LexError("syntax error: missing '}'");
      throw err;
    }
    const value = this.env(name);
    const set = value !== undefined;
    if (this.skipUnsetEnv && !set) return `\${${name}${chs}${word}}`;
    const empty = !set || (nullIsUnset && value === '');
    switch (ch) {
      case '-': return empty ? word : value!;
      case '+': return empty ? '' : word;
      case '?':
        if (!set) throw new LexError(`${name}: ${word || 'is not allowed to be unset'}`);
        if (nullIsUnset && value === '') throw new LexError(`${name}: ${word || 'is not allowed to be empty'}`);
        return value;
      case '#': case '%': {
        const greedy = word.startsWith(ch);
        const pattern = greedy ? word.slice(1) : word;
        return ch === '%' ? trimSuffix(pattern, value ?? '', greedy) : trimPrefix(pattern, value ?? '', greedy);
      }
      default:
        throw new LexError(`unsupported modifier (${chs}) in substitution`);
    }
  }

  private replace(name: string): string {
    const all = this.lex.peek() === '/';
    if (all) this.lex.next();
    const part = (stop: string, missing: string) => {
      try {
        return this.lex.process(stop, true).result;
      } catch (err) {
        if (this.lex.peek() === EOF) throw new LexError(missing);
        throw err;
      }
    };
    const pattern = part('/', "syntax error: missing '/' in ${}");
    const replacement = part('}', "syntax error: missing '}'");
    const value = this.env(name);
    if (value === undefined && this.skipUnsetEnv) return `\${${name}/${pattern}/${replacement}}`;
    return replacePattern(pattern, value ?? '', replacement, all);
  }
}

/** The shell pattern's NFA; a bad escape is the lexer's error, as in Docker. */
function shellNfa(pattern: string, reversed = false): Nfa {
  try {
    return compileShellGlob(pattern, reversed);
  } catch (err) {
    if (err instanceof GlobError) throw new LexError(`invalid pattern (${pattern}) in substitution: ${err.message}`);
    throw err;
  }
}

function guarded<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof GlobBudgetError) throw new LexError(err.message);
    throw err;
  }
}

/** `${v#p}` / `${v##p}`: the shortest / longest prefix matching the pattern removed. */
function trimPrefix(pattern: string, value: string, greedy: boolean): string {
  const chars = Array.from(value);
  const ends = guarded(() => shellNfa(pattern).ends(chars));
  if (!ends.length) return value;
  return chars.slice(greedy ? ends[ends.length - 1]! : ends[0]!).join('');
}

/** `${v%p}` / `${v%%p}`: the shortest / longest suffix matching the pattern removed (one pass, backwards). */
function trimSuffix(pattern: string, value: string, greedy: boolean): string {
  const chars = Array.from(value);
  const lengths = guarded(() => shellNfa(pattern, true).ends([...chars].reverse()));
  if (!lengths.length) return value;
  return chars.slice(0, chars.length - (greedy ? lengths[lengths.length - 1]! : lengths[0]!)).join('');
}

/** `${v/p/r}` and `${v//p/r}`: the leftmost longest match(es) replaced. */
function replacePattern(pattern: string, value: string, replacement: string, all: boolean): string {
  const chars = Array.from(value);
  const nfa = shellNfa(pattern);
  const budget = { ops: 50_000_000 };
  let out = '';
  let pos = 0;
  let replaced = false;
  while (pos <= chars.length && !(replaced && !all)) {
    const ends = guarded(() => nfa.ends(chars, pos, budget));
    if (!ends.length) {
      if (pos < chars.length) out += chars[pos];
      pos++;
      continue;
    }
    const end = ends[ends.length - 1]!;
    out += replacement;
    replaced = true;
    if (end === pos) {
      if (pos < chars.length) out += chars[pos];
      pos++;
    } else {
      pos = end;
    }
  }
  return out + chars.slice(pos).join('');
}
