// GET /info shaped by the client's API version, as dockerd's system router does it: fields newer
// than the version are left out, fields an older version still had are put back with the values
// that version gave. The backend's answer is copied, never changed.
import type { SystemInfoView, VersionedInfo } from '../../types/system.ts';
import { versionLessThan } from '../../util/api-version.ts';

/** The /info answer for a client of API `version`. */
export function infoForVersion(source: SystemInfoView, version: string): VersionedInfo {
  const lt = (v: string) => versionLessThan(version, v);
  if (!lt('1.42') && 'KernelMemory' in source) {
    // KernelMemory is false (omitted) from API 1.42.
    const { KernelMemory: _gone, ...rest } = source;
    source = rest;
  }
  if (!lt('1.50')) return source;
  const info: VersionedInfo = { ...source };
  // Before 1.25 SecurityOptions were names only ("seccomp", not "name=seccomp,profile=…").
  if (lt('1.25') && info.SecurityOptions) info.SecurityOptions = info.SecurityOptions.map((o) => securityOptionName(o));
  if (lt('1.39')) {
    if (!info.KernelVersion) info.KernelVersion = '<unknown>';
    if (!info.OperatingSystem) info.OperatingSystem = '<unknown>';
  }
  // A runtime's status exists from 1.44.
  if (lt('1.44') && info.Runtimes) {
    info.Runtimes = Object.fromEntries(Object.entries(info.Runtimes).map(([k, { status: _status, ...rest }]) => [k, rest]));
  }
  if (lt('1.46')) delete info.Containerd;
  // Before 1.47 these two were always present, even empty (null).
  if (lt('1.47') && info.RegistryConfig) {
    info.RegistryConfig = {
      AllowNondistributableArtifactsCIDRs: null,
      AllowNondistributableArtifactsHostnames: null,
      ...info.RegistryConfig,
    };
  }
  if (lt('1.49')) {
    delete info.FirewallBackend;
    // The commits' Expected (equal to ID) were dropped in 1.49.
    for (const k of ['ContainerdCommit', 'RuncCommit', 'InitCommit'] as const) {
      const c = info[k];
      if (c) info[k] = { ...c, Expected: c.ID };
    }
  }
  // Before 1.50: no DiscoveredDevices, and the bridge-nf fields always false.
  delete info.DiscoveredDevices;
  info.BridgeNfIptables = false;
  info.BridgeNfIp6tables = false;
  return info;
}

/** "name=seccomp,profile=default" → "seccomp" (the option itself when it has no name). */
function securityOptionName(opt: string): string {
  for (const kv of opt.split(',')) {
    const eq = kv.indexOf('=');
    if (eq > 0 && kv.slice(0, eq) === 'name') return kv.slice(eq + 1);
  }
  return opt;
}
