// Path helpers for COPY/ADD: following symlinks without ever leaving a root (moby/sys/symlink's
// FollowSymlinkInScope: absolute link targets are taken relative to the root, `..` stops at it),
// and Go's filepath.Match, the glob COPY sources use (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes; `*`
// and `?` never match `/`).
import { lstatSync, readlinkSync } from 'node:fs';
import { posix } from 'node:path';
import { invalidParameter } from '../../errors.ts';
import { compileGoGlob, type Nfa } from '../../wire/glob.ts';

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

const cache = new Map<string, Nfa | null>();

/** Go's filepath.Match(pattern, name); a malformed pattern matches nothing (linear time: glob.ts). */
export function globMatch(pattern: string, name: string): boolean {
  let nfa = cache.get(pattern);
  if (nfa === undefined) {
    nfa = compileGoGlob(pattern);
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, nfa);
  }
  return nfa?.matches(name) ?? false;
}
