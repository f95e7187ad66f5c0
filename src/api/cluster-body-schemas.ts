// The JSON bodies of the cluster endpoints (/swarm, /services, /secrets, /configs, /nodes) and of
// volume create, described with the Go types dockerd decodes them into (api/types/swarm, volume):
// decoded by oci/wire-schema.ts's decoder, field names match in any case and are stored and read
// back in their canonical spelling ({"order": "start-first"} reads back as "Order"), unknown fields
// are dropped, and a wrong JSON type is a 400 in Go's words.
import { HEALTH_CONFIG, MOUNT_KIND, type Kind } from '../oci/wire-schema.ts';

const str: Kind = 'string';
const bool: Kind = 'bool';
const int: Kind = 'int';
const int64: Kind = 'int64';
const uint32: Kind = 'uint32';
const uint64: Kind = 'uint64';
const float32: Kind = 'float32';
const strings: Kind = { array: 'string', goType: '[]string' };
const stringMap: Kind = { map: 'string', goType: 'map[string]string' };
const struct = (goType: string, fields: Record<string, Kind>): Kind => ({ struct: fields, goType });
const arrayOf = (item: Kind, goType: string): Kind => ({ array: item, goType });
/** time.Duration: nanoseconds as a JSON number. */
const duration: Kind = int64;

const driver = struct('swarm.Driver', { Name: str, Options: stringMap });
const annotations = { Name: str, Labels: stringMap };
const fileTarget = struct('swarm.SecretReferenceFileTarget', { Name: str, UID: str, GID: str, Mode: uint32 });

const genericResources = arrayOf(
  struct('swarm.GenericResource', {
    NamedResourceSpec: struct('swarm.NamedGenericResource', { Kind: str, Value: str }),
    DiscreteResourceSpec: struct('swarm.DiscreteGenericResource', { Kind: str, Value: int64 }),
  }),
  '[]swarm.GenericResource',
);

const containerSpec = struct('swarm.ContainerSpec', {
  Image: str,
  Labels: stringMap,
  Command: strings,
  Args: strings,
  Hostname: str,
  Env: strings,
  Dir: str,
  User: str,
  Groups: strings,
  Privileges: struct('swarm.Privileges', {
    CredentialSpec: struct('swarm.CredentialSpec', { Config: str, File: str, Registry: str }),
    SELinuxContext: struct('swarm.SELinuxContext', { Disable: bool, User: str, Role: str, Type: str, Level: str }),
    // Profile is a []byte: base64 in JSON.
    Seccomp: struct('swarm.SeccompOpts', { Mode: str, Profile: str }),
    AppArmor: struct('swarm.AppArmorOpts', { Mode: str }),
    NoNewPrivileges: bool,
  }),
  Init: bool,
  StopSignal: str,
  TTY: bool,
  OpenStdin: bool,
  ReadOnly: bool,
  Mounts: arrayOf(MOUNT_KIND, '[]mount.Mount'),
  StopGracePeriod: duration,
  Healthcheck: HEALTH_CONFIG,
  Hosts: strings,
  DNSConfig: struct('swarm.DNSConfig', { Nameservers: strings, Search: strings, Options: strings }),
  Secrets: arrayOf(struct('swarm.SecretReference', { File: fileTarget, SecretID: str, SecretName: str }), '[]*swarm.SecretReference'),
  Configs: arrayOf(
    struct('swarm.ConfigReference', {
      File: struct('swarm.ConfigReferenceFileTarget', { Name: str, UID: str, GID: str, Mode: uint32 }),
      Runtime: struct('swarm.ConfigReferenceRuntimeTarget', {}),
      ConfigID: str,
      ConfigName: str,
    }),
    '[]*swarm.ConfigReference',
  ),
  Isolation: str,
  Sysctls: stringMap,
  CapabilityAdd: strings,
  CapabilityDrop: strings,
  Ulimits: arrayOf(struct('units.Ulimit', { Name: str, Hard: int64, Soft: int64 }), '[]*units.Ulimit'),
  OomScoreAdj: int64,
});

const networkAttachments = arrayOf(
  struct('swarm.NetworkAttachmentConfig', { Target: str, Aliases: strings, DriverOpts: stringMap }),
  '[]swarm.NetworkAttachmentConfig',
);

const taskSpec = struct('swarm.TaskSpec', {
  ContainerSpec: containerSpec,
  // Plugin and network-attachment tasks: kept as sent (the service refuses them).
  PluginSpec: 'any',
  NetworkAttachmentSpec: struct('swarm.NetworkAttachmentSpec', { ContainerID: str }),
  Resources: struct('swarm.ResourceRequirements', {
    Limits: struct('swarm.Limit', { NanoCPUs: int64, MemoryBytes: int64, Pids: int64 }),
    Reservations: struct('swarm.Resources', { NanoCPUs: int64, MemoryBytes: int64, GenericResources: genericResources }),
  }),
  RestartPolicy: struct('swarm.RestartPolicy', { Condition: str, Delay: duration, MaxAttempts: uint64, Window: duration }),
  Placement: struct('swarm.Placement', {
    Constraints: strings,
    Preferences: arrayOf(
      struct('swarm.PlacementPreference', { Spread: struct('swarm.SpreadOver', { SpreadDescriptor: str }) }),
      '[]swarm.PlacementPreference',
    ),
    MaxReplicas: uint64,
    Platforms: arrayOf(struct('swarm.Platform', { Architecture: str, OS: str }), '[]swarm.Platform'),
  }),
  Networks: networkAttachments,
  LogDriver: driver,
  ForceUpdate: uint64,
  Runtime: str,
});

const updateConfig = struct('swarm.UpdateConfig', {
  Parallelism: uint64,
  Delay: duration,
  FailureAction: str,
  Monitor: duration,
  MaxFailureRatio: float32,
  Order: str,
});

const portConfig = struct('swarm.PortConfig', { Name: str, Protocol: str, TargetPort: uint32, PublishedPort: uint32, PublishMode: str });

/** POST /services/create and /services/{id}/update: swarm.ServiceSpec. */
export const SERVICE_SPEC: Record<string, Kind> = {
  ...annotations,
  TaskTemplate: taskSpec,
  Mode: struct('swarm.ServiceMode', {
    Replicated: struct('swarm.ReplicatedService', { Replicas: uint64 }),
    Global: struct('swarm.GlobalService', {}),
    ReplicatedJob: struct('swarm.ReplicatedJob', { MaxConcurrent: uint64, TotalCompletions: uint64 }),
    GlobalJob: struct('swarm.GlobalJob', {}),
  }),
  UpdateConfig: updateConfig,
  RollbackConfig: updateConfig,
  Networks: networkAttachments,
  EndpointSpec: struct('swarm.EndpointSpec', { Mode: str, Ports: arrayOf(portConfig, '[]swarm.PortConfig') }),
};

/** POST /secrets/create, /secrets/{id}/update: swarm.SecretSpec (Data is base64). */
export const SECRET_SPEC: Record<string, Kind> = { ...annotations, Data: str, Driver: driver, Templating: driver };

/** POST /configs/create, /configs/{id}/update: swarm.ConfigSpec (Data is base64). */
export const CONFIG_SPEC: Record<string, Kind> = { ...annotations, Data: str, Templating: driver };

/** POST /nodes/{id}/update: swarm.NodeSpec. */
export const NODE_SPEC: Record<string, Kind> = { ...annotations, Role: str, Availability: str };

/** The cluster's swarm.Spec (init and /swarm/update). */
export const SWARM_SPEC: Record<string, Kind> = {
  ...annotations,
  Orchestration: struct('swarm.OrchestrationConfig', { TaskHistoryRetentionLimit: int64 }),
  Raft: struct('swarm.RaftConfig', {
    SnapshotInterval: uint64,
    KeepOldSnapshots: uint64,
    LogEntriesForSlowFollowers: uint64,
    ElectionTick: int,
    HeartbeatTick: int,
  }),
  Dispatcher: struct('swarm.DispatcherConfig', { HeartbeatPeriod: duration }),
  CAConfig: struct('swarm.CAConfig', {
    NodeCertExpiry: duration,
    ExternalCAs: arrayOf(struct('swarm.ExternalCA', { Protocol: str, URL: str, Options: stringMap, CACert: str }), '[]*swarm.ExternalCA'),
    SigningCACert: str,
    SigningCAKey: str,
    ForceRotate: uint64,
  }),
  TaskDefaults: struct('swarm.TaskDefaults', { LogDriver: driver }),
  EncryptionConfig: struct('swarm.EncryptionConfig', { AutoLockManagers: bool }),
};

/** POST /swarm/init: swarm.InitRequest. */
export const SWARM_INIT: Record<string, Kind> = {
  ListenAddr: str,
  AdvertiseAddr: str,
  DataPathAddr: str,
  DataPathPort: uint32,
  ForceNewCluster: bool,
  Spec: struct('swarm.Spec', SWARM_SPEC),
  AutoLockManagers: bool,
  Availability: str,
  DefaultAddrPool: strings,
  SubnetSize: uint32,
};

/** POST /swarm/join: swarm.JoinRequest. */
export const SWARM_JOIN: Record<string, Kind> = {
  ListenAddr: str,
  AdvertiseAddr: str,
  DataPathAddr: str,
  RemoteAddrs: strings,
  JoinToken: str,
  Availability: str,
};

/** POST /swarm/unlock: swarm.UnlockRequest. */
export const SWARM_UNLOCK: Record<string, Kind> = { UnlockKey: str };

const topologies = arrayOf(struct('volume.Topology', { Segments: stringMap }), '[]volume.Topology');
const clusterVolumeSpec = struct('volume.ClusterVolumeSpec', {
  Group: str,
  AccessMode: struct('volume.AccessMode', {
    Scope: str,
    Sharing: str,
    MountVolume: struct('volume.TypeMount', { FsType: str, MountFlags: strings }),
    BlockVolume: struct('volume.TypeBlock', {}),
  }),
  AccessibilityRequirements: struct('volume.TopologyRequirement', { Requisite: topologies, Preferred: topologies }),
  CapacityRange: struct('volume.CapacityRange', { RequiredBytes: int64, LimitBytes: int64 }),
  Secrets: arrayOf(struct('volume.Secret', { Key: str, Secret: str }), '[]volume.Secret'),
  Availability: str,
});

/** POST /volumes/create: volume.CreateOptions (a ClusterVolumeSpec makes a cluster volume, API 1.42+). */
export const VOLUME_CREATE: Record<string, Kind> = {
  Name: str,
  Driver: str,
  DriverOpts: stringMap,
  Labels: stringMap,
  ClusterVolumeSpec: clusterVolumeSpec,
};

/** PUT /volumes/{name}: volume.UpdateOptions. */
export const VOLUME_UPDATE: Record<string, Kind> = { Spec: clusterVolumeSpec };
