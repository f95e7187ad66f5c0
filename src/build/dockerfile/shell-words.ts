// Docker's shell lexer for variable substitution in Dockerfile words (buildkit's
// frontend/dockerfile/shell, which dockerd's classic builder uses): `$var`, `${var}`,
// `${var:-x}` `${var-x}` `${var:+x}` `${var+x}` `${var:?msg}` `${var?msg}`, `${var#p}` `${var##p}`
// `${var%p}` `${var%%p}` `${var/p/r}` `${var//p/r}` (those in shell-subst.ts), single and double
// quotes, and the escape character. A word is either processed whole (expandWord: quotes removed, no splitting) or split
// into words after expansion (expandWords, used by EXPOSE). expandInstruction applies it to the
// fields Docker expands, per instruction; RUN, CMD, ENTRYPOINT, SHELL, HEALTHCHECK, ONBUILD and
// MAINTAINER are never expanded by the builder (the shell does it at run time).
import { invalidParameter } from '../../errors.ts';
import { isSpace } from './split.ts';
import type { EscapeChar, Instruction } from './types.ts';
import { EOF, LexError, Substitution, type WordLexer } from './shell-subst.ts';

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

class ShellWord implements WordLexer {
  private readonly chars: string[];
  private pos = 0;
  private rawEscapes: boolean;
  /** Nesting of `${…${…}}`: bounded, so a hostile word cannot exhaust the stack. */
  private depth = 0;
  /** `$…` and `${…}` (shell-subst.ts), which reads the words inside through this lexer. */
  private readonly subst: Substitution;

  constructor(word: string, env: EnvLookup, private readonly escape: string, private readonly opts: LexOptions) {
    this.chars = Array.from(word);
    this.rawEscapes = !!opts.rawEscapes;
    this.subst = new Substitution(this, env, !!opts.skipUnsetEnv);
  }

  peek(): string | null {
    return this.pos < this.chars.length ? this.chars[this.pos]! : EOF;
  }
  next(): string | null {
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
          const v = this.subst.dollar();
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
        out += this.subst.dollar();
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
