// The system backend: what /version and /info report, assembled from the configuration, the host,
// the supervisor and the resource services' counters.
import { LOG_DRIVERS } from '../logging/options.ts';
import { parseGenericResources, type GenericResource } from '../config/generic-resources.ts';
import { readdirSync } from 'node:fs';
import { API_VERSION, MIN_API_VERSION } from '../util/api-version.ts';
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { CgroupDriver } from '../oci/cgroups.ts';
import { ENGINE_COMMIT, ENGINE_VERSION } from '../version.ts';
import { hostInfo } from './host-info.ts';
import type { ClusterObject } from '../types/cluster.ts';
import type { IndexInfo } from '../types/api/index.ts';
import type { InfoRuntime, SystemInfoView, SystemVersionView } from '../types/system.ts';

export interface ComponentVersions {
  containerd: { version: string; revision: string };
  runc: { version: string; commit: string };
  init: { version: string; commit: string };
}

/** Counters other services provide; each later issue plugs its own in. */
export interface SystemCounters {
  containers(): { total: number; running: number; paused: number; stopped: number };
  images(): number;
}

export interface SystemDeps {
  config: () => DaemonConfig;
  engineId: string;
  warnings: () => string[];
  /** The CDI spec directories in use (empty with features.cdi=false). */
  cdiSpecDirs?: () => string[];
  components: () => Promise<ComponentVersions>;
  counters: SystemCounters;
  supervisorAddress: string;
  runtimes: () => Record<string, { path?: string; runtimeArgs?: string[]; runtimeType?: string }>;
  cgroupDriver: CgroupDriver;
  startedAt: Date;
  /** Open /events streams. */
  eventListeners?: () => number;
  /** The data root in use when it is not the configured one (--userns-remap: `<data-root>/<uid>.<gid>`). */
  dataRoot?: string;
  /** Security modes in force beyond the config's: --userns-remap active, rootless. */
  security?: { userns?: boolean; rootless?: boolean };
  /** Enabled managed plugins implementing an interface (VolumeDriver, LogDriver), for /info Plugins. */
  managedPlugins?: (iface: string) => string[];
  /** The Swarm section of /info and the Swarm header of /_ping (cluster/ fills them; absent: inactive). */
  cluster?: { info(): Promise<ClusterObject>; pingState(): string };
  /** The oldest API version served (DOCKER_MIN_API_VERSION); default MIN_API_VERSION. */
  minApiVersion?: string;
}

const INACTIVE_SWARM = { NodeID: '', NodeAddr: '', LocalNodeState: 'inactive', ControlAvailable: false, Error: '', RemoteManagers: null };

export class SystemService {
  constructor(private readonly deps: SystemDeps) {}

  experimental(): boolean {
    return this.deps.config().experimental;
  }

  swarmState(): string {
    return this.deps.cluster?.pingState() ?? 'inactive';
  }

  async version(): Promise<SystemVersionView> {
    const host = hostInfo();
    const c = await this.deps.components();
    const engineDetails = {
      ApiVersion: API_VERSION,
      Arch: host.goArch,
      BuildTime: this.deps.startedAt.toISOString(),
      Experimental: String(this.experimental()),
      GitCommit: ENGINE_COMMIT,
      GoVersion: `node${process.versions.node}`,
      KernelVersion: host.kernelVersion,
      MinAPIVersion: this.deps.minApiVersion ?? MIN_API_VERSION,
      Os: 'linux',
    };
    return {
      Platform: { Name: 'Engine' },
      Components: [
        { Name: 'Engine', Version: ENGINE_VERSION, Details: engineDetails },
        { Name: 'containerd', Version: c.containerd.version, Details: { GitCommit: c.containerd.revision } },
        { Name: 'runc', Version: c.runc.version, Details: { GitCommit: c.runc.commit } },
        { Name: 'engine-init', Version: c.init.version, Details: { GitCommit: c.init.commit } },
      ],
      Version: ENGINE_VERSION,
      ApiVersion: API_VERSION,
      MinAPIVersion: this.deps.minApiVersion ?? MIN_API_VERSION,
      GitCommit: ENGINE_COMMIT,
      GoVersion: `node${process.versions.node}`,
      Os: 'linux',
      Arch: host.goArch,
      KernelVersion: host.kernelVersion,
      Experimental: this.experimental(),
      BuildTime: this.deps.startedAt.toISOString(),
    };
  }

  async info(): Promise<SystemInfoView> {
    const cfg = this.deps.config();
    const host = hostInfo();
    const [c, swarm] = await Promise.all([this.deps.components(), this.deps.cluster?.info() ?? INACTIVE_SWARM]);
    const counts = this.deps.counters.containers();
    const insecure = ['127.0.0.0/8', '::1/128', ...cfg['insecure-registries'].filter((r) => r.includes('/'))];
    const indexConfigs: Record<string, IndexInfo> = {
      'docker.io': { Name: 'docker.io', Mirrors: cfg['registry-mirrors'], Secure: true, Official: true },
    };
    for (const r of cfg['insecure-registries'].filter((r) => !r.includes('/'))) {
      indexConfigs[r] = { Name: r, Mirrors: [], Secure: false, Official: false };
    }
    const runtimes: Record<string, InfoRuntime> = {};
    for (const [name, rt] of Object.entries(this.deps.runtimes())) {
      runtimes[name] = rt.runtimeType
        ? { runtimeType: rt.runtimeType }
        : { path: rt.path ?? name, ...(rt.runtimeArgs?.length ? { runtimeArgs: rt.runtimeArgs } : {}) };
    }
    return {
      ID: this.deps.engineId,
      Containers: counts.total,
      ContainersRunning: counts.running,
      ContainersPaused: counts.paused,
      ContainersStopped: counts.stopped,
      Images: this.deps.counters.images(),
      Driver: cfg['storage-driver'],
      DriverStatus: [['driver-type', 'io.containerd.snapshotter.v1']],
      DockerRootDir: this.deps.dataRoot ?? cfg['data-root'],
      // As dockerd: built-in drivers and the enabled managed plugins of each kind; the configured
      // authorization plugins.
      Plugins: {
        Volume: ['local', ...(this.deps.managedPlugins?.('VolumeDriver') ?? [])],
        Network: ['bridge', 'host', 'none'],
        Authorization: cfg['authorization-plugins']?.length ? cfg['authorization-plugins'] : null,
        Log: [...LOG_DRIVERS, ...(this.deps.managedPlugins?.('LogDriver') ?? [])].sort(),
      },
      MemoryLimit: true,
      SwapLimit: true,
      // As dockerd (omitted when false): kernel-memory accounting of cgroup v1; the router drops
      // KernelMemory for API 1.42 and later.
      ...(host.kernelMemory ? { KernelMemory: true } : {}),
      ...(host.kernelMemoryTCP ? { KernelMemoryTCP: true } : {}),
      CpuCfsPeriod: true,
      CpuCfsQuota: true,
      CPUShares: true,
      CPUSet: true,
      PidsLimit: true,
      OomKillDisable: host.cgroupVersion === '1',
      IPv4Forwarding: true,
      Debug: cfg.debug,
      NFd: openFds(),
      NGoroutines: 0, // no goroutines in Node; the field stays for clients that print it
      SystemTime: new Date().toISOString(),
      LoggingDriver: cfg['log-driver'],
      CgroupDriver: this.deps.cgroupDriver,
      CgroupVersion: host.cgroupVersion,
      NEventsListener: this.deps.eventListeners?.() ?? 0,
      KernelVersion: host.kernelVersion,
      OperatingSystem: host.operatingSystem,
      OSVersion: host.osVersion,
      OSType: 'linux',
      Architecture: host.architecture,
      NCPU: host.ncpu,
      MemTotal: host.memTotal,
      IndexServerAddress: 'https://index.docker.io/v1/',
      RegistryConfig: { InsecureRegistryCIDRs: insecure, IndexConfigs: indexConfigs, Mirrors: cfg['registry-mirrors'] },
      GenericResources: genericResourcesOf(cfg['node-generic-resources']),
      HttpProxy: cfg['proxies.http-proxy'] ?? '',
      HttpsProxy: cfg['proxies.https-proxy'] ?? '',
      NoProxy: cfg['proxies.no-proxy'] ?? '',
      Name: host.hostname,
      Labels: cfg.labels,
      ExperimentalBuild: cfg.experimental,
      ServerVersion: ENGINE_VERSION,
      Runtimes: runtimes,
      DefaultRuntime: cfg['default-runtime'],
      Swarm: swarm,
      LiveRestoreEnabled: cfg['live-restore'],
      Isolation: '',
      InitBinary: 'engine-init',
      ContainerdCommit: { ID: c.containerd.revision },
      RuncCommit: { ID: c.runc.commit },
      InitCommit: { ID: c.init.commit },
      SecurityOptions: securityOptions(cfg, host.cgroupVersion, this.deps.security ?? {}),
      DefaultAddressPools: cfg['default-address-pools'].map((p) => ({ Base: p.base, Size: p.size })),
      FirewallBackend: { Driver: 'iptables' },
      CDISpecDirs: this.deps.cdiSpecDirs?.() ?? cfg['cdi-spec-dirs'],
      Containerd: {
        Address: this.deps.supervisorAddress,
        Namespaces: { Containers: cfg['supervisor-namespace'], Plugins: cfg['supervisor-plugins-namespace'] },
      },
      Warnings: this.deps.warnings().map((w) => (w.startsWith('WARNING') ? w : `WARNING: ${w}`)),
    };
  }
}

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    // no /proc/self/fd: the figure is unknown, reported as 0
    return 0;
  }
}

function securityOptions(cfg: DaemonConfig, cgroupVersion: string, modes: { userns?: boolean; rootless?: boolean }): string[] {
  const out = [
    `name=seccomp,profile=${cfg['seccomp-profile'] === 'unconfined' ? 'unconfined' : cfg['seccomp-profile'] === 'builtin' ? 'builtin' : 'custom'}`,
  ];
  // As in dockerd, userns and rootless come right after seccomp (and SELinux, never on here).
  if (modes.userns) out.push('name=userns');
  if (modes.rootless) out.push('name=rootless');
  if (cfg['no-new-privileges']) out.push('name=no-new-privileges');
  if (cgroupVersion === '2') out.push('name=cgroupns');
  return out;
}

/** --node-generic-resource as /info shows it (null when none, as dockerd). */
function genericResourcesOf(terms: string[] | undefined): GenericResource[] | null {
  if (!terms?.length) return null;
  try {
    return parseGenericResources(terms);
  } catch {
    return null; // refused at start-up and reload already: an invalid list never gets here
  }
}
