// Tar streams of host files for the daemon: a build context honouring .dockerignore (patterns with
// *, ?, ** and ! exceptions, the last matching line deciding; a pattern matching a directory
// excludes what is under it; the Dockerfile and .dockerignore are always sent), and a single path
// for `engine cp` into a container.
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { TarWriter } from '../util/tar-writer.ts';

interface Rule {
  re: RegExp;
  exclude: boolean;
}

function patternRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      re += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < pattern.length) re += `\\${pattern[++i]}`;
    else re += /[.+^${}()|[\]]/.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${re}(?:/.*)?$`);
}

/** The rules of a .dockerignore text. */
export function parseIgnore(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const exclude = !line.startsWith('!');
    if (!exclude) line = line.slice(1).trim();
    line = line.replace(/^\.\//, '').replace(/^\/+/, '').replace(/\/+$/, '');
    if (line) rules.push({ re: patternRegex(line), exclude });
  }
  return rules;
}

export function ignored(rules: Rule[], rel: string): boolean {
  let out = false;
  for (const r of rules) if (r.re.test(rel)) out = r.exclude;
  return out;
}

async function addTree(tw: TarWriter, root: string, rel: string, skip: (rel: string, dir: boolean) => boolean, prefix = ''): Promise<void> {
  const abs = join(root, rel);
  const arc = prefix ? (rel ? `${prefix}/${rel}` : prefix) : rel;
  const st = lstatSync(abs);
  const mtime = st.mtime;
  const meta = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, mtime };
  if (st.isDirectory()) {
    if (arc && !(rel && skip(rel, true))) await tw.directory(arc, meta);
    for (const name of readdirSync(abs).sort()) {
      const child = rel ? `${rel}/${name}` : name;
      const isDir = lstatSync(join(root, child)).isDirectory();
      if (skip(child, isDir)) {
        if (!isDir) continue;
        // an excluded directory may still hold re-included files ("!dir/keep"): descend with the rules
      }
      await addTree(tw, root, child, skip, prefix);
    }
  } else if (skip(rel, false)) return;
  else if (st.isSymbolicLink()) await tw.symlink(arc, readlinkSync(abs), meta);
  else if (st.isFile()) await tw.fileFromPath(arc, abs, meta);
}

/** A build context tar of dir; dockerfile is the path relative to the context (default Dockerfile). */
export async function tarContext(dir: string, dockerfile?: string): Promise<{ stream: PassThrough; dockerfile: string }> {
  const root = resolve(dir);
  if (!existsSync(root) || !lstatSync(root).isDirectory()) throw new Error(`unable to prepare context: path "${dir}" not found`);
  const df = dockerfile ? relative(root, resolve(dockerfile)) : 'Dockerfile';
  const ignoreFile = join(root, '.dockerignore');
  const rules = existsSync(ignoreFile) ? parseIgnore(readFileSync(ignoreFile, 'utf8')) : [];
  const keep = new Set([df, '.dockerignore']);
  const stream = new PassThrough();
  const tw = new TarWriter(stream);
  const skip = (rel: string) => !keep.has(rel) && ignored(rules, rel);
  (async () => {
    await addTree(tw, root, '', skip);
    if (df.startsWith('..')) await tw.fileFromPath(basename(df), resolve(dockerfile!), { mode: 0o644 });
    await tw.finish();
    stream.end();
  })().catch((e: Error) => stream.destroy(e));
  return { stream, dockerfile: df.startsWith('..') ? basename(df) : df };
}

/** A tar of one host path (a file or a tree), its top entry named `name`. */
export function tarPath(path: string, name: string): PassThrough {
  const stream = new PassThrough();
  const tw = new TarWriter(stream);
  (async () => {
    await addTree(tw, path, '', () => false, name);
    await tw.finish();
    stream.end();
  })().catch((e: Error) => stream.destroy(e));
  return stream;
}
