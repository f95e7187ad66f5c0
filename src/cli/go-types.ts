// The Go types the docker CLI runs a `--format` template over, by name, so that a failed field
// access names them as Go's text/template does ("can't evaluate field X in type
// *formatter.ContainerContext"). A list's row is its formatter's context (a pointer to a struct of
// methods returning strings and booleans); `info`, `version` and `events` run over API structs,
// whose fields that are structs or numbers are described so that `.Swarm.X` names swarm.Info and
// `.MemTotal.X` int64. Field types not described are named from the value: string, bool, int.

/** A Go type: its name, and the types of the fields (or elements) worth naming. */
export type GoType = string | { name: string; fields?: Record<string, GoType>; items?: GoType };

const nameOf = (t: GoType): string => (typeof t === 'string' ? t : t.name);

/** The formatters' contexts of the list commands. */
export const ROW = {
  container: '*formatter.ContainerContext',
  image: '*formatter.imageContext',
  network: '*network.networkContext',
  volume: '*formatter.volumeContext',
  service: '*service.serviceContext',
  node: '*node.nodeContext',
  task: '*task.taskContext',
  secret: '*secret.secretContext',
  config: '*config.configContext',
  stack: '*formatter.stackContext',
  context: '*formatter.clientContextContext',
  plugin: '*plugin.pluginContext',
  search: '*registry.searchContext',
  stats: '*container.statsContext',
  history: '*image.historyContext',
  diskUsage: '*formatter.diskUsageContext',
} as const;

/** `system df`'s rows, one context type per kind of object. */
export const DISK_USAGE_ROWS: Record<string, string> = {
  Images: '*formatter.diskUsageImagesContext',
  Containers: '*formatter.diskUsageContainersContext',
  'Local Volumes': '*formatter.diskUsageVolumesContext',
  'Build Cache': '*formatter.diskUsageBuilderContext',
};

const commit: GoType = { name: 'system.Commit' };

/** `info`: the docker CLI's dockerInfo, which embeds the API's system.Info. */
export const DOCKER_INFO: GoType = {
  name: 'system.dockerInfo',
  fields: {
    Containers: 'int',
    ContainersRunning: 'int',
    ContainersPaused: 'int',
    ContainersStopped: 'int',
    Images: 'int',
    NFd: 'int',
    NGoroutines: 'int',
    NEventsListener: 'int',
    NCPU: 'int',
    MemTotal: 'int64',
    DriverStatus: '[][2]string',
    SystemStatus: '[][2]string',
    Plugins: 'system.PluginsInfo',
    RegistryConfig: '*registry.ServiceConfig',
    GenericResources: '[]swarm.GenericResource',
    Labels: '[]string',
    Swarm: {
      name: 'swarm.Info',
      fields: {
        LocalNodeState: 'swarm.LocalNodeState',
        RemoteManagers: '[]swarm.Peer',
        Nodes: 'int',
        Managers: 'int',
        Cluster: '*swarm.ClusterInfo',
        Warnings: '[]string',
      },
    },
    Isolation: 'container.Isolation',
    ContainerdCommit: commit,
    RuncCommit: commit,
    InitCommit: commit,
    SecurityOptions: '[]string',
    DefaultAddressPools: '[]system.NetworkAddressPool',
    FirewallBackend: '*system.FirewallInfo',
    CDISpecDirs: '[]string',
    DiscoveredDevices: '[]system.DeviceInfo',
    Containerd: '*system.ContainerdInfo',
    Warnings: '[]string',
    ServerErrors: '[]string',
    ClientInfo: '*system.clientInfo',
    ClientErrors: '[]string',
  },
};

/** `version`: the docker CLI's versionInfo. */
export const VERSION_INFO: GoType = {
  name: 'system.versionInfo',
  fields: {
    Client: { name: 'system.clientVersion', fields: { Platform: '*system.platformInfo' } },
    Server: {
      name: '*types.Version',
      fields: {
        Platform: 'struct { Name string }',
        Components: { name: '[]types.ComponentVersion', items: 'types.ComponentVersion' },
      },
    },
  },
};

/** `events`: each message as the API's events.Message. */
export const EVENT_MESSAGE: GoType = {
  name: '*events.Message',
  fields: {
    Type: 'events.Type',
    Action: 'events.Action',
    Actor: { name: 'events.Actor', fields: { Attributes: 'map[string]string' } },
    Time: 'int64',
    TimeNano: 'int64',
  },
};

/**
 * Names the Go types of a value that `type` describes: objects are marked as the template runs
 * (the description's depth bounds the walk), primitives named by the field that holds them.
 */
export class GoTypeNames {
  private readonly marks = new WeakMap<object, GoType>();

  /** Marks `value` and the parts of it `type` describes. */
  mark(value: unknown, type: GoType): void {
    if (value === null || typeof value !== 'object') return;
    this.marks.set(value, type);
    if (typeof type === 'string') return;
    if (type.items && Array.isArray(value)) for (const item of value) this.mark(item, type.items);
    for (const [key, t] of Object.entries(type.fields ?? {})) this.mark((value as Record<string, unknown>)[key], t);
  }

  /** The name `can't evaluate field … in type` gives `value` (reached as `holder.key`). */
  readonly typeName = (value: unknown, holder: unknown, key: string | undefined): string | undefined => {
    if (value !== null && typeof value === 'object') {
      const t = this.marks.get(value);
      return t === undefined ? undefined : nameOf(t);
    }
    if (holder !== null && typeof holder === 'object' && key !== undefined) {
      const t = this.marks.get(holder);
      const f = typeof t === 'object' ? t.fields?.[key] : undefined;
      if (f !== undefined) return nameOf(f);
    }
    if (typeof value === 'string') return 'string';
    if (typeof value === 'boolean') return 'bool';
    if (typeof value === 'number') return 'int';
    return undefined;
  };
}
