// How the docker CLI prints a cluster object it inspects: the daemon's JSON decoded into the Go type
// of moby's api/types/swarm (v28) and written back with json.MarshalIndent: fields in the struct's
// order, names matched case-insensitively, unknown fields dropped, absent ones at their zero value,
// `omitempty` fields left out when empty (never a struct nor a time, which Go does not count as
// empty), map keys sorted. GO_LAYOUT lists each type's fields as [JSON name, type, omitempty]; a
// type is a scalar ('string', 'int' for every number, 'bool', 'time', 'any'), a struct's name, or
// `*T`, `[]T`, `map[string]T`. Written from the Go declarations (facts of the wire format).

type Field = readonly [name: string, type: string, omitempty?: 1];

// prettier-ignore
export const GO_LAYOUT: Record<string, readonly Field[]> = {
  'Service': [['ID', 'string'], ['Version', 'Version', 1], ['CreatedAt', 'time', 1], ['UpdatedAt', 'time', 1], ['Spec', 'ServiceSpec', 1], ['PreviousSpec', '*ServiceSpec', 1], ['Endpoint', 'Endpoint', 1], ['UpdateStatus', '*UpdateStatus', 1], ['ServiceStatus', '*ServiceStatus', 1], ['JobStatus', '*JobStatus', 1]],
  'Node': [['ID', 'string'], ['Version', 'Version', 1], ['CreatedAt', 'time', 1], ['UpdatedAt', 'time', 1], ['Spec', 'NodeSpec', 1], ['Description', 'NodeDescription', 1], ['Status', 'NodeStatus', 1], ['ManagerStatus', '*ManagerStatus', 1]],
  'Task': [['ID', 'string'], ['Version', 'Version', 1], ['CreatedAt', 'time', 1], ['UpdatedAt', 'time', 1], ['Name', 'string', 1], ['Labels', 'map[string]string'], ['Spec', 'TaskSpec', 1], ['ServiceID', 'string', 1], ['Slot', 'int', 1], ['NodeID', 'string', 1], ['Status', 'TaskStatus', 1], ['DesiredState', 'string', 1], ['NetworksAttachments', '[]NetworkAttachment', 1], ['GenericResources', '[]GenericResource', 1], ['JobIteration', '*Version', 1], ['Volumes', '[]VolumeAttachment']],
  'Secret': [['ID', 'string'], ['Version', 'Version', 1], ['CreatedAt', 'time', 1], ['UpdatedAt', 'time', 1], ['Spec', 'SecretSpec']],
  'Config': [['ID', 'string'], ['Version', 'Version', 1], ['CreatedAt', 'time', 1], ['UpdatedAt', 'time', 1], ['Spec', 'ConfigSpec']],
  'Swarm': [['ID', 'string'], ['Version', 'Version', 1], ['CreatedAt', 'time', 1], ['UpdatedAt', 'time', 1], ['Spec', 'Spec'], ['TLSInfo', 'TLSInfo'], ['RootRotationInProgress', 'bool'], ['DefaultAddrPool', '[]string'], ['SubnetSize', 'int'], ['DataPathPort', 'int'], ['JoinTokens', 'JoinTokens']],
  'Version': [['Index', 'int', 1]],
  'ServiceSpec': [['Name', 'string', 1], ['Labels', 'map[string]string'], ['TaskTemplate', 'TaskSpec', 1], ['Mode', 'ServiceMode', 1], ['UpdateConfig', '*UpdateConfig', 1], ['RollbackConfig', '*UpdateConfig', 1], ['Networks', '[]NetworkAttachmentConfig', 1], ['EndpointSpec', '*EndpointSpec', 1]],
  'Endpoint': [['Spec', 'EndpointSpec', 1], ['Ports', '[]PortConfig', 1], ['VirtualIPs', '[]EndpointVirtualIP', 1]],
  'UpdateStatus': [['State', 'string', 1], ['StartedAt', '*time', 1], ['CompletedAt', '*time', 1], ['Message', 'string', 1]],
  'ServiceStatus': [['RunningTasks', 'int'], ['DesiredTasks', 'int'], ['CompletedTasks', 'int']],
  'JobStatus': [['JobIteration', 'Version'], ['LastExecution', 'time', 1]],
  'NodeSpec': [['Name', 'string', 1], ['Labels', 'map[string]string'], ['Role', 'string', 1], ['Availability', 'string', 1]],
  'NodeDescription': [['Hostname', 'string', 1], ['Platform', 'Platform', 1], ['Resources', 'Resources', 1], ['Engine', 'EngineDescription', 1], ['TLSInfo', 'TLSInfo', 1], ['CSIInfo', '[]NodeCSIInfo', 1]],
  'NodeStatus': [['State', 'string', 1], ['Message', 'string', 1], ['Addr', 'string', 1]],
  'ManagerStatus': [['Leader', 'bool', 1], ['Reachability', 'string', 1], ['Addr', 'string', 1]],
  'TaskSpec': [['ContainerSpec', '*ContainerSpec', 1], ['PluginSpec', '*runtime.PluginSpec', 1], ['NetworkAttachmentSpec', '*NetworkAttachmentSpec', 1], ['Resources', '*ResourceRequirements', 1], ['RestartPolicy', '*RestartPolicy', 1], ['Placement', '*Placement', 1], ['Networks', '[]NetworkAttachmentConfig', 1], ['LogDriver', '*Driver', 1], ['ForceUpdate', 'int'], ['Runtime', 'string', 1]],
  'TaskStatus': [['Timestamp', 'time', 1], ['State', 'string', 1], ['Message', 'string', 1], ['Err', 'string', 1], ['ContainerStatus', '*ContainerStatus', 1], ['PortStatus', 'PortStatus', 1]],
  'NetworkAttachment': [['Network', 'Network', 1], ['Addresses', '[]string', 1]],
  'GenericResource': [['NamedResourceSpec', '*NamedGenericResource', 1], ['DiscreteResourceSpec', '*DiscreteGenericResource', 1]],
  'VolumeAttachment': [['ID', 'string', 1], ['Source', 'string', 1], ['Target', 'string', 1]],
  'SecretSpec': [['Name', 'string', 1], ['Labels', 'map[string]string'], ['Data', 'string', 1], ['Driver', '*Driver', 1], ['Templating', '*Driver', 1]],
  'ConfigSpec': [['Name', 'string', 1], ['Labels', 'map[string]string'], ['Data', 'string', 1], ['Templating', '*Driver', 1]],
  'Spec': [['Name', 'string', 1], ['Labels', 'map[string]string'], ['Orchestration', 'OrchestrationConfig', 1], ['Raft', 'RaftConfig', 1], ['Dispatcher', 'DispatcherConfig', 1], ['CAConfig', 'CAConfig', 1], ['TaskDefaults', 'TaskDefaults', 1], ['EncryptionConfig', 'EncryptionConfig', 1]],
  'TLSInfo': [['TrustRoot', 'string', 1], ['CertIssuerSubject', 'string', 1], ['CertIssuerPublicKey', 'string', 1]],
  'JoinTokens': [['Worker', 'string'], ['Manager', 'string']],
  'ServiceMode': [['Replicated', '*ReplicatedService', 1], ['Global', '*GlobalService', 1], ['ReplicatedJob', '*ReplicatedJob', 1], ['GlobalJob', '*GlobalJob', 1]],
  'UpdateConfig': [['Parallelism', 'int'], ['Delay', 'int', 1], ['FailureAction', 'string', 1], ['Monitor', 'int', 1], ['MaxFailureRatio', 'int'], ['Order', 'string']],
  'NetworkAttachmentConfig': [['Target', 'string', 1], ['Aliases', '[]string', 1], ['DriverOpts', 'map[string]string', 1]],
  'EndpointSpec': [['Mode', 'string', 1], ['Ports', '[]PortConfig', 1]],
  'PortConfig': [['Name', 'string', 1], ['Protocol', 'string', 1], ['TargetPort', 'int', 1], ['PublishedPort', 'int', 1], ['PublishMode', 'string', 1]],
  'EndpointVirtualIP': [['NetworkID', 'string', 1], ['Addr', 'string', 1]],
  'Platform': [['Architecture', 'string', 1], ['OS', 'string', 1]],
  'Resources': [['NanoCPUs', 'int', 1], ['MemoryBytes', 'int', 1], ['GenericResources', '[]GenericResource', 1]],
  'EngineDescription': [['EngineVersion', 'string', 1], ['Labels', 'map[string]string', 1], ['Plugins', '[]PluginDescription', 1]],
  'NodeCSIInfo': [['PluginName', 'string', 1], ['NodeID', 'string', 1], ['MaxVolumesPerNode', 'int', 1], ['AccessibleTopology', '*Topology', 1]],
  'ContainerSpec': [['Image', 'string', 1], ['Labels', 'map[string]string', 1], ['Command', '[]string', 1], ['Args', '[]string', 1], ['Hostname', 'string', 1], ['Env', '[]string', 1], ['Dir', 'string', 1], ['User', 'string', 1], ['Groups', '[]string', 1], ['Privileges', '*Privileges', 1], ['Init', '*bool', 1], ['StopSignal', 'string', 1], ['TTY', 'bool', 1], ['OpenStdin', 'bool', 1], ['ReadOnly', 'bool', 1], ['Mounts', '[]mount.Mount', 1], ['StopGracePeriod', '*int', 1], ['Healthcheck', '*container.HealthConfig', 1], ['Hosts', '[]string', 1], ['DNSConfig', '*DNSConfig', 1], ['Secrets', '[]*SecretReference', 1], ['Configs', '[]*ConfigReference', 1], ['Isolation', 'string', 1], ['Sysctls', 'map[string]string', 1], ['CapabilityAdd', '[]string', 1], ['CapabilityDrop', '[]string', 1], ['Ulimits', '[]*container.Ulimit', 1], ['OomScoreAdj', 'int', 1]],
  'runtime.PluginSpec': [['name', 'string', 1], ['remote', 'string', 1], ['privileges', '[]*runtime.PluginPrivilege', 1], ['disabled', 'bool', 1], ['env', '[]string', 1]],
  'NetworkAttachmentSpec': [['ContainerID', 'string']],
  'ResourceRequirements': [['Limits', '*Limit', 1], ['Reservations', '*Resources', 1]],
  'RestartPolicy': [['Condition', 'string', 1], ['Delay', '*int', 1], ['MaxAttempts', '*int', 1], ['Window', '*int', 1]],
  'Placement': [['Constraints', '[]string', 1], ['Preferences', '[]PlacementPreference', 1], ['MaxReplicas', 'int', 1], ['Platforms', '[]Platform', 1]],
  'Driver': [['Name', 'string', 1], ['Options', 'map[string]string', 1]],
  'ContainerStatus': [['ContainerID', 'string'], ['PID', 'int'], ['ExitCode', 'int']],
  'PortStatus': [['Ports', '[]PortConfig', 1]],
  'Network': [['ID', 'string'], ['Version', 'Version', 1], ['CreatedAt', 'time', 1], ['UpdatedAt', 'time', 1], ['Spec', 'NetworkSpec', 1], ['DriverState', 'Driver', 1], ['IPAMOptions', '*IPAMOptions', 1]],
  'NamedGenericResource': [['Kind', 'string', 1], ['Value', 'string', 1]],
  'DiscreteGenericResource': [['Kind', 'string', 1], ['Value', 'int', 1]],
  'OrchestrationConfig': [['TaskHistoryRetentionLimit', '*int', 1]],
  'RaftConfig': [['SnapshotInterval', 'int', 1], ['KeepOldSnapshots', '*int', 1], ['LogEntriesForSlowFollowers', 'int', 1], ['ElectionTick', 'int'], ['HeartbeatTick', 'int']],
  'DispatcherConfig': [['HeartbeatPeriod', 'int', 1]],
  'CAConfig': [['NodeCertExpiry', 'int', 1], ['ExternalCAs', '[]*ExternalCA', 1], ['SigningCACert', 'string', 1], ['SigningCAKey', 'string', 1], ['ForceRotate', 'int', 1]],
  'TaskDefaults': [['LogDriver', '*Driver', 1]],
  'EncryptionConfig': [['AutoLockManagers', 'bool']],
  'ReplicatedService': [['Replicas', '*int', 1]],
  'GlobalService': [],
  'ReplicatedJob': [['MaxConcurrent', '*int', 1], ['TotalCompletions', '*int', 1]],
  'GlobalJob': [],
  'PluginDescription': [['Type', 'string', 1], ['Name', 'string', 1]],
  'Topology': [['Segments', 'map[string]string', 1]],
  'Privileges': [['CredentialSpec', '*CredentialSpec'], ['SELinuxContext', '*SELinuxContext'], ['Seccomp', '*SeccompOpts', 1], ['AppArmor', '*AppArmorOpts', 1], ['NoNewPrivileges', 'bool']],
  'mount.Mount': [['Type', 'string', 1], ['Source', 'string', 1], ['Target', 'string', 1], ['ReadOnly', 'bool', 1], ['Consistency', 'string', 1], ['BindOptions', '*mount.BindOptions', 1], ['VolumeOptions', '*mount.VolumeOptions', 1], ['ImageOptions', '*mount.ImageOptions', 1], ['TmpfsOptions', '*mount.TmpfsOptions', 1], ['ClusterOptions', '*mount.ClusterOptions', 1]],
  'container.HealthConfig': [['Test', '[]string', 1], ['Interval', 'int', 1], ['Timeout', 'int', 1], ['StartPeriod', 'int', 1], ['StartInterval', 'int', 1], ['Retries', 'int', 1]],
  'DNSConfig': [['Nameservers', '[]string', 1], ['Search', '[]string', 1], ['Options', '[]string', 1]],
  'SecretReference': [['File', '*SecretReferenceFileTarget'], ['SecretID', 'string'], ['SecretName', 'string']],
  'ConfigReference': [['File', '*ConfigReferenceFileTarget', 1], ['Runtime', '*ConfigReferenceRuntimeTarget', 1], ['ConfigID', 'string'], ['ConfigName', 'string']],
  'container.Ulimit': [['Name', 'string'], ['Hard', 'int'], ['Soft', 'int']],
  'runtime.PluginPrivilege': [['name', 'string', 1], ['description', 'string', 1], ['value', '[]string', 1]],
  'Limit': [['NanoCPUs', 'int', 1], ['MemoryBytes', 'int', 1], ['Pids', 'int', 1]],
  'PlacementPreference': [['Spread', '*SpreadOver']],
  'NetworkSpec': [['Name', 'string', 1], ['Labels', 'map[string]string'], ['DriverConfiguration', '*Driver', 1], ['IPv6Enabled', 'bool', 1], ['Internal', 'bool', 1], ['Attachable', 'bool', 1], ['Ingress', 'bool', 1], ['IPAMOptions', '*IPAMOptions', 1], ['ConfigFrom', '*network.ConfigReference', 1], ['Scope', 'string', 1]],
  'IPAMOptions': [['Driver', 'Driver', 1], ['Configs', '[]IPAMConfig', 1]],
  'ExternalCA': [['Protocol', 'string'], ['URL', 'string'], ['Options', 'map[string]string', 1], ['CACert', 'string']],
  'CredentialSpec': [['Config', 'string'], ['File', 'string'], ['Registry', 'string']],
  'SELinuxContext': [['Disable', 'bool'], ['User', 'string'], ['Role', 'string'], ['Type', 'string'], ['Level', 'string']],
  'SeccompOpts': [['Mode', 'string', 1], ['Profile', 'string', 1]],
  'AppArmorOpts': [['Mode', 'string', 1]],
  'mount.BindOptions': [['Propagation', 'string', 1], ['NonRecursive', 'bool', 1], ['CreateMountpoint', 'bool', 1], ['ReadOnlyNonRecursive', 'bool', 1], ['ReadOnlyForceRecursive', 'bool', 1]],
  'mount.VolumeOptions': [['NoCopy', 'bool', 1], ['Labels', 'map[string]string', 1], ['Subpath', 'string', 1], ['DriverConfig', '*mount.Driver', 1]],
  'mount.ImageOptions': [['Subpath', 'string', 1]],
  'mount.TmpfsOptions': [['SizeBytes', 'int', 1], ['Mode', 'int', 1], ['Options', '[][]string', 1]],
  'mount.ClusterOptions': [],
  'SecretReferenceFileTarget': [['Name', 'string'], ['UID', 'string'], ['GID', 'string'], ['Mode', 'int']],
  'ConfigReferenceFileTarget': [['Name', 'string'], ['UID', 'string'], ['GID', 'string'], ['Mode', 'int']],
  'ConfigReferenceRuntimeTarget': [],
  'SpreadOver': [['SpreadDescriptor', 'string']],
  'network.ConfigReference': [['Network', 'string']],
  'IPAMConfig': [['Subnet', 'string', 1], ['Range', 'string', 1], ['Gateway', 'string', 1]],
  'mount.Driver': [['Name', 'string', 1], ['Options', 'map[string]string', 1]],
};

/** The Go types the docker CLI inspects objects as. */
export type InspectType = 'Service' | 'Node' | 'Task' | 'Secret' | 'Config' | 'Swarm';

const ZERO_TIME = '0001-01-01T00:00:00Z';
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A field's value as Go's decoder finds it: the exact name first, then one equal when case is folded. */
function member(o: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(o, name)) return o[name];
  const folded = name.toLowerCase();
  const key = Object.keys(o).find((k) => k.toLowerCase() === folded);
  return key === undefined ? undefined : o[key];
}

/** Whether Go's omitempty leaves the value of this type out. */
function empty(v: unknown, type: string): boolean {
  if (type.startsWith('*')) return v === null;
  if (type === 'time' || Object.hasOwn(GO_LAYOUT, type)) return false;
  if (v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

/** `v` (the daemon's JSON value) as the Go type `type` writes it back; depth bounded by the types. */
export function goValue(v: unknown, type: string): unknown {
  if (type.startsWith('*')) return v === undefined || v === null ? null : goValue(v, type.slice(1));
  if (type.startsWith('[]')) return Array.isArray(v) ? v.map((x) => goValue(x, type.slice(2))) : null;
  if (type.startsWith('map[string]')) {
    if (!isObject(v)) return null;
    const item = type.slice('map[string]'.length);
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, goValue(v[k], item)]),
    );
  }
  switch (type) {
    case 'string':
      return typeof v === 'string' ? v : '';
    case 'int':
      return typeof v === 'number' ? v : 0;
    case 'bool':
      return v === true;
    case 'time':
      // Go writes a time back in RFC 3339 with the fraction's trailing zeros dropped.
      return typeof v === 'string' ? v.replace(/\.(\d*?)0+(?=Z|[+-]\d\d:\d\d$)/, (_m, d: string) => (d ? `.${d}` : '')) : ZERO_TIME;
    case 'any':
      return v ?? null;
  }
  const fields = GO_LAYOUT[type];
  if (!fields) throw new Error(`go-layout: no type ${type}`);
  const o = isObject(v) ? v : {};
  const out: Record<string, unknown> = {};
  for (const [name, ft, omitempty] of fields) {
    const value = goValue(member(o, name), ft);
    if (!(omitempty && empty(value, ft))) out[name] = value;
  }
  return out;
}
