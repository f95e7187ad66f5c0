// Answers of container inspect and list that depend on the client's API version, applied to the
// current view (never changed: it may be shared) as dockerd's router does: before API 1.45 a
// container's Aliases on each user-defined network also list its short ID and hostname (clients of
// that era look containers up by them); fields newer than the client's version are left out
// (ImageManifestDescriptor before 1.48, a list entry's HostConfig.Annotations before 1.46).
import { versionLessThan } from '../../util/api-version.ts';
import { JsonText } from '../../util/json-text.ts';
import type { ContainerInspectView, ContainerSummaryView } from '../../types/container-views.ts';

/** A GET /containers/json entry: the view, or its JSON text when the service keeps that cached. */
export type ContainerListEntry = ContainerSummaryView | JsonText;

const PREDEFINED_MODES = new Set(['default', 'bridge', 'host', 'none']);

/** A network mode (or network name) that names a user-defined network. */
export function isUserDefinedNetwork(mode: string): boolean {
  return mode !== '' && !PREDEFINED_MODES.has(mode) && !mode.startsWith('container:');
}

/** The inspect view for a client of API `version`; the view itself is never changed. */
export function inspectForVersion(view: ContainerInspectView, version: string): ContainerInspectView {
  let v = view;
  if (versionLessThan(version, '1.48') && 'ImageManifestDescriptor' in v) {
    const { ImageManifestDescriptor: _omitted, ...rest } = v;
    v = rest;
  }
  if (versionLessThan(version, '1.45')) v = withLegacyAliases(v);
  return v;
}

function withLegacyAliases(v: ContainerInspectView): ContainerInspectView {
  const networks = v.NetworkSettings?.Networks;
  if (!networks) return v;
  const extra = [(v.Id ?? '').slice(0, 12), v.Config?.Hostname ?? ''].filter((s) => s !== '');
  const copied: typeof networks = {};
  for (const [name, ep] of Object.entries(networks)) {
    copied[name] = ep && isUserDefinedNetwork(name) ? { ...ep, Aliases: [...new Set([...(ep.Aliases ?? []), ...extra])] } : ep;
  }
  return { ...v, NetworkSettings: { ...v.NetworkSettings, Networks: copied } };
}

/**
 * GET /containers/json entries for a client of API `version` (copies where a field goes). Entries
 * already serialised (JsonText) pass as they are.
 */
export function listForVersion(list: ContainerListEntry[], version: string): ContainerListEntry[] {
  const noAnnotations = versionLessThan(version, '1.46');
  const noDescriptor = versionLessThan(version, '1.48');
  if (!noAnnotations && !noDescriptor) return list;
  return list.map((item) => {
    if (item instanceof JsonText) return item;
    let e = item;
    if (noDescriptor && 'ImageManifestDescriptor' in e) {
      const { ImageManifestDescriptor: _omitted, ...rest } = e;
      e = rest;
    }
    if (noAnnotations && e.HostConfig && 'Annotations' in e.HostConfig) {
      const { Annotations: _omitted, ...hc } = e.HostConfig;
      e = { ...e, HostConfig: hc };
    }
    return e;
  });
}
