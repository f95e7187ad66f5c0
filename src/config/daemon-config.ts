// The merged daemon configuration, keyed exactly like daemon.json (so a key in a log line, an error
// message, the file and the code are one and the same word). Produced by load.ts from the defaults,
// the file, the command line and the environment, in that order of precedence (flags win, and a key
// set in both refuses start-up).

export interface UlimitSpec {
  Name: string;
  Soft: number;
  Hard: number;
}
export interface RuntimeSpec {
  path?: string;
  runtimeArgs?: string[];
  runtimeType?: string;
  options?: Record<string, unknown>;
}
export interface AddressPool {
  base: string;
  size: number;
}

export interface DaemonConfig {
  runtimes: Record<string, RuntimeSpec>;
  'allow-direct-routing': boolean;
  'authorization-plugins': string[];
  bip?: string;
  bip6?: string;
  bridge?: string;
  builder?: Record<string, unknown>;
  'cdi-spec-dirs': string[];
  'cgroup-parent'?: string;
  'config-file': string;
  supervisor?: string;
  'supervisor-namespace': string;
  'supervisor-plugins-namespace': string;
  'cpu-rt-period'?: number;
  'cpu-rt-runtime'?: number;
  'cri-supervisor': boolean;
  'data-root': string;
  debug: boolean;
  'default-address-pools': AddressPool[];
  'default-cgroupns-mode': 'host' | 'private';
  'default-gateway'?: string;
  'default-gateway-v6'?: string;
  'default-ipc-mode': 'shareable' | 'private';
  'default-network-opts': Record<string, Record<string, string>>;
  'default-runtime': string;
  'default-shm-size': string;
  'default-ulimits': Record<string, UlimitSpec>;
  dns: string[];
  'dns-opts': string[];
  'dns-search': string[];
  'exec-opts': string[];
  'exec-root': string;
  experimental: boolean;
  features: Record<string, boolean>;
  'fixed-cidr'?: string;
  'fixed-cidr-v6'?: string;
  group: string;
  hosts: string[];
  'host-gateway-ips': string[];
  'proxies.http-proxy'?: string;
  'proxies.https-proxy'?: string;
  'proxies.no-proxy'?: string;
  icc: boolean;
  init: boolean;
  'init-path'?: string;
  'insecure-registries': string[];
  ip: string;
  'ip-forward': boolean;
  'ip-forward-no-drop': boolean;
  'ip-masq': boolean;
  ip6tables: boolean;
  iptables: boolean;
  ipv6: boolean;
  labels: string[];
  'live-restore': boolean;
  'log-driver': string;
  'log-format': 'text' | 'json';
  'log-level': 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  'log-opts': Record<string, string>;
  'max-concurrent-downloads': number;
  'max-concurrent-uploads': number;
  'max-download-attempts': number;
  'metrics-addr'?: string;
  'console-addr'?: string;
  mtu: number;
  'network-control-plane-mtu': number;
  'no-new-privileges': boolean;
  'node-generic-resources': string[];
  pidfile: string;
  'raw-logs': boolean;
  'registry-mirrors': string[];
  rootless: boolean;
  'seccomp-profile': string;
  'selinux-enabled': boolean;
  'shutdown-timeout': number;
  'storage-driver': string;
  'storage-opts': string[];
  'cluster-default-advertise-addr'?: string;
  tls: boolean;
  tlscacert: string;
  tlscert: string;
  tlskey: string;
  tlsverify: boolean;
  'userland-proxy': boolean;
  'userland-proxy-path'?: string;
  'userns-remap'?: string;
}

/** What the loader knows besides the values: which keys came from flags (for reload conflicts). */
export interface LoadedConfig {
  config: DaemonConfig;
  /** Keys set on the command line. */
  flagKeys: Set<string>;
  /** Keys set in the configuration file. */
  fileKeys: Set<string>;
  /** Human-readable warnings: options set but not built, insecure choices, fallbacks. */
  warnings: string[];
  /** DOCKER_MIN_API_VERSION at start-up: the oldest API version served (default 1.24). */
  minApiVersion?: string;
}
