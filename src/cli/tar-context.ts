// Tar streams of host files for the daemon: a build context honouring .dockerignore (read with the
// same patternmatcher rules as the daemon's builder, wire/dockerignore.ts; the Dockerfile and
// .dockerignore are always sent), and a single path for `engine cp` into a container.
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { TarWriter } from '../util/tar-writer.ts';
import { IgnoreMatcher } from '../wire/dockerignore.ts';

async function addTree(
  tw: TarWriter,
  root: string,
  rel: string,
  skip: (rel: string, dir: boolean) => boolean,
  prefix = '',
  descendIgnored = false,
): Promise<void> {
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
      // an excluded directory may still hold re-included files ("!dir/keep"): descend only then
      if (skip(child, isDir) && (!isDir || !descendIgnored)) continue;
      await addTree(tw, root, child, skip, prefix, descendIgnored);
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
  const matcher = existsSync(ignoreFile) ? IgnoreMatcher.fromFile(readFileSync(ignoreFile, 'utf8')) : new IgnoreMatcher([]);
  const keep = new Set([df, '.dockerignore']);
  const stream = new PassThrough();
  const tw = new TarWriter(stream);
  const skip = (rel: string) => !keep.has(rel) && matcher.ignores(rel);
  (async () => {
    await addTree(tw, root, '', skip, '', matcher.hasExceptions);
    if (df.startsWith('..')) await tw.fileFromPath(basename(df), resolve(dockerfile!), { mode: 0o644 });
    await tw.finish();
    stream.end();
  })().catch((e: Error) => stream.destroy(e));
  return { stream, dockerfile: df.startsWith('..') ? basename(df) : df };
}

/**
 * The context of `build -`, read from stdin as the docker CLI reads it: a tar (plain or compressed)
 * is the context itself; anything else is a Dockerfile, sent as the only file of a context.
 */
export async function stdinContext(
  input: AsyncIterable<Buffer | string>,
  dockerfile?: string,
): Promise<{ stream: PassThrough; dockerfile: string }> {
  const chunks: Buffer[] = [];
  for await (const c of input) chunks.push(Buffer.from(c));
  const data = Buffer.concat(chunks);
  const stream = new PassThrough();
  const archive =
    data.subarray(257, 262).toString('latin1') === 'ustar' ||
    [
      [0x1f, 0x8b],
      [0x42, 0x5a, 0x68],
      [0xfd, 0x37, 0x7a, 0x58, 0x5a],
      [0x28, 0xb5, 0x2f, 0xfd],
    ].some((magic) => magic.every((b, i) => data[i] === b));
  if (archive) {
    stream.end(data);
    return { stream, dockerfile: dockerfile ?? 'Dockerfile' };
  }
  const tw = new TarWriter(stream);
  (async () => {
    await tw.file('Dockerfile', data, { mode: 0o600 });
    await tw.finish();
    stream.end();
  })().catch((e: Error) => stream.destroy(e));
  return { stream, dockerfile: 'Dockerfile' };
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
