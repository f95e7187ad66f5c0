// The parser of re2.ts: a pattern in Go's RE2 syntax read into a syntax tree (literals, classes,
// concatenations, alternations, repeats, assertions) with Go's error messages; re2.ts compiles the
// tree into a program for its linear-time matcher. Groups nest on an explicit stack, never by
// recursion over the pattern.

/** Go's limit on one repeat count, and on nesting. */
const MAX_REPEAT = 1000;
const MAX_NESTING = 1000;

export class Re2SyntaxError extends Error {
  constructor(code: string, expr: string) {
    // Go shows the whole expression; a hostile one of 100 000 characters is cut short here.
    super(`error parsing regexp: ${code}: \`${expr.length > 1000 ? `${expr.slice(0, 1000)}…` : expr}\``);
    this.name = 'Re2SyntaxError';
  }
}

interface Flags {
  i: boolean;
  s: boolean;
  m: boolean;
}

export type Ranges = number[]; // pairs lo, hi (inclusive) of code points

export type Node =
  | { t: 'lit'; c: number; fold: boolean }
  | { t: 'any'; nl: boolean }
  | { t: 'class'; r: Ranges; neg: boolean; fold: boolean }
  | { t: 'cat'; subs: Node[] }
  | { t: 'alt'; subs: Node[] }
  | { t: 'rep'; sub: Node; min: number; max: number; fromOp: boolean }
  | { t: 'assert'; a: Assertion };

export type Assertion = 'bol' | 'eol' | 'bot' | 'eot' | 'word' | 'nonword';

const PERL: Record<string, Ranges> = {
  d: [0x30, 0x39],
  s: [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20],
  w: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
};

const POSIX: Record<string, Ranges> = {
  alnum: [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
  alpha: [0x41, 0x5a, 0x61, 0x7a],
  ascii: [0, 0x7f],
  blank: [0x09, 0x09, 0x20, 0x20],
  cntrl: [0, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
  space: [0x09, 0x0d, 0x20, 0x20],
  upper: [0x41, 0x5a],
  word: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
  xdigit: [0x30, 0x39, 0x41, 0x46, 0x61, 0x66],
};

/** The complement of ranges within [0, 0x10ffff]. */
function negate(r: Ranges): Ranges {
  const sorted: [number, number][] = [];
  for (let i = 0; i < r.length; i += 2) sorted.push([r[i]!, r[i + 1]!]);
  sorted.sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of sorted) {
    if (lo > next) out.push(next, lo - 1);
    next = Math.max(next, hi + 1);
  }
  if (next <= 0x10ffff) out.push(next, 0x10ffff);
  return out;
}

const isHexDigit = (c: string) => /^[0-9a-fA-F]$/.test(c);

/** One frame of the parser's explicit stack: an open group. */
interface Frame {
  alts: Node[];
  cur: Node[];
  flags: Flags;
  /** Flags to restore when the group closes. */
  outer: Flags;
  start: number;
}

/** The pattern being read: its code points and the position of the next one. */
interface Cursor {
  readonly cps: string[];
  i: number;
}

function err(code: string, expr: string): never {
  throw new Re2SyntaxError(code, expr);
}

function closeAlt(f: Frame): Node {
  const cat = (xs: Node[]): Node => (xs.length === 1 ? xs[0]! : { t: 'cat', subs: xs });
  if (f.alts.length === 0) return cat(f.cur);
  return { t: 'alt', subs: [...f.alts, cat(f.cur)] };
}

/** An escape at p.cps[p.i] (the backslash): a node, or ranges inside a class. */
function readEscape(p: Cursor, inClass: boolean): { c?: number; r?: Ranges; a?: Assertion } {
  const start = p.i;
  p.i++;
  if (p.i >= p.cps.length) err('trailing backslash at end of expression', '');
  const ch = p.cps[p.i++]!;
  const cp = ch.codePointAt(0)!;
  if (ch === 'x') {
    if (p.cps[p.i] === '{') {
      const end = p.cps.indexOf('}', p.i);
      const hex = end < 0 ? '' : p.cps.slice(p.i + 1, end).join('');
      if (end < 0 || hex === '' || !hex.split('').every(isHexDigit) || parseInt(hex, 16) > 0x10ffff) {
        err('invalid escape sequence', p.cps.slice(start, end < 0 ? p.cps.length : end + 1).join(''));
      }
      p.i = end + 1;
      return { c: parseInt(hex, 16) };
    }
    const hex = p.cps.slice(p.i, p.i + 2).join('');
    if (hex.length < 2 || !isHexDigit(hex[0]!) || !isHexDigit(hex[1]!))
      err('invalid escape sequence', p.cps.slice(start, p.i + 2).join(''));
    p.i += 2;
    return { c: parseInt(hex, 16) };
  }
  if (ch >= '0' && ch <= '7') {
    // Octal: \0 alone, or up to three digits (Go refuses \1-\9 backreferences as \8 \9 do not exist).
    if (ch !== '0' && !(p.cps[p.i]! >= '0' && p.cps[p.i]! <= '7')) err('invalid escape sequence', p.cps.slice(start, p.i).join(''));
    let v = cp - 0x30;
    for (let k = 0; k < 2 && p.cps[p.i]! >= '0' && p.cps[p.i]! <= '7'; k++) v = v * 8 + (p.cps[p.i++]!.codePointAt(0)! - 0x30);
    return { c: v };
  }
  const simple: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };
  if (simple[ch] !== undefined) return { c: simple[ch] };
  const lower = ch.toLowerCase();
  if (PERL[lower]) return { r: ch === lower ? PERL[lower] : negate(PERL[lower]) };
  if (!inClass) {
    if (ch === 'A') return { a: 'bot' };
    if (ch === 'z') return { a: 'eot' };
    if (ch === 'b') return { a: 'word' };
    if (ch === 'B') return { a: 'nonword' };
  }
  if (ch === 'p' || ch === 'P') err('invalid character class range', p.cps.slice(start, p.i).join(''));
  // Any punctuation may be escaped to stand for itself.
  if (cp < 0x80 && !/[0-9A-Za-z]/.test(ch)) return { c: cp };
  return err('invalid escape sequence', p.cps.slice(start, p.i).join(''));
}

/** A bracketed class at p.cps[p.i] (the `[`); `fold` under the i flag. */
function readClass(p: Cursor, fold: boolean): Node {
  const start = p.i;
  p.i++; // [
  let neg = false;
  if (p.cps[p.i] === '^') {
    neg = true;
    p.i++;
  }
  const r: Ranges = [];
  let first = true;
  for (;;) {
    if (p.i >= p.cps.length) err('missing closing ]', p.cps.slice(start).join(''));
    const ch = p.cps[p.i]!;
    if (ch === ']' && !first) {
      p.i++;
      break;
    }
    first = false;
    if (ch === '[' && p.cps[p.i + 1] === ':') {
      const end = p.cps.indexOf(']', p.i + 2);
      const body = end > 0 && p.cps[end - 1] === ':' ? p.cps.slice(p.i + 2, end - 1).join('') : undefined;
      if (body !== undefined) {
        const n = body.startsWith('^');
        const cls = POSIX[n ? body.slice(1) : body];
        if (!cls) err('invalid character class range', p.cps.slice(p.i, end + 1).join(''));
        r.push(...(n ? negate(cls!) : cls!));
        p.i = end + 1;
        continue;
      }
    }
    const rangeStart = p.i;
    let lo: number;
    if (ch === '\\') {
      const e = readEscape(p, true);
      if (e.r) {
        r.push(...e.r);
        continue;
      }
      lo = e.c!;
    } else {
      lo = ch.codePointAt(0)!;
      p.i++;
    }
    let hi = lo;
    if (p.cps[p.i] === '-' && p.cps[p.i + 1] !== undefined && p.cps[p.i + 1] !== ']') {
      p.i++;
      if (p.cps[p.i] === '\\') {
        const e = readEscape(p, true);
        if (e.r) err('invalid character class range', p.cps.slice(rangeStart, p.i).join(''));
        hi = e.c!;
      } else hi = p.cps[p.i++]!.codePointAt(0)!;
      if (hi < lo) err('invalid character class range', p.cps.slice(rangeStart, p.i).join(''));
    }
    r.push(lo, hi);
  }
  return { t: 'class', r, neg, fold };
}

class Re2Parser implements Cursor {
  readonly cps: string[];
  i = 0;
  private readonly stack: Frame[] = [];
  private frame: Frame = { alts: [], cur: [], flags: { i: false, s: false, m: false }, outer: { i: false, s: false, m: false }, start: 0 };
  private lastWasOp = false;

  constructor(private readonly src: string) {
    this.cps = Array.from(src);
  }

  parse(): Node {
    while (this.i < this.cps.length) {
      const ch = this.cps[this.i]!;
      switch (ch) {
        case '(':
          this.openGroup();
          break;
        case ')': {
          const parent = this.stack.pop();
          if (!parent) err('unexpected )', this.src);
          const node = closeAlt(this.frame);
          this.frame = parent!;
          this.push(node);
          this.i++;
          break;
        }
        case '|':
          this.frame.alts.push(closeAlt(this.frame));
          this.frame.cur = [];
          this.lastWasOp = false;
          this.i++;
          break;
        case '*':
        case '+':
        case '?':
        case '{':
          this.repeat(ch);
          break;
        case '.':
          this.push({ t: 'any', nl: this.frame.flags.s });
          this.i++;
          break;
        case '^':
          this.push({ t: 'assert', a: this.frame.flags.m ? 'bol' : 'bot' });
          this.i++;
          break;
        case '$':
          this.push({ t: 'assert', a: this.frame.flags.m ? 'eol' : 'eot' });
          this.i++;
          break;
        case '[':
          this.push(readClass(this, this.frame.flags.i));
          break;
        case '\\': {
          const e = readEscape(this, false);
          if (e.a) this.push({ t: 'assert', a: e.a });
          else if (e.r) this.push({ t: 'class', r: e.r, neg: false, fold: false });
          else this.push({ t: 'lit', c: e.c!, fold: this.frame.flags.i });
          break;
        }
        default:
          this.push({ t: 'lit', c: ch.codePointAt(0)!, fold: this.frame.flags.i });
          this.i++;
      }
    }
    if (this.stack.length) err('missing closing )', this.src);
    return closeAlt(this.frame);
  }

  private push(n: Node): void {
    this.frame.cur.push(n);
    this.lastWasOp = false;
  }

  /** `(`: a group, a named capture, or flags for the rest of the enclosing group ((?i)). */
  private openGroup(): void {
    if (this.stack.length >= MAX_NESTING) err('expression nests too deeply', this.src);
    const start = this.i;
    let flags = { ...this.frame.flags };
    this.i++;
    let scoped = true; // (?i) changes the enclosing group's flags instead of opening one
    if (this.cps[this.i] === '?') {
      this.i++;
      if (this.cps[this.i] === 'P' || this.cps[this.i] === '<') {
        if (this.cps[this.i] === 'P') this.i++;
        if (this.cps[this.i] !== '<') err('invalid or unsupported Perl syntax', this.cps.slice(start, this.i + 1).join(''));
        const end = this.cps.indexOf('>', this.i);
        const name = end < 0 ? '' : this.cps.slice(this.i + 1, end).join('');
        if (end < 0 || !/^[A-Za-z0-9_]+$/.test(name))
          err('invalid named capture', this.cps.slice(start, end < 0 ? this.cps.length : end + 1).join(''));
        this.i = end + 1;
      } else {
        let on = true;
        let any = false;
        for (;;) {
          const f = this.cps[this.i];
          if (f === undefined) err('missing closing )', this.src);
          if (f === '-') {
            if (!on) err('invalid or unsupported Perl syntax', this.cps.slice(start, this.i + 1).join(''));
            on = false;
            any = false;
          } else if (f === 'i' || f === 's' || f === 'm' || f === 'U') {
            if (f !== 'U') flags = { ...flags, [f]: on };
            any = true;
          } else if (f === ':' || f === ')') {
            if (!any) err('invalid or unsupported Perl syntax', this.cps.slice(start, this.i + 1).join(''));
            this.i++;
            if (f === ')') scoped = false;
            break;
          } else err('invalid or unsupported Perl syntax', this.cps.slice(start, this.i + 1).join(''));
          this.i++;
        }
      }
    }
    if (!scoped) {
      this.frame.flags = flags;
      return;
    }
    this.stack.push(this.frame);
    this.frame = { alts: [], cur: [], flags, outer: this.frame.flags, start };
    this.lastWasOp = false;
  }

  /** A repeat operator (* + ? {n,m}, lazy or not) applied to the last node. */
  private repeat(ch: string): void {
    const start = this.i;
    let min: number;
    let max: number;
    if (ch === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.cps.slice(this.i, this.i + 24).join(''));
      if (!m) {
        // Not a repeat: a literal brace, as in Go.
        this.push({ t: 'lit', c: 0x7b, fold: false });
        this.i++;
        return;
      }
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
      this.i += m[0].length;
      if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && max < min))
        err('invalid repeat count', this.cps.slice(start, this.i).join(''));
    } else {
      min = ch === '+' ? 1 : 0;
      max = ch === '?' ? 1 : -1;
      this.i++;
    }
    if (this.cps[this.i] === '?') this.i++; // lazy: the same set of matches
    const prev = this.frame.cur[this.frame.cur.length - 1];
    if (!prev) err('missing argument to repetition operator', this.cps.slice(start, this.i).join(''));
    if (this.lastWasOp) err('invalid nested repetition operator', this.cps.slice(start - 1, this.i).join(''));
    this.frame.cur[this.frame.cur.length - 1] = { t: 'rep', sub: prev!, min, max, fromOp: true };
    this.lastWasOp = true;
  }
}

/** Parses a pattern in Go's syntax; throws Re2SyntaxError. */
export function parse(src: string): Node {
  return new Re2Parser(src).parse();
}
