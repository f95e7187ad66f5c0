// Go's path.Match (what dockerd's `reference=` image filter uses): `*` any run of characters but
// '/', `?` one character but '/', `[...]` classes with ranges and `^` negation, `\` escapes. Matched
// chunk by chunk as Go does, committing to the first place a chunk fits after a star, so the work
// is bounded by pattern × name whatever the pattern (a glob turned into a JavaScript RegExp backtracks
// exponentially on a pattern of many stars, and user text is never given to RegExp here).

/** Go's path.ErrBadPattern. */
export class BadPatternError extends Error {
  constructor() {
    super('syntax error in pattern');
    this.name = 'BadPatternError';
  }
}

type Chars = readonly string[];

/** Splits off the leading stars and the chunk up to the next star outside a class. */
function scanChunk(p: Chars, at: number): { star: boolean; start: number; end: number } {
  let star = false;
  while (at < p.length && p[at] === '*') {
    at++;
    star = true;
  }
  let inRange = false;
  let i = at;
  for (; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      if (i + 1 < p.length) i++;
    } else if (c === '[') inRange = true;
    else if (c === ']') inRange = false;
    else if (c === '*' && !inRange) break;
  }
  return { star, start: at, end: i };
}

/** One class member (a character or an escaped one); Go's getEsc. */
function getEsc(p: Chars, i: number, end: number): { r: number; next: number } {
  if (i >= end || p[i] === '-' || p[i] === ']') throw new BadPatternError();
  if (p[i] === '\\') {
    i++;
    if (i >= end) throw new BadPatternError();
  }
  const r = p[i]!.codePointAt(0)!;
  if (i + 1 >= end) throw new BadPatternError();
  return { r, next: i + 1 };
}

/** Matches chunk p[start, end) at the start of s[at…]: the index after it, or -1. Throws on a bad chunk. */
function matchChunk(p: Chars, start: number, end: number, s: Chars, at: number): number {
  let failed = false;
  let i = start;
  while (i < end) {
    if (!failed && at >= s.length) failed = true;
    const c = p[i]!;
    if (c === '[') {
      const r = failed ? -1 : s[at++]!.codePointAt(0)!;
      i++;
      let negated = false;
      if (i < end && p[i] === '^') {
        negated = true;
        i++;
      }
      let match = false;
      let nrange = 0;
      for (;;) {
        if (i < end && p[i] === ']' && nrange > 0) {
          i++;
          break;
        }
        const lo = getEsc(p, i, end);
        let hi = lo.r;
        i = lo.next;
        if (p[i] === '-') {
          const h = getEsc(p, i + 1, end);
          hi = h.r;
          i = h.next;
        }
        if (lo.r <= r && r <= hi) match = true;
        nrange++;
      }
      if (match === negated) failed = true;
    } else if (c === '?') {
      if (!failed) {
        if (s[at] === '/') failed = true;
        at++;
      }
      i++;
    } else {
      if (c === '\\') {
        i++;
        if (i >= end) throw new BadPatternError();
      }
      if (!failed) {
        if (p[i] !== s[at]) failed = true;
        at++;
      }
      i++;
    }
  }
  return failed ? -1 : at;
}

/** Go's path.Match(pattern, name); throws BadPatternError where Go returns ErrBadPattern. */
export function pathMatch(pattern: string, name: string): boolean {
  const p = Array.from(pattern);
  const s = Array.from(name);
  let pi = 0;
  let at = 0;
  outer: while (pi < p.length) {
    const { star, start, end } = scanChunk(p, pi);
    pi = end;
    if (star && start === end) return !s.slice(at).includes('/');
    const t = matchChunk(p, start, end, s, at);
    if (t >= 0 && (t === s.length || pi < p.length)) {
      at = t;
      continue;
    }
    if (star) {
      for (let i = at; i < s.length && s[i] !== '/'; i++) {
        const t2 = matchChunk(p, start, end, s, i + 1);
        if (t2 >= 0) {
          if (pi >= p.length && t2 < s.length) continue;
          at = t2;
          continue outer;
        }
      }
    }
    // No match: the rest of the pattern must still be well formed.
    while (pi < p.length) {
      const c = scanChunk(p, pi);
      pi = c.end;
      matchChunk(p, c.start, c.end, [], 0);
    }
    return false;
  }
  return at === s.length;
}
