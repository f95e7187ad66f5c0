// The sources of a COPY or ADD, resolved against a root (the extracted context, or the filesystem
// of a stage or image for `COPY --from`) with the rules and messages of dockerd's classic builder
// (builder/dockerfile/copy.go): a leading `/` or `./` is dropped, wildcards are Go globs matched at
// their own depth, symlinks are followed without leaving the root, a path leading out of the root is
// refused, a missing one is "file not found in build context or excluded by .dockerignore", and no
// match at all is "no source files were specified". ADD also takes http(s) URLs: downloaded into a
// temporary directory, named from the URL or Content-Disposition, dated by Last-Modified.
import { createWriteStream, lstatSync, mkdtempSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { posix } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { invalidParameter } from '../../errors.ts';
import { containsWildcards, followSymlinkInScope, globMatch } from './scoped-path.ts';

export interface CopySource {
  /** The path as given or matched, relative to the source root ('.' for the root itself). */
  rel: string;
  /** The absolute path to read, symlinks followed inside the root. */
  path: string;
  isDir: boolean;
  /** A file downloaded by ADD: never extracted. */
  fromUrl?: boolean;
}

export interface ResolveOptions {
  cmd: 'COPY' | 'ADD';
  /** The destination as written (a URL without a file name needs one that does not end in `/`). */
  dest: string;
  /** Whether `root` is the build context (its not-found message names the context and .dockerignore). */
  isContext: boolean;
  /** Where ADD downloads go (a fresh directory is made inside; the caller removes `tmpDir`). */
  tmpDir?: string;
  signal?: AbortSignal;
  /** ADD downloads: bytes received so far and the announced size (for dockerd's "Downloading" progress). */
  onProgress?: (url: string, received: number, total: number | undefined) => void;
}

const UNNAMED = '__unnamed__';

export const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** Every source of the instruction; errors are 400s starting with "COPY failed:" / "ADD failed:". */
export async function resolveSources(root: string, sources: readonly string[], opts: ResolveOptions): Promise<CopySource[]> {
  const fail = (msg: string) => invalidParameter(`${opts.cmd} failed: ${msg}`);
  const out: CopySource[] = [];
  for (const src of sources) {
    if (isUrl(src)) {
      if (opts.cmd === 'COPY') throw fail("source can't be a URL for COPY");
      if (!opts.tmpDir) throw fail(`no download directory for ${src}`);
      const progress = opts.onProgress && ((received: number, total: number | undefined) => opts.onProgress!(src, received, total));
      const dl = await downloadUrl(src, mkdtempSync(`${opts.tmpDir}/add-`), opts.signal, progress).catch((err: Error) => {
        throw fail(err.message);
      });
      if (dl.name === '' && opts.dest.endsWith('/')) throw fail(`cannot determine filename for source ${src}`);
      out.push({ rel: dl.name || UNNAMED, path: dl.file, isDir: false, fromUrl: true });
      continue;
    }
    let orig = src.startsWith('/') ? src.slice(1) : src;
    if (orig.startsWith('./')) orig = orig.slice(2);
    if (containsWildcards(orig)) {
      for (const rel of matchWildcards(root, orig)) out.push(statSource(root, rel, opts, fail));
    } else {
      out.push(statSource(root, orig, opts, fail));
    }
  }
  if (out.length === 0) throw fail('no source files were specified');
  return out;
}

function statSource(root: string, orig: string, opts: ResolveOptions, fail: (m: string) => Error): CopySource {
  const joined = posix.join(root, orig);
  let path: string;
  try {
    if (joined !== root && !joined.startsWith(`${root}/`)) throw new Error('outside');
    path = followSymlinkInScope(joined, root);
  } catch {
    throw fail(`forbidden path outside the build context: ${orig} ()`);
  }
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) {
    const stat = `stat ${orig}: file does not exist`;
    throw fail(opts.isContext ? `file not found in build context or excluded by .dockerignore: ${stat}` : stat);
  }
  return { rel: posix.normalize(orig || '.'), path, isDir: st.isDirectory() };
}

/**
 * Paths under `root` matching the glob, in lexical order. Go globs never match `/`, so only entries
 * at the pattern's depth can match: the walk goes no deeper (dockerd walked the whole context).
 */
export function matchWildcards(root: string, pattern: string): string[] {
  const clean = posix.normalize(pattern).replace(/\/$/, '');
  const depth = clean.split('/').length;
  const out: string[] = [];
  const walk = (rel: string, level: number): void => {
    const dir = rel === '' ? root : `${root}/${rel}`;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return; // not a directory (or gone): nothing below it can match
    }
    for (const name of names) {
      const child = rel === '' ? name : `${rel}/${name}`;
      if (level === depth) {
        if (globMatch(clean, child)) out.push(child);
      } else if (lstatSync(`${root}/${child}`).isDirectory()) {
        walk(child, level + 1);
      }
    }
  };
  walk('', 1);
  return out;
}

/** The file name Docker gives a download: the URL path's last part, else Content-Disposition. */
export function filenameForDownload(url: URL, contentDisposition: string | null): string {
  if (url.pathname !== '' && !url.pathname.endsWith('/')) {
    const base = posix.basename(decodeURIComponent(url.pathname));
    if (base) return base;
  }
  const m = contentDisposition ? /(?:^|;)\s*filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(contentDisposition) : null;
  const name = m ? (m[1] ?? m[2] ?? '').replace(/\\(.)/g, '$1') : '';
  if (name && !name.endsWith('/')) return posix.basename(name);
  return '';
}

/** Downloads `url` into `dir` (streamed to disk); mtime from Last-Modified when the server sends one. */
export async function downloadUrl(
  url: string, dir: string, signal?: AbortSignal, onProgress?: (received: number, total: number | undefined) => void,
): Promise<{ file: string; name: string; size: number }> {
  const u = new URL(url);
  const res = await fetch(u, { signal, redirect: 'follow' });
  if (!res.ok) {
    const body = (await res.text().catch(() => '')).slice(0, 512); // the body is only detail: a failed read still reports the status
    throw new Error(`failed to GET ${url} with status ${res.status} ${res.statusText}: ${body}`);
  }
  const name = filenameForDownload(u, res.headers.get('content-disposition'));
  const file = `${dir}/${name || UNNAMED}`;
  const length = Number(res.headers.get('content-length') ?? NaN);
  const total = Number.isFinite(length) ? length : undefined;
  let received = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      onProgress?.(received, total);
      done(null, chunk);
    },
  });
  const body = res.body ? Readable.fromWeb(res.body as import('node:stream/web').ReadableStream) : Readable.from([]);
  await pipeline(body, count, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
  const lastModified = res.headers.get('last-modified');
  const t = lastModified ? Date.parse(lastModified) : NaN;
  if (!Number.isNaN(t)) utimesSync(file, t / 1000, t / 1000);
  return { file, name, size: statSync(file).size };
}
