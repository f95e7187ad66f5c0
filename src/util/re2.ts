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
// Errors carry Go's words: "error parsing regexp: missing closing ): `((`". The parser is re2-parse.ts;
// this file compiles its tree and runs the program.
import { parse, Re2SyntaxError, type Assertion, type Node, type Ranges } from './re2-parse.ts';

export { Re2SyntaxError };

/**
 * Instructions a program may have (Go refuses large programs as "expression too large", at a far
 * larger size): matching costs the program's size per character of text, for every object listed.
 */
const MAX_PROGRAM = 20_000;

const isWordChar = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;

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
