// Regular expressions from users (`name=` filters, log options' env-regex and labels-regex), read
// with Go's RE2 syntax and matched in linear time, as dockerd's Go regexp does: a pattern is parsed
// into a program for a Thompson machine that runs every thread in step over the text, so no input
// can make it backtrack. JavaScript's RegExp is never given user input (a pattern like `(a+)+$`
// stalls it for minutes; a pattern of 100 000 characters throws "regular expression too large").
//
// Supported: literals and escapes (\n \t \x41 \x{263a} \. …), `.`, classes ([a-z], [^…], [[:alpha:]],
// \d \w \s and their negations), groups ((…), (?:…), (?P<name>…), (?<name>…)), flags i, s, m, U
// ((?i), (?i:…)), alternation, the quantifiers * + ? {n} {n,} {n,m} (lazy forms too), and the
// assertions ^ $ \A \z \b \B. Unicode classes (\pL, \p{Greek}) are refused as unsupported.
// Errors carry Go's words: "error parsing regexp: missing closing ): `((`".

/** Go's limit on one repeat count, and on nesting. */
const MAX_REPEAT = 1000;
const MAX_NESTING = 1000;
/**
 * Instructions a program may have (Go refuses large programs as "expression too large", at a far
 * larger size): matching costs the program's size per character of text, for every object listed.
 */
const MAX_PROGRAM = 20_000;

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

type Ranges = number[]; // pairs lo, hi (inclusive) of code points

type Node =
  | { t: 'lit'; c: number; fold: boolean }
  | { t: 'any'; nl: boolean }
  | { t: 'class'; r: Ranges; neg: boolean; fold: boolean }
  | { t: 'cat'; subs: Node[] }
  | { t: 'alt'; subs: Node[] }
  | { t: 'rep'; sub: Node; min: number; max: number; fromOp: boolean }
  | { t: 'assert'; a: Assertion };

type Assertion = 'bol' | 'eol' | 'bot' | 'eot' | 'word' | 'nonword';

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

const isWordChar = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
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

/** Parses a pattern in Go's syntax; throws Re2SyntaxError. */
function parse(src: string): Node {
  const cps = Array.from(src);
  const stack: Frame[] = [];
  let frame: Frame = { alts: [], cur: [], flags: { i: false, s: false, m: false }, outer: { i: false, s: false, m: false }, start: 0 };
  let lastWasOp = false;
  let i = 0;
  const err = (code: string, expr: string): never => {
    throw new Re2SyntaxError(code, expr);
  };
  const push = (n: Node) => {
    frame.cur.push(n);
    lastWasOp = false;
  };
  const closeAlt = (f: Frame): Node => {
    const cat = (xs: Node[]): Node => (xs.length === 1 ? xs[0]! : { t: 'cat', subs: xs });
    if (f.alts.length === 0) return cat(f.cur);
    return { t: 'alt', subs: [...f.alts, cat(f.cur)] };
  };
  /** An escape at cps[i] (the backslash): a node, or ranges inside a class. */
  const escape = (inClass: boolean): { c?: number; r?: Ranges; a?: Assertion } => {
    const start = i;
    i++;
    if (i >= cps.length) err('trailing backslash at end of expression', '');
    const ch = cps[i++]!;
    const cp = ch.codePointAt(0)!;
    if (ch === 'x') {
      if (cps[i] === '{') {
        const end = cps.indexOf('}', i);
        const hex = end < 0 ? '' : cps.slice(i + 1, end).join('');
        if (end < 0 || hex === '' || !hex.split('').every(isHexDigit) || parseInt(hex, 16) > 0x10ffff) {
          err('invalid escape sequence', cps.slice(start, end < 0 ? cps.length : end + 1).join(''));
        }
        i = end + 1;
        return { c: parseInt(hex, 16) };
      }
      const hex = cps.slice(i, i + 2).join('');
      if (hex.length < 2 || !isHexDigit(hex[0]!) || !isHexDigit(hex[1]!)) err('invalid escape sequence', cps.slice(start, i + 2).join(''));
      i += 2;
      return { c: parseInt(hex, 16) };
    }
    if (ch >= '0' && ch <= '7') {
      // Octal: \0 alone, or up to three digits (Go refuses \1-\9 backreferences as \8 \9 do not exist).
      if (ch !== '0' && !(cps[i]! >= '0' && cps[i]! <= '7')) err('invalid escape sequence', cps.slice(start, i).join(''));
      let v = cp - 0x30;
      for (let k = 0; k < 2 && cps[i]! >= '0' && cps[i]! <= '7'; k++) v = v * 8 + (cps[i++]!.codePointAt(0)! - 0x30);
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
    if (ch === 'p' || ch === 'P') err('invalid character class range', cps.slice(start, i).join(''));
    // Any punctuation may be escaped to stand for itself.
    if (cp < 0x80 && !/[0-9A-Za-z]/.test(ch)) return { c: cp };
    return err('invalid escape sequence', cps.slice(start, i).join(''));
  };
  const parseClass = (): Node => {
    const start = i;
    i++; // [
    let neg = false;
    if (cps[i] === '^') {
      neg = true;
      i++;
    }
    const r: Ranges = [];
    let first = true;
    for (;;) {
      if (i >= cps.length) err('missing closing ]', cps.slice(start).join(''));
      const ch = cps[i]!;
      if (ch === ']' && !first) {
        i++;
        break;
      }
      first = false;
      if (ch === '[' && cps[i + 1] === ':') {
        const end = cps.indexOf(']', i + 2);
        const body = end > 0 && cps[end - 1] === ':' ? cps.slice(i + 2, end - 1).join('') : undefined;
        if (body !== undefined) {
          const n = body.startsWith('^');
          const cls = POSIX[n ? body.slice(1) : body];
          if (!cls) err('invalid character class range', cps.slice(i, end + 1).join(''));
          r.push(...(n ? negate(cls!) : cls!));
          i = end + 1;
          continue;
        }
      }
      const rangeStart = i;
      let lo: number;
      if (ch === '\\') {
        const e = escape(true);
        if (e.r) {
          r.push(...e.r);
          continue;
        }
        lo = e.c!;
      } else {
        lo = ch.codePointAt(0)!;
        i++;
      }
      let hi = lo;
      if (cps[i] === '-' && cps[i + 1] !== undefined && cps[i + 1] !== ']') {
        i++;
        if (cps[i] === '\\') {
          const e = escape(true);
          if (e.r) err('invalid character class range', cps.slice(rangeStart, i).join(''));
          hi = e.c!;
        } else hi = cps[i++]!.codePointAt(0)!;
        if (hi < lo) err('invalid character class range', cps.slice(rangeStart, i).join(''));
      }
      r.push(lo, hi);
    }
    return { t: 'class', r, neg, fold: frame.flags.i };
  };

  while (i < cps.length) {
    const ch = cps[i]!;
    switch (ch) {
      case '(': {
        if (stack.length >= MAX_NESTING) err('expression nests too deeply', src);
        const start = i;
        let flags = { ...frame.flags };
        i++;
        let scoped = true; // (?i) changes the enclosing group's flags instead of opening one
        if (cps[i] === '?') {
          i++;
          if (cps[i] === 'P' || cps[i] === '<') {
            if (cps[i] === 'P') i++;
            if (cps[i] !== '<') err('invalid or unsupported Perl syntax', cps.slice(start, i + 1).join(''));
            const end = cps.indexOf('>', i);
            const name = end < 0 ? '' : cps.slice(i + 1, end).join('');
            if (end < 0 || !/^[A-Za-z0-9_]+$/.test(name))
              err('invalid named capture', cps.slice(start, end < 0 ? cps.length : end + 1).join(''));
            i = end + 1;
          } else {
            let on = true;
            let any = false;
            for (;;) {
              const f = cps[i];
              if (f === undefined) err('missing closing )', src);
              if (f === '-') {
                if (!on) err('invalid or unsupported Perl syntax', cps.slice(start, i + 1).join(''));
                on = false;
                any = false;
              } else if (f === 'i' || f === 's' || f === 'm' || f === 'U') {
                if (f !== 'U') flags = { ...flags, [f]: on };
                any = true;
              } else if (f === ':' || f === ')') {
                if (!any) err('invalid or unsupported Perl syntax', cps.slice(start, i + 1).join(''));
                i++;
                if (f === ')') scoped = false;
                break;
              } else err('invalid or unsupported Perl syntax', cps.slice(start, i + 1).join(''));
              i++;
            }
          }
        }
        if (!scoped) {
          frame.flags = flags;
          break;
        }
        stack.push(frame);
        frame = { alts: [], cur: [], flags, outer: frame.flags, start };
        lastWasOp = false;
        break;
      }
      case ')': {
        const parent = stack.pop();
        if (!parent) err('unexpected )', src);
        const node = closeAlt(frame);
        frame = parent!;
        push(node);
        i++;
        break;
      }
      case '|':
        frame.alts.push(closeAlt(frame));
        frame.cur = [];
        lastWasOp = false;
        i++;
        break;
      case '*':
      case '+':
      case '?':
      case '{': {
        const start = i;
        let min: number;
        let max: number;
        if (ch === '{') {
          const m = /^\{(\d+)(,(\d*))?\}/.exec(cps.slice(i, i + 24).join(''));
          if (!m) {
            // Not a repeat: a literal brace, as in Go.
            push({ t: 'lit', c: 0x7b, fold: false });
            i++;
            break;
          }
          min = Number(m[1]);
          max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
          i += m[0].length;
          if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && max < min)) err('invalid repeat count', cps.slice(start, i).join(''));
        } else {
          min = ch === '+' ? 1 : 0;
          max = ch === '?' ? 1 : -1;
          i++;
        }
        if (cps[i] === '?') i++; // lazy: the same set of matches
        const prev = frame.cur[frame.cur.length - 1];
        if (!prev) err('missing argument to repetition operator', cps.slice(start, i).join(''));
        if (lastWasOp) err('invalid nested repetition operator', cps.slice(start - 1, i).join(''));
        frame.cur[frame.cur.length - 1] = { t: 'rep', sub: prev!, min, max, fromOp: true };
        lastWasOp = true;
        break;
      }
      case '.':
        push({ t: 'any', nl: frame.flags.s });
        i++;
        break;
      case '^':
        push({ t: 'assert', a: frame.flags.m ? 'bol' : 'bot' });
        i++;
        break;
      case '$':
        push({ t: 'assert', a: frame.flags.m ? 'eol' : 'eot' });
        i++;
        break;
      case '[':
        push(parseClass());
        break;
      case '\\': {
        const e = escape(false);
        if (e.a) push({ t: 'assert', a: e.a });
        else if (e.r) push({ t: 'class', r: e.r, neg: false, fold: false });
        else push({ t: 'lit', c: e.c!, fold: frame.flags.i });
        break;
      }
      default:
        push({ t: 'lit', c: ch.codePointAt(0)!, fold: frame.flags.i });
        i++;
    }
  }
  if (stack.length) err('missing closing )', src);
  return closeAlt(frame);
}

type Inst =
  | { op: 'lit'; c: number; fold: boolean }
  | { op: 'any'; nl: boolean }
  | { op: 'class'; r: Ranges; neg: boolean; fold: boolean }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'assert'; a: Assertion }
  | { op: 'match' };

/** Compiles a node into `prog` (recursion bounded by MAX_NESTING and the program size). */
function compile(n: Node, prog: Inst[], src: string): void {
  if (prog.length > MAX_PROGRAM) throw new Re2SyntaxError('expression too large', src);
  switch (n.t) {
    case 'lit':
      prog.push({ op: 'lit', c: n.c, fold: n.fold });
      return;
    case 'any':
      prog.push({ op: 'any', nl: n.nl });
      return;
    case 'class':
      prog.push({ op: 'class', r: n.r, neg: n.neg, fold: n.fold });
      return;
    case 'assert':
      prog.push({ op: 'assert', a: n.a });
      return;
    case 'cat':
      for (const s of n.subs) compile(s, prog, src);
      return;
    case 'alt': {
      const jumps: Inst[] = [];
      for (let k = 0; k < n.subs.length; k++) {
        if (k < n.subs.length - 1) {
          const split = { op: 'split' as const, x: prog.length + 1, y: 0 };
          prog.push(split);
          compile(n.subs[k]!, prog, src);
          const j = { op: 'jmp' as const, x: 0 };
          prog.push(j);
          jumps.push(j);
          split.y = prog.length;
        } else compile(n.subs[k]!, prog, src);
      }
      for (const j of jumps) (j as { x: number }).x = prog.length;
      return;
    }
    case 'rep': {
      for (let k = 0; k < n.min; k++) compile(n.sub, prog, src);
      if (n.max < 0) {
        const at = prog.length;
        const split = { op: 'split' as const, x: at + 1, y: 0 };
        prog.push(split);
        compile(n.sub, prog, src);
        prog.push({ op: 'jmp', x: at });
        split.y = prog.length;
      } else {
        const splits: { op: 'split'; x: number; y: number }[] = [];
        for (let k = n.min; k < n.max; k++) {
          const split = { op: 'split' as const, x: prog.length + 1, y: 0 };
          prog.push(split);
          splits.push(split);
          compile(n.sub, prog, src);
        }
        for (const s of splits) s.y = prog.length;
      }
      return;
    }
  }
}

function foldCases(c: number): number[] {
  const s = String.fromCodePoint(c);
  const l = s.toLowerCase().codePointAt(0)!;
  const u = s.toUpperCase().codePointAt(0)!;
  return l === u ? [c] : [c, l, u];
}

function inRanges(r: Ranges, c: number): boolean {
  for (let k = 0; k < r.length; k += 2) if (c >= r[k]! && c <= r[k + 1]!) return true;
  return false;
}

/** A compiled pattern: `test` says whether it matches anywhere in a text (Go's MatchString). */
export class Re2 {
  private constructor(private readonly prog: Inst[]) {}

  /** Compiles a pattern in Go's syntax; throws Re2SyntaxError with Go's words. */
  static compile(pattern: string): Re2 {
    const prog: Inst[] = [];
    compile(parse(pattern), prog, pattern);
    prog.push({ op: 'match' });
    if (prog.length > MAX_PROGRAM) throw new Re2SyntaxError('expression too large', pattern);
    return new Re2(prog);
  }

  /** Like compile, but undefined for a pattern Go refuses. */
  static tryCompile(pattern: string): Re2 | undefined {
    try {
      return Re2.compile(pattern);
    } catch (err) {
      if (err instanceof Re2SyntaxError) return undefined;
      throw err;
    }
  }

  test(text: string): boolean {
    const cps = Array.from(text, (ch) => ch.codePointAt(0)!);
    const n = this.prog.length;
    let clist = new Int32Array(n);
    let nlist = new Int32Array(n);
    let ccount = 0;
    let ncount = 0;
    const onList = new Int32Array(n).fill(-1); // the step at which an instruction was added
    const work = new Int32Array(2 * n + 2);
    // Adds pc and what it leads to without consuming input (an explicit stack, no recursion).
    const add = (list: Int32Array, count: number, pc0: number, pos: number, step: number): number => {
      let sp = 0;
      work[sp++] = pc0;
      while (sp > 0) {
        const pc = work[--sp]!;
        if (onList[pc] === step) continue;
        onList[pc] = step;
        const inst = this.prog[pc]!;
        if (inst.op === 'jmp') work[sp++] = inst.x;
        else if (inst.op === 'split') {
          work[sp++] = inst.y;
          work[sp++] = inst.x;
        } else if (inst.op === 'assert') {
          if (this.holds(inst.a, cps, pos)) work[sp++] = pc + 1;
        } else list[count++] = pc;
      }
      return count;
    };
    let step = 0;
    for (let pos = 0; ; pos++) {
      // Unanchored: a new thread starts at every position.
      ccount = add(clist, ccount, 0, pos, step);
      step++;
      const c = pos < cps.length ? cps[pos]! : -1;
      ncount = 0;
      for (let k = 0; k < ccount; k++) {
        const inst = this.prog[clist[k]!]!;
        if (inst.op === 'match') return true;
        if (c >= 0 && this.consumes(inst, c)) ncount = add(nlist, ncount, clist[k]! + 1, pos + 1, step);
      }
      if (pos >= cps.length) return false;
      [clist, nlist] = [nlist, clist];
      ccount = ncount;
    }
  }

  private consumes(inst: Inst, c: number): boolean {
    switch (inst.op) {
      case 'lit':
        return inst.c === c || (inst.fold && foldCases(c).includes(inst.c)) || (inst.fold && foldCases(inst.c).includes(c));
      case 'any':
        return inst.nl || c !== 0x0a;
      case 'class': {
        const hit = inst.fold ? foldCases(c).some((x) => inRanges(inst.r, x)) : inRanges(inst.r, c);
        return hit !== inst.neg;
      }
      default:
        return false;
    }
  }

  private holds(a: Assertion, cps: number[], pos: number): boolean {
    switch (a) {
      case 'bot':
        return pos === 0;
      case 'eot':
        return pos === cps.length;
      case 'bol':
        return pos === 0 || cps[pos - 1] === 0x0a;
      case 'eol':
        return pos === cps.length || cps[pos] === 0x0a;
      default: {
        const before = pos > 0 && isWordChar(cps[pos - 1]!);
        const after = pos < cps.length && isWordChar(cps[pos]!);
        return (before !== after) === (a === 'word');
      }
    }
  }
}
