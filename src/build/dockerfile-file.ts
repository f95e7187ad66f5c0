// Finds and reads the Dockerfile in an unpacked build context as dockerd's classic builder does
// (remotecontext's withDockerfileFromContext): the `dockerfile` parameter is joined to the context
// root and cleaned (so `/sub/Dockerfile` is `sub/Dockerfile`), symlinks are followed inside the
// root, and a name leading outside it is refused. A missing default `Dockerfile` falls back to
// `dockerfile`. dockerd's answers here carry no error type (it sends 500s); they are the client's
// mistakes, so they are 400s here, with dockerd's wording.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { posix } from 'node:path';
import { invalidParameter } from '../errors.ts';
import { IgnoreMatcher, IgnorePatternError } from '../wire/dockerignore.ts';
import { followSymlinkInScope } from './context/scoped-path.ts';

export interface DockerfileText {
  /** The name the build refers to it by (the parameter, or `dockerfile` after the fallback). */
  name: string;
  text: string;
}

export function readDockerfile(root: string, name: string): DockerfileText {
  let full: string;
  try {
    full = followSymlinkInScope(posix.join(root, name), root);
  } catch (err) {
    // dockerd prints the (empty) path its scoped resolution returned on failure.
    throw invalidParameter(`forbidden path outside the build context: ${name} ()`, err);
  }
  let data: Buffer;
  try {
    data = readFileSync(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      if (name === 'Dockerfile' && existsSync(posix.join(root, 'dockerfile'))) return readDockerfile(root, 'dockerfile');
      throw invalidParameter(`Cannot locate specified Dockerfile: ${name}`);
    }
    // Go opens a directory fine; its first read fails.
    if (code === 'EISDIR') throw invalidParameter(`unexpected error reading Dockerfile: read ${full}: is a directory`);
    if (code === 'ENOTDIR') throw invalidParameter(`open ${full}: not a directory`);
    throw err;
  }
  if (!data.length) throw invalidParameter(`the Dockerfile (${name}) cannot be empty`);
  return { name, text: data.toString('utf8') };
}

/**
 * Once the Dockerfile is read, the context's `.dockerignore` and the Dockerfile go from it when the
 * ignore file names them (dockerd's removeDockerfile), so `COPY . /x` does not carry them: docker-py
 * sends a Dockerfile from outside the context under a generated name and lists that name there.
 */
export function removeIgnoredBuildFiles(root: string, dockerfile: string): void {
  let text: string;
  try {
    text = readFileSync(posix.join(root, '.dockerignore'), 'utf8');
  } catch {
    return; // ENOENT: no ignore file, nothing to remove (as dockerd)
  }
  let matcher: IgnoreMatcher;
  try {
    matcher = IgnoreMatcher.fromFile(text);
  } catch (err) {
    throw err instanceof IgnorePatternError ? invalidParameter(err.message) : err;
  }
  for (const name of ['.dockerignore', posix.normalize(dockerfile.replace(/^\/+/, ''))])
    if (matcher.ignores(name)) rmSync(posix.join(root, name), { force: true, recursive: false });
}
