// Answers of container inspect that depend on the client's API version, applied to the current
// view (never changed: it may be shared) as dockerd's router does: before API 1.45 a container's Aliases on each user-defined network
// also list its short ID and hostname (clients of that era look containers up by them).

const PREDEFINED_MODES = new Set(['default', 'bridge', 'host', 'none']);

/** A network mode (or network name) that names a user-defined network. */
export function isUserDefinedNetwork(mode: string): boolean {
  return mode !== '' && !PREDEFINED_MODES.has(mode) && !mode.startsWith('container:');
}

interface InspectView {
  Id?: string;
  Config?: { Hostname?: string };
  NetworkSettings?: { Networks?: Record<string, { Aliases?: string[] | null } | null> | null };
}

/** The inspect view for a client older than API 1.45 or not; the view itself is never changed. */
export function inspectForVersion(view: unknown, olderThan145: boolean): unknown {
  if (!olderThan145 || !view || typeof view !== 'object') return view;
  const v = view as InspectView;
  const networks = v.NetworkSettings?.Networks;
  if (!networks) return view;
  const extra = [(v.Id ?? '').slice(0, 12), v.Config?.Hostname ?? ''].filter((s) => s !== '');
  const copied: Record<string, unknown> = {};
  for (const [name, ep] of Object.entries(networks)) {
    copied[name] = ep && isUserDefinedNetwork(name) ? { ...ep, Aliases: [...new Set([...(ep.Aliases ?? []), ...extra])] } : ep;
  }
  return { ...v, NetworkSettings: { ...v.NetworkSettings, Networks: copied } };
}
