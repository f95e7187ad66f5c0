// Linear-time glob matching: the patterns come from Dockerfiles, build contexts (.dockerignore) and
// API filters, so they are hostile input, and JavaScript's backtracking RegExp takes exponential
// time on patterns such as `*a*a*a*a*b` or `**/**/**/x` (Go, whose matchers Docker uses, has a
// linear regexp engine). A pattern is compiled to a small NFA and run by state-set simulation:
// O(pattern × text) per match. Three dialects: Go's filepath.Match (COPY sources), moby's
// patternmatcher (.dockerignore) and Docker's shell patterns (`${v%p}`, `${v#p}`, `${v/p/r}`).

type Test = (ch: string) => boolean;

export class GlobError extends Error {}

/** A pattern made too much work (text × pattern beyond the budget). */
export class GlobBudgetError extends GlobError {}

const BUDGET = 50_000_000;

export class Nfa {
  private readonly trans: Array<Array<[Test, number]>> = [];
  private readonly eps: number[][] = [];
  private closures: number[][] | null = null;
  readonly start: number;
  accept = -1;

  constructor() {
    this.start = this.state();
  }

  state(): number {
    this.trans.push([]);
    this.eps.push([]);
    return this.trans.length - 1;
  }
  edge(from: number, test: Test, to: number): void {
    this.trans[from]!.push([test, to]);
  }
  epsilon(from: number, to: number): void {
    this.eps[from]!.push(to);
  }

  /** Each state's epsilon closure, computed once. */
  private closureOf(s: number): number[] {
    if (!this.closures) {
      this.closures = this.eps.map((_, i) => {
        const seen = new Set<number>();
        const stack = [i];
        while (stack.length) {
          const x = stack.pop()!;
          if (seen.has(x)) continue;
          seen.add(x);
          stack.push(...this.eps[x]!);
        }
        return [...seen];
      });
    }
    return this.closures[s]!;
  }

  /** Every end position p such that chars[from, p) matches the whole pattern, ascending. */
  ends(chars: readonly string[], from = 0, budget = { ops: BUDGET }): number[] {
    const mark = new Int32Array(this.trans.length).fill(-1);
    let gen = 0;
    const add = (list: number[], s: number) => {
      for (const c of this.closureOf(s)) {
        if (mark[c] !== gen) {
          mark[c] = gen;
          list.push(c);
        }
      }
    };
    let cur: number[] = [];
    add(cur, this.start);
    const out: number[] = [];
    if (mark[this.accept] === gen) out.push(from);
    for (let p = from; p < chars.length && cur.length; p++) {
      budget.ops -= cur.length;
      if (budget.ops < 0) throw new GlobBudgetError('pattern too complex for this text');
      const ch = chars[p]!;
      const next: number[] = [];
      gen++;
      for (const s of cur) for (const [test, to] of this.trans[s]!) if (test(ch)) add(next, to);
      cur = next;
      if (mark[this.accept] === gen) out.push(p + 1);
    }
    return out;
  }

  /** Whether the whole text matches. */
  matches(text: string): boolean {
    const chars = Array.from(text);
    const e = this.ends(chars);
    return e.length > 0 && e[e.length - 1] === chars.length;
  }
}

/** Builds an NFA as a sequence of steps. */
class Builder {
  readonly nfa = new Nfa();
  private cur = this.nfa.start;
  /** One character satisfying `test`. */
  one(test: Test): void {
    const next = this.nfa.state();
    this.nfa.edge(this.cur, test, next);
    this.cur = next;
  }
  /** Any number of characters satisfying `test`. */
  many(test: Test): void {
    this.nfa.edge(this.cur, test, this.cur);
  }
  /** `(X* sep)?`: optionally any characters satisfying `test`, then `sep`. */
  optionalPrefix(test: Test, sep: string): void {
    const loop = this.nfa.state();
    const after = this.nfa.state();
    this.nfa.epsilon(this.cur, loop);
    this.nfa.epsilon(this.cur, after);
    this.nfa.edge(loop, test, loop);
    this.nfa.edge(loop, (c) => c === sep, after);
    this.cur = after;
  }
  done(): Nfa {
    this.nfa.accept = this.cur;
    return this.nfa;
  }
}

const notChar =
  (x: string): Test =>
  (c) =>
    c !== x;
const isChar =
  (x: string): Test =>
  (c) =>
    c === x;

/** A `[...]` class starting at chars[i] (the `[`): its test and the index after `]`; null if malformed. */
function parseClass(chars: readonly string[], i: number): { test: Test; next: number } | null {
  let j = i + 1;
  let neg = false;
  if (chars[j] === '^') {
    neg = true;
    j++;
  }
  const ranges: Array<[string, string]> = [];
  for (;;) {
    if (j >= chars.length) return null;
    if (chars[j] === ']' && ranges.length > 0) break;
    let lo = chars[j]!;
    if (lo === '\\') {
      if (++j >= chars.length) return null;
      lo = chars[j]!;
    } else if (lo === '-' || lo === ']') {
      return null;
    }
    j++;
    let hi = lo;
    if (chars[j] === '-' && chars[j + 1] !== undefined && chars[j + 1] !== ']') {
      hi = chars[j + 1]!;
      j += 2;
      if (hi === '\\') {
        if (j >= chars.length) return null;
        hi = chars[j++]!;
      }
      if (hi < lo) return null;
    }
    ranges.push([lo, hi]);
  }
  const test: Test = (c) => ranges.some(([lo, hi]) => c >= lo && c <= hi) !== neg;
  return { test, next: j + 1 };
}

/** A `[...]` class or a literal character at `chars[i]`, added to `b`: the index of its last character, -1 if malformed. */
function classOrLiteral(chars: string[], i: number, b: Builder): number {
  if (chars[i] !== '[') {
    b.one(isChar(chars[i]!));
    return i;
  }
  const cls = parseClass(chars, i);
  if (!cls) return -1;
  b.one(cls.test);
  return cls.next - 1;
}

/** Go's filepath.Match: `*` and `?` stop at `/`; `[...]` classes; `\` escapes. Null if malformed. */
export function compileGoGlob(pattern: string): Nfa | null {
  const chars = Array.from(pattern);
  const b = new Builder();
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '*') b.many(notChar('/'));
    else if (ch === '?') b.one(notChar('/'));
    else if (ch === '\\') {
      if (i + 1 >= chars.length) return null;
      b.one(isChar(chars[++i]!));
    } else {
      i = classOrLiteral(chars, i, b);
      if (i < 0) return null;
    }
  }
  return b.done();
}

/**
 * moby/patternmatcher's regular-expression patterns: `*` and `?` stop at `/`; `**` at the end is
 * anything, elsewhere (with its `/`) any number of leading directories; `[...]` classes; `\x` is x.
 */
export function compileIgnoreGlob(pattern: string): Nfa | null {
  const chars = Array.from(pattern);
  const b = new Builder();
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '*') {
      if (chars[i + 1] === '*') {
        i++;
        if (chars[i + 1] === '/') i++;
        if (i + 1 >= chars.length) b.many(notChar('\n'));
        else b.optionalPrefix(notChar('\n'), '/');
      } else {
        b.many(notChar('/'));
      }
    } else if (ch === '?') {
      b.one(notChar('/'));
    } else if (ch === '\\') {
      if (i + 1 < chars.length) b.one(isChar(chars[++i]!));
      else b.one(isChar('\\'));
    } else {
      i = classOrLiteral(chars, i, b);
      if (i < 0) return null;
    }
  }
  return b.done();
}

/**
 * Docker's shell patterns: `*` any run, `?` any one character (neither crosses a newline), `\x`
 * for x in `*?\`. `reversed`: the pattern read backwards, to match suffixes on reversed text.
 */
export function compileShellGlob(pattern: string, reversed = false): Nfa {
  const chars = Array.from(pattern);
  const tokens: Array<{ many: boolean; test: Test }> = [];
  for (let i = 0; i < chars.length; i++) {
    let ch = chars[i]!;
    if (ch === '*') {
      tokens.push({ many: true, test: notChar('\n') });
      continue;
    }
    if (ch === '?') {
      tokens.push({ many: false, test: notChar('\n') });
      continue;
    }
    if (ch === '\\') {
      const n = chars[i + 1];
      if (n === '}' || n === '/') continue; // the backslash only protected the delimiter
      if (n !== '*' && n !== '?' && n !== '\\') throw new GlobError(`invalid escape '\\${n ?? ''}'`);
      ch = n;
      i++;
    }
    tokens.push({ many: false, test: isChar(ch) });
  }
  if (reversed) tokens.reverse();
  const b = new Builder();
  for (const t of tokens) {
    if (t.many) b.many(t.test);
    else b.one(t.test);
  }
  return b.done();
}
