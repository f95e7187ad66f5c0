// Docker Engine API v1.51 wire types for containers: the create body (definitions ContainerConfig,
// HostConfig, Resources, Mount, NetworkingConfig … in engine-api-v1.51.yaml) and the small shapes of
// the other container endpoints. Field names are exactly the wire names. Every field is optional
// because clients send partial bodies; absent and null mean "not set" (validateCreateBody, in
// src/oci/validate-create.ts, drops nulls, so code downstream only has to test for undefined).
// Like everything in src/types/, it depends on nothing else in src/.

export interface PortBinding {
  HostIp?: string;
  HostPort?: string;
}

/** `"<port>/<tcp|udp|sctp>"` → bindings (null = expose without binding). */
export type PortMap = Record<string, PortBinding[] | null>;

export type RestartPolicyName = '' | 'no' | 'always' | 'unless-stopped' | 'on-failure';

export interface RestartPolicy {
  Name?: RestartPolicyName;
  MaximumRetryCount?: number;
}

export interface LogConfig {
  Type?: string;
  Config?: Record<string, string>;
}

/** Durations are nanoseconds, as on the wire. */
export interface HealthConfig {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  Retries?: number;
  StartPeriod?: number;
  StartInterval?: number;
}

export interface DeviceMapping {
  PathOnHost?: string;
  PathInContainer?: string;
  CgroupPermissions?: string;
}

export interface DeviceRequest {
  Driver?: string;
  Count?: number;
  DeviceIDs?: string[];
  Capabilities?: string[][];
  Options?: Record<string, string>;
}

export interface ThrottleDevice {
  Path?: string;
  Rate?: number;
}

export interface WeightDevice {
  Path?: string;
  Weight?: number;
}

export interface Ulimit {
  Name: string;
  Soft: number;
  Hard: number;
}

export type MountType = 'bind' | 'volume' | 'image' | 'tmpfs' | 'npipe' | 'cluster';
export type Propagation = 'private' | 'rprivate' | 'shared' | 'rshared' | 'slave' | 'rslave';

/** HostConfig.Mounts[] entry (definition `Mount`). */
export interface MountSpec {
  Target?: string;
  Source?: string;
  Type?: MountType;
  ReadOnly?: boolean;
  Consistency?: string;
  BindOptions?: {
    Propagation?: Propagation;
    NonRecursive?: boolean;
    CreateMountpoint?: boolean;
    ReadOnlyNonRecursive?: boolean;
    ReadOnlyForceRecursive?: boolean;
  };
  VolumeOptions?: {
    NoCopy?: boolean;
    Labels?: Record<string, string>;
    DriverConfig?: { Name?: string; Options?: Record<string, string> };
    Subpath?: string;
  };
  ImageOptions?: { Subpath?: string };
  TmpfsOptions?: {
    SizeBytes?: number;
    Mode?: number;
    Options?: string[][];
  };
}

/** Definition `Resources` (cgroup settings and ulimits); HostConfig embeds it. */
export interface Resources {
  CpuShares?: number;
  Memory?: number;
  CgroupParent?: string;
  BlkioWeight?: number;
  BlkioWeightDevice?: WeightDevice[];
  BlkioDeviceReadBps?: ThrottleDevice[];
  BlkioDeviceWriteBps?: ThrottleDevice[];
  BlkioDeviceReadIOps?: ThrottleDevice[];
  BlkioDeviceWriteIOps?: ThrottleDevice[];
  CpuPeriod?: number;
  CpuQuota?: number;
  CpuRealtimePeriod?: number;
  CpuRealtimeRuntime?: number;
  CpusetCpus?: string;
  CpusetMems?: string;
  Devices?: DeviceMapping[];
  DeviceCgroupRules?: string[];
  DeviceRequests?: DeviceRequest[];
  KernelMemoryTCP?: number;
  MemoryReservation?: number;
  MemorySwap?: number;
  MemorySwappiness?: number;
  NanoCpus?: number;
  OomKillDisable?: boolean;
  Init?: boolean;
  PidsLimit?: number;
  Ulimits?: Ulimit[];
  // Windows only; accepted and ignored on Linux (CpuPercent, IOMaximum* are refused when set).
  CpuCount?: number;
  CpuPercent?: number;
  IOMaximumIOps?: number;
  IOMaximumBandwidth?: number;
}

export interface HostConfig extends Resources {
  Binds?: string[];
  ContainerIDFile?: string;
  LogConfig?: LogConfig;
  NetworkMode?: string;
  PortBindings?: PortMap;
  RestartPolicy?: RestartPolicy;
  AutoRemove?: boolean;
  VolumeDriver?: string;
  VolumesFrom?: string[];
  Mounts?: MountSpec[];
  ConsoleSize?: [number, number];
  Annotations?: Record<string, string>;
  CapAdd?: string[];
  CapDrop?: string[];
  CgroupnsMode?: '' | 'private' | 'host';
  Dns?: string[];
  DnsOptions?: string[];
  DnsSearch?: string[];
  ExtraHosts?: string[];
  GroupAdd?: string[];
  IpcMode?: string;
  Cgroup?: string;
  Links?: string[];
  OomScoreAdj?: number;
  PidMode?: string;
  Privileged?: boolean;
  PublishAllPorts?: boolean;
  ReadonlyRootfs?: boolean;
  SecurityOpt?: string[];
  StorageOpt?: Record<string, string>;
  Tmpfs?: Record<string, string>;
  UTSMode?: string;
  UsernsMode?: string;
  ShmSize?: number;
  Sysctls?: Record<string, string>;
  Runtime?: string;
  Isolation?: string;
  MaskedPaths?: string[];
  ReadonlyPaths?: string[];
}

export interface ContainerConfig {
  Hostname?: string;
  Domainname?: string;
  User?: string;
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  ExposedPorts?: Record<string, Record<string, never>>;
  Tty?: boolean;
  OpenStdin?: boolean;
  StdinOnce?: boolean;
  Env?: string[];
  /** The wire also accepts a single string; validateCreateBody turns it into a one-element array. */
  Cmd?: string[];
  Healthcheck?: HealthConfig;
  ArgsEscaped?: boolean;
  Image?: string;
  Volumes?: Record<string, Record<string, never>>;
  WorkingDir?: string;
  /** As Cmd. `[]` (explicitly empty) differs from absent: it drops the image's entrypoint. */
  Entrypoint?: string[];
  NetworkDisabled?: boolean;
  MacAddress?: string;
  OnBuild?: string[];
  Labels?: Record<string, string>;
  StopSignal?: string;
  StopTimeout?: number;
  Shell?: string[];
}

export interface EndpointIPAMConfig {
  IPv4Address?: string;
  IPv6Address?: string;
  LinkLocalIPs?: string[];
}

/** The request part of EndpointSettings (the operational fields are output only). */
export interface EndpointSettings {
  /** The description's EndpointIPAMConfig is x-nullable: inspect shows null when none was asked for. */
  IPAMConfig?: EndpointIPAMConfig | null;
  Links?: string[];
  MacAddress?: string;
  Aliases?: string[];
  DriverOpts?: Record<string, string>;
  GwPriority?: number;
  NetworkID?: string;
  EndpointID?: string;
  Gateway?: string;
  IPAddress?: string;
  IPPrefixLen?: number;
  IPv6Gateway?: string;
  GlobalIPv6Address?: string;
  GlobalIPv6PrefixLen?: number;
  DNSNames?: string[];
}

export interface NetworkingConfig {
  EndpointsConfig?: Record<string, EndpointSettings>;
}

export type ContainerCreateBody = ContainerConfig & {
  HostConfig?: HostConfig;
  NetworkingConfig?: NetworkingConfig;
};

/**
 * POST /containers/{id}/update: the description's inline body (Resources and RestartPolicy, dockerd's
 * container.UpdateConfig). KernelMemory is gone from the description but old clients send it; the
 * router drops it from API 1.42.
 */
export type ContainerUpdateBody = Resources & { RestartPolicy?: RestartPolicy; KernelMemory?: number };

/** POST /containers/{id}/wait?condition= */
export type WaitCondition = 'not-running' | 'next-exit' | 'removed';
