// Image references: parsing, normalisation (busybox → docker.io/library/busybox:latest) and the
// short "familiar" form users see. Grammar per the distribution reference rules. A leaf module in
// util/ because layers below images/ parse references too (the event filter in events/).
import { invalidParameter } from '../errors.ts';

export const DEFAULT_DOMAIN = 'docker.io';
const LEGACY_DOMAIN = 'index.docker.io';
const OFFICIAL_PREFIX = 'library/';

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const DOMAIN =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$/;

export interface Reference {
  domain: string;
  /** Repository path inside the registry (library/busybox). */
  path: string;
  tag?: string;
  digest?: string;
}

/** Full name without tag/digest: docker.io/library/busybox. */
export const repoName = (r: Reference) => `${r.domain}/${r.path}`;

/** Canonical string: docker.io/library/busybox:latest or …@sha256:…. */
export function referenceString(r: Reference): string {
  return repoName(r) + (r.tag ? `:${r.tag}` : '') + (r.digest ? `@${r.digest}` : '');
}

/** What users see: busybox:latest, localhost:5000/x:1. */
export function familiarName(r: Reference): string {
  let name = repoName(r);
  if (r.domain === DEFAULT_DOMAIN)
    name = r.path.startsWith(OFFICIAL_PREFIX) && r.path.split('/').length === 2 ? r.path.slice(OFFICIAL_PREFIX.length) : r.path;
  return name;
}

export function familiarString(r: Reference): string {
  return familiarName(r) + (r.tag ? `:${r.tag}` : '') + (r.digest ? `@${r.digest}` : '');
}

/** Parses and normalises; `defaultTag` adds :latest when neither tag nor digest is given. */
export function parseReference(input: string, opts: { defaultTag?: boolean } = { defaultTag: true }): Reference {
  if (!input) throw invalidParameter('invalid reference format');
  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw invalidParameter(`invalid reference format: invalid digest ${JSON.stringify(digest)}`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw invalidParameter('invalid reference format');
  }
  let domain = DEFAULT_DOMAIN;
  let path = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase()) {
      domain = first;
      path = rest.slice(slash + 1);
    }
  }
  if (!DOMAIN.test(domain)) throw invalidParameter('invalid reference format');
  if (domain === LEGACY_DOMAIN) domain = DEFAULT_DOMAIN;
  if (path !== path.toLowerCase()) throw invalidParameter(`invalid reference format: repository name (${path}) must be lowercase`);
  if (!path || !path.split('/').every((c) => COMPONENT.test(c))) throw invalidParameter('invalid reference format');
  if (domain === DEFAULT_DOMAIN && !path.includes('/')) path = OFFICIAL_PREFIX + path;
  if (repoName({ domain, path }).length > 255)
    throw invalidParameter('invalid reference format: repository name must not be more than 255 characters');
  if (!tag && !digest && opts.defaultTag !== false) tag = 'latest';
  return { domain, path, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** A 64-hex string (or sha256:-prefixed) names an image by ID rather than by reference. */
export function looksLikeImageId(s: string): boolean {
  return /^(sha256:)?[a-f0-9]{64}$/.test(s);
}

export function isValidTag(tag: string): boolean {
  return TAG.test(tag);
}

/**
 * Image records with this prefix keep an image that has lost its last name (moby's containerd
 * store uses the same name): `moby-dangling@<target digest>`. They are never shown as tags.
 */
export const DANGLING_PREFIX = 'moby-dangling@';

export function isDanglingName(name: string): boolean {
  return name.startsWith(DANGLING_PREFIX);
}

/** A fully qualified reference in its familiar form (dockerd's ParseNamed + FamiliarString); others as given. */
export function familiarIfCanonical(ref: string): string {
  try {
    const r = parseReference(ref, { defaultTag: false });
    return referenceString(r) === ref ? familiarString(r) : ref;
  } catch {
    return ref; // an ID or something else: named as given
  }
}
