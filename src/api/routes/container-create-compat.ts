// POST /containers/create and /containers/{id}/update as dockerd's container router adapts them to
// the client's API version before the backend sees them: fields a version did not have are reset,
// defaults older clients relied on are filled in, checks newer versions make are made, and the
// container-wide MacAddress is moved to its endpoint. The body is the decoded one (canonical field
// names, from body-schemas.ts) and is changed in place; the answer is the extra warnings.
import { internal, invalidParameter } from '../../errors.ts';
import type { ContainerCreateBody, ContainerUpdateBody, EndpointSettings, MountSpec, NetworkingConfig } from '../../types/container-api.ts';
import { versionLessThan } from '../../util/api-version.ts';
import { isUserDefinedNetwork } from './container-compat.ts';

export interface CreateCompatHost {
  /** cgroup v2 (unified) host: API < 1.41 clients get CgroupnsMode "host" only on v1. */
  cgroup2: boolean;
  /** A local image's platform (its inspect view), undefined when there is no such image. */
  imagePlatform?: (ref: string) => Promise<{ Os?: unknown; Architecture?: unknown; Variant?: unknown } | undefined>;
}

const atLeast = (version: string, v: string) => !versionLessThan(version, v);

/** Adapts a decoded create body to `version` in place; returns the warnings dockerd's router adds. */
export function adaptCreateForVersion(body: ContainerCreateBody, version: string, host: CreateCompatHost): string[] {
  const [hadHostConfig, hadNetworking] = [body.HostConfig !== undefined, body.NetworkingConfig !== undefined];
  const hc = (body.HostConfig ??= {});
  const net: NetworkingConfig = (body.NetworkingConfig ??= {});
  const mounts: MountSpec[] = hc.Mounts ?? [];
  const endpoints = (): EndpointSettings[] => Object.values(net.EndpointsConfig ?? {}).filter((e): e is EndpointSettings => !!e);

  // Before 1.25 the client removed the container itself.
  if (versionLessThan(version, '1.25')) delete hc.AutoRemove;

  if (versionLessThan(version, '1.40')) {
    for (const m of mounts) if (m.BindOptions) delete m.BindOptions.NonRecursive;
    delete hc.KernelMemoryTCP;
    // Clients of that era expect a shareable IPC namespace by default.
    if (!hc.IpcMode) hc.IpcMode = 'shareable';
  }

  // Clients before 1.41 expect the host's cgroup namespace on cgroup v1 hosts.
  if (versionLessThan(version, '1.41') && !host.cgroup2 && !hc.CgroupnsMode) hc.CgroupnsMode = 'host';

  if (versionLessThan(version, '1.42')) {
    for (const m of mounts) {
      if (m.BindOptions) delete m.BindOptions.CreateMountpoint;
      // Invalid combinations older versions did not check: dropped so the checks below pass.
      if (m.VolumeOptions && m.Type !== 'volume') delete m.VolumeOptions;
      if (m.TmpfsOptions && m.Type !== 'tmpfs') delete m.TmpfsOptions;
    }
    // The console size was not applied by a Linux daemon before 1.42.
    delete hc.ConsoleSize;
  } else {
    // KernelMemory is gone from API 1.42.
    delete (hc as { KernelMemory?: number }).KernelMemory;
    for (const m of mounts) {
      if (m.VolumeOptions && m.Type !== 'volume') throw invalidParameter(`VolumeOptions must not be specified on mount type "${m.Type}"`);
      if (m.BindOptions && m.Type !== 'bind') throw invalidParameter(`BindOptions must not be specified on mount type "${m.Type}"`);
      if (m.TmpfsOptions && m.Type !== 'tmpfs') throw invalidParameter(`TmpfsOptions must not be specified on mount type "${m.Type}"`);
    }
  }

  if (versionLessThan(version, '1.43')) delete hc.Annotations;

  if (versionLessThan(version, '1.44')) {
    if (body.Healthcheck) delete body.Healthcheck.StartInterval;
    for (const m of mounts) {
      // An error rather than ignoring it: a client setting it expects recursive read-only enforced.
      if (m.Type === 'bind' && m.BindOptions?.ReadOnlyForceRecursive)
        throw invalidParameter('BindOptions.ReadOnlyForceRecursive needs API v1.44 or newer');
    }
    const names = Object.keys(net.EndpointsConfig ?? {});
    if (names.length > 1) throw invalidParameter(`Container cannot be created with multiple network endpoints: ${names.join(', ')}`);
  }

  if (versionLessThan(version, '1.45')) {
    for (const m of mounts) if (m.VolumeOptions?.Subpath) throw invalidParameter('VolumeOptions.Subpath needs API v1.45 or newer');
  }

  if (versionLessThan(version, '1.48')) {
    // Before 1.48 every endpoint had the same gateway priority.
    for (const ep of endpoints()) delete ep.GwPriority;
    for (const m of mounts) if ((m.Type as string) === 'image') throw invalidParameter('Mount type "Image" needs API v1.48 or newer');
  }

  const warnings: string[] = [];
  const volumeDriver = volumeDriverWarning(body, version);
  if (volumeDriver) warnings.push(volumeDriver);
  const mac = migrateMacAddress(body, version);
  if (mac) warnings.push(mac);
  checkInterfaceSysctls(body, version);
  // Nothing the client did not send is added but what the adaptation put there.
  if (!hadHostConfig && Object.keys(hc).length === 0) delete body.HostConfig;
  if (!hadNetworking && Object.keys(net).length === 0) delete body.NetworkingConfig;
  return warnings;
}

/** From API 1.48: the container-wide VolumeDriver does not apply to volumes given as mounts. */
function volumeDriverWarning(body: ContainerCreateBody, version: string): string | undefined {
  const hc = body.HostConfig ?? {};
  if (!hc.VolumeDriver || versionLessThan(version, '1.48')) return undefined;
  for (const m of hc.Mounts ?? []) {
    if (m.Type !== 'volume' || m.VolumeOptions?.DriverConfig?.Name) continue;
    return "WARNING: the container-wide volume-driver configuration is ignored for volumes specified via 'mount'. Use '--mount type=volume,volume-driver=...' instead";
  }
  return undefined;
}

/** NetworkMode as dockerd sees it after "default" became the platform's default network. */
function networkName(mode: string | undefined): string {
  return !mode || mode === 'default' ? 'bridge' : mode;
}

/** The endpoint settings the container-wide settings belong to (dockerd's epConfigForNetMode). */
function endpointForMode(version: string, mode: string, net: NetworkingConfig): EndpointSettings {
  const eps = (net.EndpointsConfig ??= {});
  const names = Object.keys(eps);
  if (names.length === 0) return (eps[mode] = {});
  // Before 1.44 there is one endpoint at most, and the old API picked it whatever its key.
  if (versionLessThan(version, '1.44')) return (eps[names[0]!] ??= {});
  const ep = Object.hasOwn(eps, mode) ? eps[mode] : undefined;
  if (ep === undefined) throw invalidParameter('HostConfig.NetworkMode must match the identity of a network in NetworkSettings.Networks');
  return (eps[mode] ??= {});
}

/**
 * Config.MacAddress, deprecated in API 1.44: an older client's is moved to the endpoint of its
 * network (an endpoint MacAddress it sent without one is dropped, as that API ignored it); a newer
 * client's is moved too, must agree with the endpoint's, and earns a warning.
 */
function migrateMacAddress(body: ContainerCreateBody, version: string): string | undefined {
  const hc = body.HostConfig ?? {};
  const net = (body.NetworkingConfig ??= {});
  const mac = body.MacAddress ?? '';
  const mode = networkName(hc.NetworkMode);
  const bridgeOrUser = mode === 'bridge' || isUserDefinedNetwork(mode);
  if (versionLessThan(version, '1.44')) {
    if (mac === '') {
      for (const ep of Object.values(net.EndpointsConfig ?? {})) if (ep) delete ep.MacAddress;
      return undefined;
    }
    if (!bridgeOrUser) throw invalidParameter('conflicting options: mac-address and the network mode');
    endpointForMode(version, mode, net).MacAddress = mac;
    return undefined;
  }
  if (mac === '') return undefined;
  if (bridgeOrUser) {
    let ep: EndpointSettings;
    try {
      ep = endpointForMode(version, mode, net);
    } catch (err) {
      throw invalidParameter(`unable to migrate container-wide MAC address to a specific network: ${(err as Error).message}`);
    }
    if (!ep.MacAddress) ep.MacAddress = mac;
    else if (ep.MacAddress !== mac)
      throw invalidParameter(
        'the container-wide MAC address must match the endpoint-specific MAC address for the main network, or be left empty',
      );
  }
  delete body.MacAddress;
  return 'The container-wide MacAddress field is now deprecated. It should be specified in EndpointsConfig instead.';
}

const ENDPOINT_SYSCTLS = 'com.docker.network.endpoint.sysctls';

/**
 * Sysctls naming an interface (net.<a>.<b>.ethN.<c>) on a container with its own network stack:
 * from API 1.48 dockerd refuses them (they belong in the endpoint's driver option); an older
 * client's are migrated there for eth0 and refused for another interface. Both refusals are plain
 * errors in dockerd's router, hence 500s. The eth0 migration needs per-endpoint sysctls, not built:
 * such a sysctl stays in HostConfig.Sysctls for an older client.
 */
function checkInterfaceSysctls(body: ContainerCreateBody, version: string): void {
  const hc = body.HostConfig ?? {};
  const mode = hc.NetworkMode ?? '';
  if (mode === 'host' || mode.startsWith('container:')) return;
  for (const key of Object.keys(hc.Sysctls ?? {})) {
    const spl = key.split('.');
    if (spl.length < 5 || spl[0] !== 'net' || !spl[3]!.startsWith('eth')) continue;
    if (!versionLessThan(version, '1.48'))
      throw internal(`interface specific sysctl setting "${key}" must be supplied using driver option '${ENDPOINT_SYSCTLS}'`);
    if (spl[3] !== 'eth0')
      throw internal(
        `unable to determine network endpoint for sysctl ${key}, use driver option '${ENDPOINT_SYSCTLS}' to set per-interface sysctls`,
      );
  }
}

/** POST /containers/{id}/update: PidsLimit only from 1.40, KernelMemory ignored from 1.42. */
export function adaptUpdateForVersion(body: ContainerUpdateBody, version: string): void {
  if (versionLessThan(version, '1.40')) delete body.PidsLimit;
  if (atLeast(version, '1.42')) delete body.KernelMemory;
}
