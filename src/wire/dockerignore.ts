// `.dockerignore` files with the semantics of moby/patternmatcher (what the docker CLI, docker-py
// and BuildKit use; the daemon's builder and the engine CLI both read them here): lines read like ignorefile.ReadAll (comments only at column 0, trimmed, `!`
// exceptions, paths cleaned, a leading `/` dropped); patterns are filepath.Match globs plus `**`;
// later patterns win; a path is ignored when it or one of its parent directories matches.
// Written here rather than taken from npm `@balena/dockerignore`: that package follows the older
// `fileutils` rules (a match on the parent prefix of the pattern's length only, so `**/x` does not
// ignore `a/b/x/y`), and the quirks below (`**` match types) are patternmatcher's.
import { posix } from 'node:path';
import { compileIgnoreGlob, type Nfa } from './glob.ts';

/** Go's filepath.Clean for slash paths: '' → '.', no trailing slash, `.`/`..` resolved. */
/** A pattern patternmatcher refuses (the daemon answers it with a 400). */
export class IgnorePatternError extends Error {}

export function goClean(p: string): string {
  if (p === '') return '.';
  const n = posix.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

/** The patterns of a .dockerignore file, as ignorefile.ReadAll returns them. */
export function readIgnoreFile(text: string): string[] {
  const out: string[] = [];
  const lines = (text.startsWith('\uFEFF') ? text.slice(1) : text).split('\n');
  for (const line of lines) {
    if (line.startsWith('#')) continue;
    let pattern = line.trim();
    if (pattern === '') continue;
    const invert = pattern.startsWith('!');
    if (invert) pattern = pattern.slice(1).trim();
    if (pattern.length > 0) {
      pattern = goClean(pattern);
      if (pattern.length > 1 && pattern.startsWith('/')) pattern = pattern.slice(1);
    }
    out.push(invert ? `!${pattern}` : pattern);
  }
  return out;
}

type MatchType = 'exact' | 'prefix' | 'suffix' | 'regexp';

interface Pattern {
  cleaned: string;
  exclusion: boolean;
  type: MatchType;
  nfa?: Nfa;
}

/**
 * The match type patternmatcher picks for a pattern (its fast paths, with their quirks: `**x` is a
 * suffix match, `x/**` a prefix match); 'regexp' patterns run as an NFA (glob.ts), in linear time.
 */
function compile(cleaned: string): Pattern {
  let type: MatchType = 'exact';
  const chars = Array.from(cleaned);
  for (let i = 0, pos = 0; pos < chars.length; i++) {
    const ch = chars[pos++]!;
    if (ch === '*') {
      if (chars[pos] === '*') {
        pos++;
        if (chars[pos] === '/') pos++;
        type = pos >= chars.length && type === 'exact' ? 'prefix' : 'regexp';
        if (i === 0) type = 'suffix';
      } else {
        type = 'regexp';
      }
    } else if (ch === '?' || ch === '[' || ch === ']') {
      type = 'regexp';
    } else if (ch === '\\' && pos < chars.length) {
      pos++;
      type = 'regexp';
    }
  }
  const p: Pattern = { cleaned, exclusion: false, type };
  if (type === 'regexp') {
    const nfa = compileIgnoreGlob(cleaned);
    if (!nfa) throw new IgnorePatternError(`invalid .dockerignore pattern ${JSON.stringify(cleaned)}: syntax error in pattern`);
    p.nfa = nfa;
  }
  return p;
}

function matchOne(p: Pattern, path: string): boolean {
  switch (p.type) {
    case 'exact':
      return path === p.cleaned;
    case 'prefix':
      return path.startsWith(p.cleaned.slice(0, -2));
    case 'suffix': {
      const suffix = p.cleaned.slice(2);
      return path.endsWith(suffix) || (suffix.startsWith('/') && path === suffix.slice(1));
    }
    case 'regexp':
      return p.nfa!.matches(path); // (ignores() runs NFAs itself, over all parents at once)
  }
}

export class IgnoreMatcher {
  private readonly patterns: Pattern[] = [];
  /** Whether any `!` exception exists (an ignored directory may then hold kept files). */
  readonly hasExceptions: boolean;

  constructor(patterns: readonly string[]) {
    let exceptions = false;
    for (const raw of patterns) {
      let p = raw.trim();
      if (p === '') continue;
      p = goClean(p);
      let exclusion = false;
      if (p.startsWith('!')) {
        if (p.length === 1) throw new IgnorePatternError('illegal exclusion pattern: "!"');
        exclusion = true;
        exceptions = true;
        p = p.slice(1);
      }
      this.patterns.push({ ...compile(p), exclusion });
    }
    this.hasExceptions = exceptions;
  }

  static fromFile(text: string): IgnoreMatcher {
    return new IgnoreMatcher(readIgnoreFile(text));
  }

  get empty(): boolean {
    return this.patterns.length === 0;
  }

  /** Whether `path` (relative, slash-separated) is ignored: it or a parent directory matches. */
  ignores(path: string): boolean {
    const file = goClean(path);
    if (file === '.' || this.patterns.length === 0) return false;
    const parents = posix.dirname(file) === '.' ? [] : posix.dirname(file).split('/');
    let chars: string[] | undefined;
    let slashes: Set<number> | undefined;
    let matched = false;
    for (const p of this.patterns) {
      if (p.exclusion !== matched) continue;
      let match: boolean;
      if (p.nfa) {
        // One pass: the path matches, or a parent does (a prefix ending just before a `/`).
        chars ??= Array.from(file);
        slashes ??= new Set(chars.flatMap((c, i) => (c === '/' ? [i] : [])));
        const ends = p.nfa.ends(chars);
        match = ends.some((e) => e === chars!.length || slashes!.has(e));
      } else {
        match = matchOne(p, file);
        for (let i = 0; !match && i < parents.length; i++) match = matchOne(p, parents.slice(0, i + 1).join('/'));
      }
      if (match) matched = !p.exclusion;
    }
    return matched;
  }
}

/** Where the Dockerfile-specific ignore file is: `<dockerfile>.dockerignore`, beside it. */
export function dockerfileIgnorePath(dockerfile: string): string {
  return `${goClean(dockerfile.replace(/^\/+/, ''))}.dockerignore`;
}
