// Path helpers for COPY/ADD: following symlinks without ever leaving a root (moby/sys/symlink's
// FollowSymlinkInScope: absolute link targets are taken relative to the root, `..` stops at it),
// and Go's filepath.Match, the glob COPY sources use (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes; none
// of them matches `/`).
import { lstatSync, readlinkSync } from 'node:fs';
import { posix } from 'node:path';
import { invalidParameter } from '../../errors.ts';

const MAX_LINKS = 255;

/**
 * `path` (absolute, lexically inside `root`) with every symlink resolved inside `root`. Components
 * that do not exist are kept as they are. Throws when `path` is outside `root` or on a link loop.
 */
export function followSymlinkInScope(path: string, root: string): string {
  const r = posix.resolve(root);
  const p = posix.resolve(path);
  if (p !== r && !p.startsWith(r === '/' ? '/' : `${r}/`)) throw invalidParameter(`${path} is not in ${root}`);
  let parts = p.slice(r.length).split('/').filter((s) => s !== '' && s !== '.');
  const resolved: string[] = [];
  let links = 0;
  while (parts.length) {
    const part = parts.shift()!;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    resolved.push(part);
    const full = join(r, resolved);
    const st = lstatSync(full, { throwIfNoEntry: false });
    if (!st?.isSymbolicLink()) continue;
    if (++links > MAX_LINKS) throw invalidParameter(`too many links while resolving ${path}`);
    const target = readlinkSync(full);
    resolved.pop();
    if (target.startsWith('/')) resolved.length = 0;
    parts = [...target.split('/').filter((s) => s !== '' && s !== '.'), ...parts];
  }
  return join(r, resolved);
}

function join(root: string, parts: string[]): string {
  if (!parts.length) return root;
  return root === '/' ? `/${parts.join('/')}` : `${root}/${parts.join('/')}`;
}

/** Whether a COPY source holds glob characters (`*`, `?`, `[`; a `\` escapes the next one). */
export function containsWildcards(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const ch = name[i];
    if (ch === '\\') i++;
    else if (ch === '*' || ch === '?' || ch === '[') return true;
  }
  return false;
}

const cache = new Map<string, RegExp | null>();

/** Go's filepath.Match as a regular expression; null for a malformed pattern (ErrBadPattern). */
export function globRegExp(pattern: string): RegExp | null {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  const re = compileGlob(pattern);
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, re);
  return re;
}

const escapeRe = (ch: string) => ch.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
const escapeClass = (ch: string) => ch.replace(/[\\^\]\[-]/g, '\\$&');

function compileGlob(pattern: string): RegExp | null {
  const chars = Array.from(pattern);
  let out = '^';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else if (ch === '\\') {
      if (i + 1 >= chars.length) return null;
      out += escapeRe(chars[++i]!);
    } else if (ch === '[') {
      let j = i + 1;
      let cls = '[';
      if (chars[j] === '^') {
        cls += '^';
        j++;
      }
      let ranges = 0;
      for (;;) {
        if (j >= chars.length) return null;
        if (chars[j] === ']' && ranges > 0) break;
        let lo = chars[j]!;
        if (lo === '\\') {
          j++;
          if (j >= chars.length) return null;
          lo = chars[j]!;
        } else if (lo === '-' || lo === ']') {
          return null;
        }
        j++;
        let item = escapeClass(lo);
        if (chars[j] === '-' && chars[j + 1] !== undefined && chars[j + 1] !== ']') {
          let hi = chars[j + 1]!;
          j += 2;
          if (hi === '\\') {
            if (j >= chars.length) return null;
            hi = chars[j++]!;
          }
          if (hi < lo) return null;
          item += `-${escapeClass(hi)}`;
        }
        cls += item;
        ranges++;
      }
      // A class never matches the separator.
      out += cls.startsWith('[^') ? `${cls}/]` : `(?!/)${cls}]`;
      i = j;
    } else {
      out += escapeRe(ch);
    }
  }
  try {
    return new RegExp(`${out}$`, 'u');
  } catch {
    return null;
  }
}

/** Go's filepath.Match(pattern, name); a malformed pattern matches nothing. */
export function globMatch(pattern: string, name: string): boolean {
  return globRegExp(pattern)?.test(name) ?? false;
}
