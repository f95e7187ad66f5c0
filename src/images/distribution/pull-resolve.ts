// The first step of a pull: the reference resolved on one endpoint to the manifest to pull (the
// platform's entry of an index), schema 1 refused, media types and layer digests checked; the
// configuration's platform checked against --platform; an endpoint's failure in dockerd's words.
import { EngineError, internal, invalidParameter } from '../../errors.ts';
import { DEFAULT_DOMAIN } from '../../util/image-reference.ts';
import type { OciImageConfig } from '../image-store.ts';
import { insecureHint, translatePullError } from './errors.ts';
import {
  DEFAULT_PLATFORM,
  formatPlatform,
  platformMatches,
  isIndex,
  isLayer,
  isManifest,
  isSchema1,
  selectManifest,
  type ImageIndex,
  type ImageManifest,
  type Platform,
} from './media.ts';
import { NotV2Error } from './registry-auth.ts';
import type { FetchedManifest, RegistrySession } from './registry-client.ts';
import { certsDir, type Endpoint } from './registry-hosts.ts';
import { TransportError } from './transport.ts';

export interface Resolved {
  top: FetchedManifest;
  manifest: FetchedManifest;
  parsed: ImageManifest;
  /** Position of the chosen manifest in the index (for its gc.ref label). */
  indexPosition?: number;
}

/** What is resolved: the repository path, the tag or digest, and the familiar name for messages. */
export interface ResolveTarget {
  path: string;
  tagOrDigest: string;
  familiarRef: string;
  platform: Platform | undefined;
}

export function parseImageManifest(m: FetchedManifest, familiarRef: string): ImageManifest {
  const parsed = JSON.parse(m.bytes.toString('utf8')) as ImageManifest;
  if (!parsed.config?.digest || !Array.isArray(parsed.layers)) throw internal(`${familiarRef}: malformed image manifest`);
  for (const l of parsed.layers) {
    if (!isLayer(l.mediaType)) throw invalidParameter(`unsupported layer media type ${l.mediaType} in ${familiarRef}`);
    if (!/^sha256:[a-f0-9]{64}$/.test(l.digest)) throw invalidParameter(`unsupported layer digest ${l.digest} in ${familiarRef}`);
  }
  return parsed;
}

export async function resolveManifest(session: RegistrySession, t: ResolveTarget, signal: AbortSignal): Promise<Resolved> {
  const top = await session.getManifest(t.path, t.tagOrDigest, signal);
  if (isSchema1(top.mediaType)) {
    throw invalidParameter(
      `Docker Image Format v1 and Docker Image manifest version 2, schema 1 support has been removed. Suggest the author of ${t.familiarRef} to upgrade the image to the OCI Format or Docker Image manifest v2, schema 2.`,
    );
  }
  if (isIndex(top.mediaType)) {
    const index = JSON.parse(top.bytes.toString('utf8')) as ImageIndex;
    if (!Array.isArray(index.manifests)) throw internal(`${t.familiarRef}: malformed manifest list`);
    const want = t.platform ?? DEFAULT_PLATFORM;
    const desc = selectManifest(index, want);
    const manifest = await session.getManifest(t.path, desc.digest, signal);
    if (manifest.bytes.length !== desc.size)
      throw internal(`manifest ${desc.digest}: size ${manifest.bytes.length} does not match the index (${desc.size})`);
    if (!isManifest(manifest.mediaType))
      throw invalidParameter(`unsupported manifest media type ${manifest.mediaType} in ${t.familiarRef}`);
    return { top, manifest, parsed: parseImageManifest(manifest, t.familiarRef), indexPosition: index.manifests.indexOf(desc) };
  }
  if (!isManifest(top.mediaType)) throw invalidParameter(`unsupported manifest media type ${top.mediaType} for ${t.familiarRef}`);
  return { top, manifest: top, parsed: parseImageManifest(top, t.familiarRef) };
}

/** A single-platform image pulled with --platform must be of that platform (dockerd's NOT_FOUND). */
export function checkPlatform(r: Resolved, config: OciImageConfig, platform: Platform | undefined, familiarRef: string): void {
  if (!platform || r.top !== r.manifest) return;
  const variant = (config as { variant?: string }).variant;
  const actual = { os: config.os ?? '', architecture: config.architecture ?? '', ...(variant ? { variant } : {}) };
  if (platformMatches(actual, platform)) return;
  throw new EngineError(
    'NOT_FOUND',
    `image with reference ${familiarRef} was found but does not match the specified platform: wanted ${formatPlatform(platform)}, actual: ${config.os}/${config.architecture}`,
  );
}

/** An endpoint's failure in dockerd's words (TLS hint for a registry not marked insecure, cancellation). */
export function describePullError(err: unknown, ep: Endpoint, aborted: boolean, familiarRef: string, familiarRepo: string): EngineError {
  if (err instanceof TransportError && err.tlsProblem && !ep.insecure && !ep.mirror && ep.registry !== DEFAULT_DOMAIN) {
    return new EngineError('INTERNAL', err.message + insecureHint(ep.registry, certsDir()));
  }
  if (err instanceof NotV2Error) return new EngineError('INTERNAL', err.message);
  if (aborted && !(err instanceof EngineError)) return new EngineError('INTERNAL', 'context canceled');
  return translatePullError(err, familiarRef, familiarRepo);
}
