// The one place a container's create or update request is checked before anything is stored or
// acted on: the body against the API's types and rules (oci/validate-create.ts), the image, the
// daemon's defaults merged in, then every host-dependent check of the HostConfig (restart policy with
// AutoRemove, runtime, ulimits against the daemon's limits, CDI devices, log driver options, network
// mode and endpoints, volumes, binds and mounts). The task launcher only launches.
import type { DaemonConfig } from '../../../config/daemon-config.ts';
import { invalidParameter, isNotFound } from '../../../errors.ts';
import { isBuiltinLogDriver, validateLogOptions } from '../../../logging/options.ts';
import { cdiDeviceIds, type CdiInjection, type CdiRegistry } from '../../../oci/cdi.ts';
import { checkUlimits, mergeUlimits, type HardLimits } from '../../../oci/rlimits.ts';
import { checkUsernsMode } from '../../../oci/userns.ts';
import { cgroupVersion, refuseLimitsWithoutCgroups } from '../../../oci/cgroups.ts';
import { DEFAULT_READONLY_PATHS, hostMaskedPaths } from '../../../oci/spec.ts';
import { parseBind, validateCreateBody, validateRestartPolicy } from '../../../oci/validate-create.ts';
import { decodeStruct, UPDATE_CONFIG } from '../../../oci/wire-schema.ts';
import type { ContainerConfig, ContainerCreateBody, HostConfig, NetworkingConfig } from '../../../types/container-api.ts';
import { mergeConfig, mergeEnvInSlices, withHostDefaults, type ImageConfigPart } from './create-config.ts';
import { inheritedMountPoints, mountPoints } from './mount-plan.ts';
import { parseLink } from './links.ts';
import type { ContainerRecord, MountPoint } from '../record.ts';

/** The image a create names, as far as verification needs it. */
export interface VerifiedImage {
  id: string;
  chainId: string;
  config: ImageConfigPart;
}

export interface VerifierDeps {
  images: { resolve(ref: string): Promise<VerifiedImage> };
  runtimes: { resolve(name: string): unknown };
  config: () => DaemonConfig;
  shmSize: number;
  /** The daemon's hard rlimits, and whether it may raise them (CAP_SYS_RESOURCE). */
  limits: { hard(): HardLimits; canRaise: boolean };
  /** Container networking (NetworkMode, EndpointsConfig); without it: loopback only, with a warning. */
  networks?: { validateCreate(hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): string[] };
  /** Named and anonymous volumes; without it such mounts are refused. */
  volumes?: { check(hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<void> };
  /** CDI devices; without it DeviceRequests of driver cdi are refused. */
  cdi?: Pick<CdiRegistry, 'resolve'>;
  /** --userns-remap is on (UsernsMode "host" opts out; privileged and host namespaces need that). */
  userns?: boolean;
  /** Rootless without delegated cgroups: resource limits are refused. */
  noCgroups?: boolean;
  /** Other containers by reference (NetworkMode container:<ref>). */
  find: (ref: string) => ContainerRecord;
  /** Looks a log-driver plugin up (throws when there is none); without it only built-in drivers exist. */
  logPlugin?: (name: string) => Promise<unknown>;
}

export interface VerifiedCreate {
  request: ContainerCreateBody;
  image: VerifiedImage;
  config: ContainerConfig;
  hostConfig: HostConfig;
  /** Inspect's Mounts for host-path binds, bind and tmpfs mounts (volumes are added by the volume service). */
  mounts: MountPoint[];
  /** The mount points VolumesFrom brings in (not at a destination the container mounts itself). */
  inherited: MountPoint[];
  warnings: string[];
}

const HOST_AND_LINKS = "conflicting options: host type networking can't be used with links. This would result in undefined behavior";

export class ContainerVerifier {
  constructor(private readonly d: VerifierDeps) {}

  /** Checks a create request; `id` is the new container's (its default hostname). Throws 4xx errors. */
  async verifyCreate(body: unknown, id: string): Promise<VerifiedCreate> {
    const request = validateCreateBody(body);
    if (!request.Image) throw invalidParameter('config cannot be empty in order to create a container');
    const image = await this.d.images.resolve(request.Image);
    const cfg = this.d.config();
    const env = await mergeEnvInSlices(image.config.config?.Env ?? [], request.Env ?? []);
    const config = mergeConfig(request, image.config, id, env);
    config.Image = request.Image;
    const hostConfig = withHostDefaults(request.HostConfig, {
      logDriver: cfg['log-driver'],
      logOpts: cfg['log-opts'],
      runtime: cfg['default-runtime'],
      shmSize: this.d.shmSize,
      cgroupnsMode: cfg['default-cgroupns-mode'],
      ipcMode: cfg['default-ipc-mode'],
      maskedPaths: hostMaskedPaths(),
      readonlyPaths: DEFAULT_READONLY_PATHS,
      oomKillDisable: !this.d.noCgroups && cgroupVersion() === 1,
    });
    if (hostConfig.AutoRemove && hostConfig.RestartPolicy?.Name && hostConfig.RestartPolicy.Name !== 'no') {
      throw invalidParameter("can't create 'AutoRemove' container with restart policy");
    }
    this.checkStart(hostConfig);
    await this.checkLogDriver(hostConfig.LogConfig!.Type ?? cfg['log-driver'], hostConfig.LogConfig!.Config ?? {});
    const warnings: string[] = [];
    this.pinSharedNamespaces(hostConfig);
    const mode = hostConfig.NetworkMode!;
    if (this.d.networks) {
      warnings.push(...this.d.networks.validateCreate(hostConfig, config, request.NetworkingConfig));
    } else if (mode === 'bridge' || (mode !== 'none' && mode !== 'host' && !mode.startsWith('container:'))) {
      warnings.push(`network mode "${mode}" is not built yet: the container gets its own network namespace with loopback only`);
    }
    if (mode.startsWith('container:')) this.d.find(mode.slice('container:'.length));
    this.checkLinks(hostConfig);
    await this.d.volumes?.check(hostConfig, config);
    const mounts = mountPoints(hostConfig, this.d.volumes !== undefined);
    const own = [...(hostConfig.Binds ?? []).map((b) => parseBind(b).destination), ...(hostConfig.Mounts ?? []).map((m) => m.Target ?? '')];
    const inherited = hostConfig.VolumesFrom?.length
      ? inheritedMountPoints(
          hostConfig.VolumesFrom,
          this.d.find,
          own.map((d) => ({ Destination: d })),
        )
      : [];
    return { request, image, config, hostConfig, mounts, inherited, warnings };
  }

  /**
   * As dockerd's adaptSharedNamespaceContainer: `container:<name>` of PidMode, IpcMode and
   * NetworkMode is stored as `container:<id>`, so the sharing survives a rename of the other one.
   * An unknown reference is left as it is for the checks that report it.
   */
  private pinSharedNamespaces(hc: HostConfig): void {
    for (const key of ['PidMode', 'IpcMode', 'NetworkMode'] as const) {
      const mode = hc[key];
      if (!mode?.startsWith('container:')) continue;
      try {
        hc[key] = `container:${this.d.find(mode.slice('container:'.length)).Id}`;
      } catch (err) {
        if (!isNotFound(err)) throw err; // a missing container is reported by the mode's own check
      }
    }
  }

  /** A built-in driver's options, or a log plugin that exists (as dockerd, any lookup failure is a 400). */
  private async checkLogDriver(kind: string, options: Record<string, string>): Promise<void> {
    if (isBuiltinLogDriver(kind) || !this.d.logPlugin) return validateLogOptions(kind, options);
    validateLogOptions(kind, options, true);
    try {
      await this.d.logPlugin(kind);
    } catch (err) {
      throw invalidParameter((err as Error).message);
    }
  }

  /**
   * Legacy links, checked at create as dockerd's registerLinks does (not on a user-defined network,
   * where they are DNS aliases): each "name[:alias]" well formed, its container known (a 400, so
   * clients do not report a missing image) and not on the host's network.
   */
  private checkLinks(hc: HostConfig): void {
    const mode = hc.NetworkMode ?? 'default';
    if (!['default', 'bridge', 'host', 'none'].includes(mode) && !mode.startsWith('container:')) return;
    if (!hc.Links?.length) return;
    if (mode === 'host') throw invalidParameter(HOST_AND_LINKS);
    if (mode.startsWith('container:')) {
      throw invalidParameter(
        "conflicting options: container type network can't be used with links. This would result in undefined behavior",
      );
    }
    for (const link of hc.Links) {
      if (link === '') throw invalidParameter('empty string specified for links');
      if (link.split(':').length > 2) throw invalidParameter(`bad format for links: ${link}`);
      const { name } = parseLink(link);
      let child: ContainerRecord;
      try {
        child = this.d.find(name);
      } catch (err) {
        if (isNotFound(err)) throw invalidParameter(`could not get container for ${name}: ${(err as Error).message}`);
        throw err;
      }
      for (let hops = 0; child.HostConfig.NetworkMode?.startsWith('container:') && hops < 16; hops++) {
        child = this.d.find(child.HostConfig.NetworkMode.slice('container:'.length));
      }
      if (child.HostConfig.NetworkMode === 'host') {
        throw invalidParameter(HOST_AND_LINKS);
      }
    }
  }

  /**
   * The checks that depend on the daemon's current settings, at create and again before each start
   * (a reload may have changed them): the runtime exists, the ulimits fit the daemon's own hard
   * limits unless it may raise them (runc would fail with a bare "setrlimit: operation not
   * permitted"), the CDI devices are known (their edits are returned for the launch).
   */
  checkStart(hc: HostConfig): { cdi?: CdiInjection } {
    this.d.runtimes.resolve(hc.Runtime || this.d.config()['default-runtime'] || 'runc');
    const ulimits = mergeUlimits(Object.values(this.d.config()['default-ulimits']), hc.Ulimits);
    if (ulimits.length > 0) checkUlimits(ulimits, this.d.limits.hard(), this.d.limits.canRaise);
    checkUsernsMode(hc, this.d.userns === true);
    if (this.d.noCgroups) refuseLimitsWithoutCgroups(hc as Record<string, unknown>);
    const cdi = this.cdiFor(hc);
    return cdi ? { cdi } : {};
  }

  /** The CDI edits a container asked for (400 for unknown devices or drivers), or undefined. */
  private cdiFor(hc: HostConfig): CdiInjection | undefined {
    const ids = cdiDeviceIds(hc.DeviceRequests, this.d.cdi !== undefined && this.d.config().features?.cdi !== false);
    return ids.length ? this.d.cdi!.resolve(ids) : undefined;
  }

  /**
   * Checks an update request (POST /containers/{id}/update) and returns the HostConfig it asks for;
   * the record is changed only once the running task (if any) accepted it.
   */
  verifyUpdate(rec: ContainerRecord, body: unknown): HostConfig {
    // Typed as dockerd decodes it before anything else: a field of the wrong type (or nested
    // beyond reason) is a 400 naming it, and never reaches the record.
    const typed = decodeStruct(body, UPDATE_CONFIG, 'UpdateConfig');
    // As dockerd: zero values leave a setting alone, a RestartPolicy with an empty Name too (the CLI
    // always sends one).
    const next = { ...rec.HostConfig } as Record<string, unknown>;
    for (const [k, v] of Object.entries(typed)) {
      if (!UPDATABLE.has(k)) continue;
      if (v === 0 || v === '' || v === null || v === undefined) continue;
      next[k] = v;
    }
    const policy = typed.RestartPolicy as { Name?: string; MaximumRetryCount?: number } | undefined;
    if (policy && typeof policy === 'object' && policy.Name) {
      validateRestartPolicy(policy.Name, policy.MaximumRetryCount ?? 0);
      if (rec.HostConfig.AutoRemove && policy.Name !== 'no')
        throw invalidParameter('Restart policy cannot be updated because AutoRemove is enabled for the container');
      next.RestartPolicy = { Name: policy.Name, MaximumRetryCount: policy.MaximumRetryCount ?? 0 };
    }
    const hostConfig = next as HostConfig;
    const mem = hostConfig.Memory ?? 0;
    if (mem > 0 && mem < MIN_MEMORY) throw invalidParameter('Minimum memory limit allowed is 6MB');
    if (mem > 0 && (hostConfig.MemorySwap ?? 0) > 0 && hostConfig.MemorySwap! < mem)
      throw invalidParameter('Minimum memoryswap limit should be larger than memory limit, see usage');
    return hostConfig;
  }
}

const MIN_MEMORY = 6 * 1024 * 1024;

/** The resources `docker update` may change (UpdateConfig's fields besides RestartPolicy). */
const UPDATABLE = new Set([
  'CpuShares',
  'Memory',
  'MemoryReservation',
  'MemorySwap',
  'NanoCpus',
  'CpuPeriod',
  'CpuQuota',
  'CpusetCpus',
  'CpusetMems',
  'PidsLimit',
  'BlkioWeight',
  'KernelMemory',
  'CpuRealtimePeriod',
  'CpuRealtimeRuntime',
  'MemorySwappiness',
  'OomKillDisable',
]);
