// Docker's shell lexer for variable substitution in Dockerfile words (buildkit's
// frontend/dockerfile/shell, which dockerd's classic builder uses): `$var`, `${var}`,
// `${var:-x}` `${var-x}` `${var:+x}` `${var+x}` `${var:?msg}` `${var?msg}`, `${var#p}` `${var##p}`
// `${var%p}` `${var%%p}` `${var/p/r}` `${var//p/r}`, single and double quotes, and the escape
// character. A word is either processed whole (expandWord: quotes removed, no splitting) or split
// into words after expansion (expandWords, used by EXPOSE). expandInstruction applies it to the
// fields Docker expands, per instruction; RUN, CMD, ENTRYPOINT, SHELL, HEALTHCHECK, ONBUILD and
// MAINTAINER are never expanded by the builder (the shell does it at run time).
import { invalidParameter } from '../../errors.ts';
import { compileShellGlob, GlobBudgetError, GlobError, type Nfa } from '../../wire/glob.ts';
import { isSpace } from './split.ts';
import type { EscapeChar, Instruction } from './types.ts';

/** name → value, undefined when unset. */
export type EnvLookup = (name: string) => string | undefined;

export interface LexOptions {
  /** Keep quote characters in the result (the heredoc detector's mode). */
  rawQuotes?: boolean;
  /** Keep escape characters in the result. */
  rawEscapes?: boolean;
  /** Leave `$name` / `${name…}` as written when name is unset. */
  skipUnsetEnv?: boolean;
}

class LexError extends Error {}

const EOF = null;
const MAX_DEPTH = 100;

class Words {
  words: string[] = [];
  private buf = '';
  private inWord = false;
  addChar(ch: string): void {
    if (isSpace(ch)) {
      if (this.inWord && this.buf.length) {
        this.words.push(this.buf);
        this.buf = '';
        this.inWord = false;
      }
    } else {
      this.addRaw(ch);
    }
  }
  addRaw(s: string): void {
    this.buf += s;
    this.inWord = true;
  }
  addString(s: string): void {
    for (const ch of s) this.addChar(ch);
  }
  done(): string[] {
    if (this.buf.length) this.words.push(this.buf);
    this.buf = '';
    this.inWord = false;
    return this.words;
  }
}

class ShellWord {
  private readonly chars: string[];
  private pos = 0;
  private rawEscapes: boolean;
  /** Nesting of `${…${…}}`: bounded, so a hostile word cannot exhaust the stack. */
  private depth = 0;

  constructor(word: string, private readonly env: EnvLookup, private readonly escape: string, private readonly opts: LexOptions) {
    this.chars = Array.from(word);
    this.rawEscapes = !!opts.rawEscapes;
  }

  private peek(): string | null {
    return this.pos < this.chars.length ? this.chars[this.pos]! : EOF;
  }
  private next(): string | null {
    return this.pos < this.chars.length ? this.chars[this.pos++]! : EOF;
  }

  process(stop: string | null = EOF, rawEscapes = this.rawEscapes): { result: string; words: string[] } {
    const saved = this.rawEscapes;
    this.rawEscapes = rawEscapes;
    if (++this.depth > MAX_DEPTH) throw new LexError(`substitutions nested deeper than ${MAX_DEPTH}`);
    try {
      let result = '';
      const words = new Words();
      for (let ch = this.peek(); ch !== EOF; ch = this.peek()) {
        if (stop !== EOF && ch === stop) {
          this.next();
          return { result, words: words.done() };
        }
        if (ch === '$') {
          const v = this.dollar();
          result += v;
          words.addString(v);
        } else if (ch === '<') {
          const v = this.possibleHeredoc();
          result += v;
          words.addRaw(v);
        } else if (ch === "'" || ch === '"') {
          const v = ch === "'" ? this.singleQuote() : this.doubleQuote();
          result += v;
          words.addRaw(v);
        } else {
          let c = this.next()!;
          if (c === this.escape) {
            if (this.rawEscapes) {
              words.addRaw(c);
              result += c;
            }
            const n = this.next();
            if (n === EOF) break;
            c = n;
            words.addRaw(c);
          } else {
            words.addChar(c);
          }
          result += c;
        }
      }
      if (stop !== EOF) throw new LexError(`unexpected end of statement while looking for matching ${stop}`);
      return { result, words: words.done() };
    } finally {
      this.rawEscapes = saved;
      this.depth--;
    }
  }

  private singleQuote(): string {
    let out = '';
    const open = this.next()!;
    if (this.opts.rawQuotes) out += open;
    for (;;) {
      const ch = this.next();
      if (ch === EOF) throw new LexError('unexpected end of statement while looking for matching single-quote');
      if (ch === "'") {
        if (this.opts.rawQuotes) out += ch;
        return out;
      }
      out += ch;
    }
  }

  private doubleQuote(): string {
    let out = '';
    const open = this.next()!;
    if (this.opts.rawQuotes) out += open;
    for (;;) {
      const p = this.peek();
      if (p === EOF) throw new LexError('unexpected end of statement while looking for matching double-quote');
      if (p === '"') {
        this.next();
        if (this.opts.rawQuotes) out += p;
        return out;
      }
      if (p === '$') {
        out += this.dollar();
        continue;
      }
      let ch = this.next()!;
      if (ch === this.escape) {
        if (this.rawEscapes) out += ch;
        const n = this.peek();
        if (n === EOF) continue;
        if (n === '"' || n === '$' || n === this.escape) ch = this.next()!;
      }
      out += ch;
    }
  }

  private possibleHeredoc(): string {
    this.next();
    if (this.peek() !== '<') return '<';
    this.next();
    let space = '';
    for (let p = this.peek(); p === ' ' || p === '\t' || p === '\r'; p = this.peek()) space += this.next();
    return `<<${space}`;
  }

  private name(): string {
    let name = '';
    for (let ch = this.peek(); ch !== EOF; ch = this.peek()) {
      if (name === '' && /^\d$/u.test(ch)) {
        while (this.peek() !== EOF && /^\d$/u.test(this.peek()!)) name += this.next();
        return name;
      }
      if (name === '' && '@*#?-$!0'.includes(ch)) return this.next()!;
      if (!/^[\p{L}\p{Nd}_]$/u.test(ch)) break;
      name += this.next();
    }
    return name;
  }

  private dollar(): string {
    this.next();
    if (this.peek() !== '{') {
      const name = this.name();
      if (name === '') return '$';
      const value = this.env(name);
      if (value === undefined && this.opts.skipUnsetEnv) return `$${name}`;
      return value ?? '';
    }
    this.next();
    const first = this.peek();
    if (first === EOF) throw new LexError("syntax error: missing '}'");
    if (first === '{' || first === '}' || first === ':') throw new LexError('syntax error: bad substitution');
    const name = this.name();
    let ch = this.next();
    let chs = ch ?? '';
    let nullIsUnset = false;
    if (ch === '}') {
      const value = this.env(name);
      if (value === undefined && this.opts.skipUnsetEnv) return `\${${name}}`;
      return value ?? '';
    }
    if (ch === ':') {
      nullIsUnset = true;
      ch = this.next();
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
      word = this.process('}', rawEscapes).result;
    } catch (err) {
      if (this.peek() === EOF) throw new LexError("syntax error: missing '}'");
      throw err;
    }
    const value = this.env(name);
    const set = value !== undefined;
    if (this.opts.skipUnsetEnv && !set) return `\${${name}${chs}${word}}`;
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
    const all = this.peek() === '/';
    if (all) this.next();
    const part = (stop: string, missing: string) => {
      try {
        return this.process(stop, true).result;
      } catch (err) {
        if (this.peek() === EOF) throw new LexError(missing);
        throw err;
      }
    };
    const pattern = part('/', "syntax error: missing '/' in ${}");
    const replacement = part('}', "syntax error: missing '}'");
    const value = this.env(name);
    if (value === undefined && this.opts.skipUnsetEnv) return `\${${name}/${pattern}/${replacement}}`;
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

function run<T>(word: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof LexError) throw invalidParameter(`failed to process ${JSON.stringify(word)}: ${err.message}`);
    throw err;
  }
}

/** One word, expanded and unquoted, never split (Docker's ProcessWord). */
export function expandWord(word: string, env: EnvLookup, escapeChar: EscapeChar = '\\', opts: LexOptions = {}): string {
  return run(word, () => new ShellWord(word, env, escapeChar, opts).process().result);
}

/** Expanded and split into words at unquoted whitespace (Docker's ProcessWords). */
export function expandWords(word: string, env: EnvLookup, escapeChar: EscapeChar = '\\', opts: LexOptions = {}): string[] {
  return run(word, () => new ShellWord(word, env, escapeChar, opts).process().words);
}

/** A lookup over `KEY=value` strings (the last of a key wins, as in Docker's EnvsFromSlice). */
export function envFromList(list: readonly string[]): EnvLookup {
  const m = new Map<string, string>();
  for (const e of list) {
    const eq = e.indexOf('=');
    if (eq < 0) m.set(e, '');
    else m.set(e.slice(0, eq), e.slice(eq + 1));
  }
  return (name) => m.get(name);
}

/**
 * The instruction with the words Docker expands at dispatch substituted from `env` (the stage's
 * ENV plus the ARGs in scope). FROM is left alone: it sees only the meta ARGs (stages.ts).
 * COPY --from is expanded too (BuildKit does; the classic builder took it literally).
 */
export function expandInstruction<T extends Instruction>(inst: T, env: EnvLookup, escapeChar: EscapeChar = '\\'): T {
  const w = (s: string) => expandWord(s, env, escapeChar);
  const i = inst as Instruction;
  switch (i.kind) {
    case 'ENV': case 'LABEL':
      return { ...i, pairs: i.pairs.map(([k, v]) => [w(k), w(v)]) } as T;
    case 'ARG':
      return { ...i, args: i.args.map((a) => (a.default === undefined ? { name: w(a.name) } : { name: w(a.name), default: w(a.default) })) } as T;
    case 'COPY': case 'ADD': {
      const out = { ...i, sources: i.sources.map(w), dest: w(i.dest) };
      if (i.chown !== undefined) out.chown = w(i.chown);
      if (i.chmod !== undefined) out.chmod = w(i.chmod);
      if (i.from !== undefined) out.from = w(i.from);
      return out as T;
    }
    case 'WORKDIR': return { ...i, path: w(i.path) } as T;
    case 'USER': return { ...i, user: w(i.user) } as T;
    case 'STOPSIGNAL': return { ...i, signal: w(i.signal) } as T;
    case 'VOLUME': return { ...i, paths: i.paths.map(w) } as T;
    case 'EXPOSE': return { ...i, ports: i.ports.flatMap((p) => expandWords(p, env, escapeChar)) } as T;
    default: return inst;
  }
}
