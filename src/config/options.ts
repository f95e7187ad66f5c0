// Every daemon option of the spec (§2.3): its flag, short form, key in daemon.json, type, default,
// whether SIGHUP reloads it (§4.3), and whether its behaviour is built yet. This table drives the
// command-line parser, the file loader, --help, conflict checks and the "not built yet" warnings.

export type OptionType =
  | 'bool'
  | 'string'
  | 'int'
  | 'list' //          repeatable flag / array in the file
  | 'map' //           repeatable key=value flag / object of strings in the file (log-opts, labels as list)
  | 'ulimits' //       repeatable name=soft[:hard] / object of {Name,Soft,Hard}
  | 'runtimes' //      --add-runtime name=path / object of {path,runtimeArgs} | {runtimeType,options}
  | 'features' //      --feature name[=bool] / object of name→bool
  | 'address-pools' // --default-address-pool base=…,size=… / array of {base,size}
  | 'network-opts' //  --default-network-opt driver=opt=value / object driver→{opt:value}
  | 'object'; //       file-only structured value (builder)

/**
 * built:     works as the spec says.
 * pending:   parsed and validated, behaviour lands with a later issue (reported at start-up and in /info).
 * unsupported: not supported on this platform/build; setting it is reported as a warning.
 */
export type BuildStatus = 'built' | 'pending' | 'unsupported';

export interface OptionSpec {
  flag: string; //            long flag name, without dashes
  short?: string;
  key: string; //             daemon.json key (dotted for nested: proxies.http-proxy)
  altKeys?: string[]; //      older single-value key forms accepted in the file (host-gateway-ip)
  type: OptionType;
  default?: unknown;
  reloadable?: boolean;
  status: BuildStatus;
  note?: string; //           why it is pending/unsupported, shown in warnings
  help: string;
  fileOnly?: boolean;
  flagOnly?: boolean;
}


export const OPTIONS: OptionSpec[] = [
  { flag: 'add-runtime', key: 'runtimes', type: 'runtimes', default: {}, reloadable: true, status: 'built', help: 'Register an additional OCI compatible runtime (name=path)' },
  { flag: 'allow-direct-routing', key: 'allow-direct-routing', type: 'bool', default: false, status: 'built', help: 'Allow remote access to published ports on container IP addresses' },
  { flag: 'authorization-plugin', key: 'authorization-plugins', type: 'list', default: [], reloadable: true, status: 'built', help: 'Authorization plugins to load' },
  { flag: 'bip', key: 'bip', type: 'string', status: 'built', help: 'IPv4 address for the default bridge' },
  { flag: 'bip6', key: 'bip6', type: 'string', status: 'built', help: 'IPv6 address for the default bridge' },
  { flag: 'bridge', short: 'b', key: 'bridge', type: 'string', status: 'built', help: 'Attach containers to a network bridge ("none" disables it)' },
  { flag: 'builder', key: 'builder', type: 'object', fileOnly: true, reloadable: true, status: 'built', help: 'Builder settings (gc)' },
  { flag: 'cdi-spec-dir', key: 'cdi-spec-dirs', type: 'list', default: ['/etc/cdi', '/var/run/cdi'], status: 'built', help: 'CDI specification directories' },
  { flag: 'cgroup-parent', key: 'cgroup-parent', type: 'string', status: 'built', help: 'Parent cgroup for all containers' },
  { flag: 'config-file', key: 'config-file', type: 'string', default: '/etc/engine/daemon.json', flagOnly: true, status: 'built', help: 'Daemon configuration file' },
  { flag: 'supervisor', key: 'supervisor', type: 'string', status: 'built', help: 'Address of the supervisor (containerd) gRPC socket; started automatically when unset' },
  { flag: 'supervisor-namespace', key: 'supervisor-namespace', type: 'string', default: 'engine', status: 'built', help: 'Supervisor namespace for containers and images' },
  { flag: 'supervisor-plugins-namespace', key: 'supervisor-plugins-namespace', type: 'string', default: 'engine-plugins', status: 'built', help: 'Supervisor namespace for plugins' },
  { flag: 'cpu-rt-period', key: 'cpu-rt-period', type: 'int', status: 'built', help: 'CPU real-time period (µs) for the parent cgroup; unsupported on cgroup v2' },
  { flag: 'cpu-rt-runtime', key: 'cpu-rt-runtime', type: 'int', status: 'built', help: 'CPU real-time runtime (µs) for the parent cgroup; unsupported on cgroup v2' },
  { flag: 'cri-supervisor', key: 'cri-supervisor', type: 'bool', default: false, status: 'built', help: "Start the supervisor with its CRI plugin" },
  { flag: 'data-root', key: 'data-root', type: 'string', default: '/var/lib/engine', status: 'built', help: 'Root directory of persistent state' },
  { flag: 'debug', short: 'D', key: 'debug', type: 'bool', default: false, reloadable: true, status: 'built', help: 'Enable debug mode' },
  { flag: 'default-address-pool', key: 'default-address-pools', type: 'address-pools', default: [], status: 'built', help: 'Default address pools for node-local networks (base=CIDR,size=N)' },
  { flag: 'default-cgroupns-mode', key: 'default-cgroupns-mode', type: 'string', default: 'private', status: 'built', help: 'Default cgroup namespace mode (host|private)' },
  { flag: 'default-gateway', key: 'default-gateway', type: 'string', status: 'built', help: 'Default IPv4 gateway of the default bridge' },
  { flag: 'default-gateway-v6', key: 'default-gateway-v6', type: 'string', status: 'built', help: 'Default IPv6 gateway of the default bridge' },
  { flag: 'default-ipc-mode', key: 'default-ipc-mode', type: 'string', default: 'private', status: 'built', help: 'Default IPC mode (shareable|private)' },
  { flag: 'default-network-opt', key: 'default-network-opts', type: 'network-opts', default: {}, status: 'built', help: 'Default driver options for new networks (driver=opt=value)' },
  { flag: 'default-runtime', key: 'default-runtime', type: 'string', default: 'runc', reloadable: true, status: 'built', help: 'Default OCI runtime' },
  { flag: 'default-shm-size', key: 'default-shm-size', type: 'string', default: '64M', status: 'built', help: 'Default shared-memory size' },
  { flag: 'default-ulimit', key: 'default-ulimits', type: 'ulimits', default: {}, status: 'built', help: 'Default ulimits for containers (name=soft[:hard])' },
  { flag: 'dns', key: 'dns', type: 'list', default: [], status: 'built', help: 'DNS servers for containers' },
  { flag: 'dns-opt', key: 'dns-opts', type: 'list', default: [], status: 'built', help: 'DNS options for containers' },
  { flag: 'dns-search', key: 'dns-search', type: 'list', default: [], status: 'built', help: 'DNS search domains for containers' },
  { flag: 'exec-opt', key: 'exec-opts', type: 'list', default: [], status: 'built', help: 'Runtime execution options (native.cgroupdriver=cgroupfs|systemd)' },
  { flag: 'exec-root', key: 'exec-root', type: 'string', default: '/var/run/engine', status: 'built', help: 'Root directory for execution state files' },
  { flag: 'experimental', key: 'experimental', type: 'bool', default: false, status: 'built', help: 'Enable experimental features' },
  { flag: 'feature', key: 'features', type: 'features', default: {}, reloadable: true, status: 'built', help: 'Enable or disable a feature (name[=bool])' },
  { flag: 'fixed-cidr', key: 'fixed-cidr', type: 'string', status: 'built', help: 'IPv4 subnet for fixed IPs on the default bridge' },
  { flag: 'fixed-cidr-v6', key: 'fixed-cidr-v6', type: 'string', status: 'built', help: 'IPv6 subnet for fixed IPs on the default bridge' },
  { flag: 'group', short: 'G', key: 'group', type: 'string', default: 'engine', status: 'built', help: 'Group that owns the unix socket' },
  { flag: 'host', short: 'H', key: 'hosts', type: 'list', default: [], status: 'built', help: 'Daemon socket(s) to listen on' },
  { flag: 'host-gateway-ip', key: 'host-gateway-ips', altKeys: ['host-gateway-ip'], type: 'list', default: [], status: 'built', help: 'Addresses the special host-gateway value resolves to' },
  { flag: 'http-proxy', key: 'proxies.http-proxy', type: 'string', status: 'built', help: 'HTTP proxy URL for outgoing traffic' },
  { flag: 'https-proxy', key: 'proxies.https-proxy', type: 'string', status: 'built', help: 'HTTPS proxy URL for outgoing traffic' },
  { flag: 'icc', key: 'icc', type: 'bool', default: true, status: 'built', help: 'Enable inter-container communication on the default bridge' },
  { flag: 'init', key: 'init', type: 'bool', default: false, status: 'built', help: 'Run an init in containers to forward signals and reap processes' },
  { flag: 'init-path', key: 'init-path', type: 'string', status: 'built', help: 'Path to the init binary (default: tini)' },
  { flag: 'insecure-registry', key: 'insecure-registries', type: 'list', default: [], reloadable: true, status: 'built', help: 'Registries treated as insecure (host:port or CIDR)' },
  { flag: 'ip', key: 'ip', type: 'string', default: '0.0.0.0', status: 'built', help: 'Default host IP for published ports' },
  { flag: 'ip-forward', key: 'ip-forward', type: 'bool', default: true, status: 'built', help: 'Enable IP forwarding' },
  { flag: 'ip-forward-no-drop', key: 'ip-forward-no-drop', type: 'bool', default: false, status: 'built', help: 'Do not set the FORWARD policy to DROP when enabling forwarding' },
  { flag: 'ip-masq', key: 'ip-masq', type: 'bool', default: true, status: 'built', help: 'Enable IP masquerading for the default bridge' },
  { flag: 'ip6tables', key: 'ip6tables', type: 'bool', default: true, status: 'built', help: 'Add ip6tables rules' },
  { flag: 'iptables', key: 'iptables', type: 'bool', default: true, status: 'built', help: 'Add iptables rules' },
  { flag: 'ipv6', key: 'ipv6', type: 'bool', default: false, status: 'built', help: 'Enable IPv6 on the default bridge' },
  { flag: 'label', key: 'labels', type: 'list', default: [], reloadable: true, status: 'built', help: 'Daemon labels (key=value)' },
  { flag: 'live-restore', key: 'live-restore', type: 'bool', default: false, reloadable: true, status: 'built', help: 'Keep containers running while the daemon is down' },
  { flag: 'log-driver', key: 'log-driver', type: 'string', default: 'json-file', status: 'built', help: 'Default log driver for containers' },
  { flag: 'log-format', key: 'log-format', type: 'string', default: 'text', status: 'built', help: 'Format of the daemon log (text|json)' },
  { flag: 'log-level', short: 'l', key: 'log-level', type: 'string', default: 'info', status: 'built', help: 'Daemon log level (debug|info|warn|error|fatal)' },
  { flag: 'log-opt', key: 'log-opts', type: 'map', default: {}, status: 'built', help: 'Default log driver options (key=value)' },
  { flag: 'max-concurrent-downloads', key: 'max-concurrent-downloads', type: 'int', default: 3, reloadable: true, status: 'built', help: 'Concurrent layer downloads per pull' },
  { flag: 'max-concurrent-uploads', key: 'max-concurrent-uploads', type: 'int', default: 5, reloadable: true, status: 'built', help: 'Concurrent layer uploads per push' },
  { flag: 'max-download-attempts', key: 'max-download-attempts', type: 'int', default: 5, reloadable: true, status: 'built', help: 'Download attempts per layer' },
  { flag: 'metrics-addr', key: 'metrics-addr', type: 'string', status: 'built', help: 'Address serving the metrics API (experimental)' },
  { flag: 'mtu', key: 'mtu', type: 'int', default: 1500, status: 'built', help: 'MTU of the default bridge' },
  { flag: 'network-control-plane-mtu', key: 'network-control-plane-mtu', type: 'int', default: 1500, status: 'unsupported', note: 'cluster mode is not supported', help: 'MTU of the network control plane' },
  { flag: 'no-new-privileges', key: 'no-new-privileges', type: 'bool', default: false, status: 'built', help: 'Set no-new-privileges by default for new containers' },
  { flag: 'no-proxy', key: 'proxies.no-proxy', type: 'string', status: 'built', help: 'Hosts that bypass the proxy (comma-separated)' },
  { flag: 'node-generic-resource', key: 'node-generic-resources', type: 'list', default: [], status: 'unsupported', note: 'cluster mode is not supported', help: 'Advertise user-defined resources in cluster mode' },
  { flag: 'pidfile', short: 'p', key: 'pidfile', type: 'string', default: '/var/run/engine.pid', status: 'built', help: 'PID file path' },
  { flag: 'raw-logs', key: 'raw-logs', type: 'bool', default: false, status: 'built', help: 'Full timestamps without ANSI colouring' },
  { flag: 'registry-mirror', key: 'registry-mirrors', type: 'list', default: [], reloadable: true, status: 'built', help: 'Preferred registry mirrors' },
  { flag: 'rootless', key: 'rootless', type: 'bool', default: false, status: 'built', help: 'Rootless mode (inside rootlesskit: use bin/engined-rootless)' },
  { flag: 'seccomp-profile', key: 'seccomp-profile', type: 'string', default: 'builtin', status: 'built', help: 'Seccomp profile path ("builtin" or "unconfined")' },
  { flag: 'selinux-enabled', key: 'selinux-enabled', type: 'bool', default: false, status: 'unsupported', note: 'SELinux is not supported', help: 'Enable SELinux support' },
  { flag: 'shutdown-timeout', key: 'shutdown-timeout', type: 'int', default: 15, reloadable: true, status: 'built', help: 'Default shutdown timeout in seconds' },
  { flag: 'storage-driver', short: 's', key: 'storage-driver', type: 'string', default: 'overlay2', status: 'built', help: 'Storage driver (overlay2|fuse-overlayfs|btrfs|zfs)' },
  { flag: 'storage-opt', key: 'storage-opts', type: 'list', default: [], status: 'built', help: 'Storage driver options' },
  { flag: 'cluster-default-advertise-addr', key: 'cluster-default-advertise-addr', type: 'string', status: 'unsupported', note: 'cluster mode is not supported', help: 'Default address advertised in cluster mode' },
  { flag: 'tls', key: 'tls', type: 'bool', default: false, status: 'built', help: 'Use TLS; implied by --tlsverify' },
  { flag: 'tlscacert', key: 'tlscacert', type: 'string', default: '~/.engine/ca.pem', status: 'built', help: 'Trust certs signed only by this CA' },
  { flag: 'tlscert', key: 'tlscert', type: 'string', default: '~/.engine/cert.pem', status: 'built', help: 'Path to TLS certificate file' },
  { flag: 'tlskey', key: 'tlskey', type: 'string', default: '~/.engine/key.pem', status: 'built', help: 'Path to TLS key file' },
  { flag: 'tlsverify', key: 'tlsverify', type: 'bool', default: false, status: 'built', help: 'Use TLS and verify the remote' },
  { flag: 'userland-proxy', key: 'userland-proxy', type: 'bool', default: true, status: 'built', help: 'Use userland proxy for loopback traffic' },
  { flag: 'userland-proxy-path', key: 'userland-proxy-path', type: 'string', status: 'built', help: 'Path to the userland proxy binary' },
  { flag: 'userns-remap', key: 'userns-remap', type: 'string', status: 'built', help: 'User/Group setting for user namespaces (default, user[:group], uid[:gid])' },
  { flag: 'validate', key: 'validate', type: 'bool', flagOnly: true, status: 'built', help: 'Validate daemon configuration and exit' },
  { flag: 'version', short: 'v', key: 'version', type: 'bool', flagOnly: true, status: 'built', help: 'Print version information and quit' },
  { flag: 'help', key: 'help', type: 'bool', flagOnly: true, status: 'built', help: 'Print usage' },
];

export const OPTION_BY_FLAG = new Map(OPTIONS.map((o) => [o.flag, o]));
export const OPTION_BY_SHORT = new Map(OPTIONS.filter((o) => o.short).map((o) => [o.short!, o]));
export const OPTION_BY_KEY = new Map<string, OptionSpec>();
for (const o of OPTIONS) {
  OPTION_BY_KEY.set(o.key, o);
  for (const k of o.altKeys ?? []) OPTION_BY_KEY.set(k, o);
}

