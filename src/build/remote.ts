// `remote=`: the build context fetched from an http(s) URL — a tarball (plain or compressed) or a
// plain Dockerfile, told apart by the first bytes as dockerd does. Git repositories are refused.
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { invalidParameter } from '../errors.ts';
import { sniffCompression } from '../wire/compression.ts';

/** Whether the first bytes are a tar header or a compressed stream. */
export function looksLikeArchive(head: Buffer): boolean {
  if (sniffCompression(head) !== 'none') return true;
  // A first block of zeros is a tar's end-of-archive marker: an empty tar (the context holds
  // nothing, as dockerd finds), however much padding follows.
  if (head.length >= 512 && head.subarray(0, 512).every((b) => b === 0)) return true;
  return head.length >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar';
}

/** The first `n` bytes (or all, if fewer) and a stream of everything including them. */
export async function peek(source: AsyncIterable<Uint8Array>, n: number): Promise<{ head: Buffer; all: AsyncIterable<Uint8Array> }> {
  const it = source[Symbol.asyncIterator]();
  const got: Buffer[] = [];
  let len = 0;
  let done = false;
  while (len < n) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    got.push(Buffer.from(r.value));
    len += r.value.length;
  }
  const all = (async function* () {
    yield* got;
    if (done) return;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  })();
  return { head: Buffer.concat(got).subarray(0, n), all };
}

export async function fetchRemote(remote: string, signal: AbortSignal): Promise<IncomingMessage> {
  let url: URL;
  try {
    url = new URL(remote);
  } catch {
    throw invalidParameter(`unable to prepare context: ${JSON.stringify(remote)} is not a valid URL`);
  }
  if (remote.startsWith('git@') || url.protocol === 'git:' || url.pathname.endsWith('.git')) {
    throw invalidParameter('unable to prepare context: git repositories as build context are not supported by this daemon');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidParameter(`unable to prepare context: unsupported URL scheme ${url.protocol}`);
  const get = url.protocol === 'https:' ? httpsGet : httpGet;
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = get(url, { signal }, resolve);
    req.on('error', (err) => reject(invalidParameter(`unable to prepare context: ${err.message}`)));
  });
  if ((res.statusCode ?? 0) >= 400) {
    res.resume();
    throw invalidParameter(`unable to prepare context: unable to download remote context ${remote}: ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd());
  }
  if ((res.statusCode ?? 0) >= 300) {
    res.resume();
    throw invalidParameter(`unable to prepare context: ${remote} redirects (${res.statusCode}); give the final URL`);
  }
  return res;
}
