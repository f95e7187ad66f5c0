// Legacy links (--link name[:alias]) as names: dockerd registers each link of a container on the
// default bridge under "/<parent>/<alias>", and `DELETE /containers/<parent>/<alias>?link=1` drops
// that link from the parent (the running process keeps its /etc/hosts and environment).
import { conflict, isNotFound, notFound } from '../../../errors.ts';
import type { ContainerRecord } from '../record.ts';

/** A --link value "name[:alias]" as dockerd reads it: the alias defaults to the name; slashes of
 *  the inspect form ("/other:/parent/alias") are dropped. */
export function parseLink(link: string): { name: string; alias: string } {
  const colon = link.indexOf(':');
  const name = (colon < 0 ? link : link.slice(0, colon)).replace(/^\//, '');
  const aliasPath = colon < 0 ? name : link.slice(colon + 1);
  return { name, alias: aliasPath.split('/').pop() || name };
}

/**
 * Removes the link named `ref` ("parent/alias", leading slash optional) from its parent's record
 * and returns the parent, to be persisted. `find` looks a container up by name or ID.
 */
export function removeLegacyLink(ref: string, find: (ref: string) => ContainerRecord): ContainerRecord {
  const name = ref.startsWith('/') ? ref : `/${ref}`;
  const slash = name.lastIndexOf('/');
  if (slash === 0) {
    find(ref); // a plain container name: 404 when there is no such container, as dockerd
    throw conflict('Conflict, cannot remove the default link name of the container');
  }
  const parentName = name.slice(0, slash);
  const alias = name.slice(slash + 1);
  let parent: ContainerRecord;
  try {
    parent = find(parentName);
  } catch (err) {
    // dockerd looks the link name up first: an unknown parent is an unknown name.
    if (isNotFound(err)) throw notFound(`No such container: ${ref}`);
    throw err;
  }
  // Links of a container on a user-defined network are DNS aliases there, never registered names.
  const links = isUserDefinedNetwork(parent.HostConfig.NetworkMode) ? [] : (parent.HostConfig.Links ?? []);
  const kept = links.filter((l) => parseLink(l).alias !== alias);
  if (kept.length === links.length) throw notFound(`No such container: ${ref}`);
  parent.HostConfig.Links = kept;
  return parent;
}

function isUserDefinedNetwork(mode: string | undefined): boolean {
  return !!mode && !['default', 'bridge', 'host', 'none'].includes(mode) && !mode.startsWith('container:');
}
